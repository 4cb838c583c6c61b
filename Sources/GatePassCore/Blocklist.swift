import Foundation

/// One entry of an organization's blocklist (api.md "Blocklist"): who must not enter, and
/// why. The reason is for the site's managers only: no answer to a gate carries it.
public struct BlocklistEntry: Codable, Sendable, Equatable {
    public var id: String
    public var name: String?
    public var email: String?
    public var phone: String?
    /// Narrows a name match: with a company, the name matches only visitors of that company.
    public var company: String?
    public var reason: String
    /// After this the entry no longer matches; nil = never expires.
    public var expiresAt: Date?
    public var createdAt: Date
    /// The id of the user who added it.
    public var createdBy: String

    public init(id: String, name: String?, email: String?, phone: String?, company: String?, reason: String,
                expiresAt: Date?, createdAt: Date, createdBy: String) {
        self.id = id; self.name = name; self.email = email; self.phone = phone; self.company = company
        self.reason = reason; self.expiresAt = expiresAt; self.createdAt = createdAt; self.createdBy = createdBy
    }

    enum CodingKeys: String, CodingKey { case id, name, email, phone, company, reason, expiresAt, createdAt, createdBy }

    // api.md: absent values are null, every key written.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(name, forKey: .name)
        try c.encode(email, forKey: .email)
        try c.encode(phone, forKey: .phone)
        try c.encode(company, forKey: .company)
        try c.encode(reason, forKey: .reason)
        try c.encode(expiresAt.map(Timestamp.init), forKey: .expiresAt)
        try c.encode(Timestamp(createdAt), forKey: .createdAt)
        try c.encode(createdBy, forKey: .createdBy)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        name = try c.decodeIfPresent(String.self, forKey: .name)
        email = try c.decodeIfPresent(String.self, forKey: .email)
        phone = try c.decodeIfPresent(String.self, forKey: .phone)
        company = try c.decodeIfPresent(String.self, forKey: .company)
        reason = try c.decode(String.self, forKey: .reason)
        expiresAt = try c.decodeIfPresent(Timestamp.self, forKey: .expiresAt)?.date
        createdAt = try c.decode(Timestamp.self, forKey: .createdAt).date
        createdBy = try c.decode(String.self, forKey: .createdBy)
    }

    /// The keys the entry is found by (see `BlocklistKeys`).
    public var keys: BlocklistKeys { BlocklistKeys(name: name, email: email, phone: phone) }

    /// Whether the entry still applies at `now`: an entry expiring at `now` no longer does.
    public func isActive(at now: Date) -> Bool { expiresAt.map { now < $0 } ?? true }

    /// Whether the entry matches `visitor` at `now` (api.md "Blocklist"): any one of its
    /// identifying fields is enough — the email exactly (any case), the phone by its digits,
    /// or the name (and, when the entry has one, the company too) ignoring case, accents,
    /// spacing and invisible characters. An expired entry matches nobody.
    public func matches(_ visitor: Visitor, at now: Date) -> Bool {
        guard isActive(at: now) else { return false }
        let mine = keys, theirs = BlocklistKeys(visitor)
        if let email = mine.email, email == theirs.email { return true }
        if let phone = mine.phone, phone == theirs.phone { return true }
        if let name = mine.name, name == theirs.name {
            guard let company = BlocklistKeys.folded(company) else { return true }
            return company == BlocklistKeys.folded(visitor.company)
        }
        return false
    }
}

/// The normalised forms a blocklist entry and a visitor are compared by. The store keeps an
/// entry's keys beside it and looks a visitor's up by them (an index probe per check-in, not
/// a scan of the list); the domain then judges each entry found (`BlocklistEntry.matches`).
/// A key that normalises to nothing is nil: an empty key never matches.
public struct BlocklistKeys: Sendable, Equatable {
    public var name: String?
    public var email: String?
    public var phone: String?

    public init(name: String?, email: String?, phone: String?) {
        self.name = Self.folded(name)
        self.email = Self.email(email)
        self.phone = Self.digits(phone)
    }

    public init(_ visitor: Visitor) { self.init(name: visitor.name, email: visitor.email, phone: visitor.phone) }

    /// An email compared exactly but for case.
    public static func email(_ value: String?) -> String? {
        guard let value else { return nil }
        // ASCII (nearly every address): the same trim and case as below, without Foundation's
        // character sets — every check-in folds its visitor's keys on the writer's thread.
        if value.utf8.allSatisfy({ $0 < 0x80 }) {
            let isSpace: (UInt8) -> Bool = { $0 == 0x20 || (0x09...0x0D).contains($0) }
            let bytes = value.utf8.drop(while: isSpace)
            let trimmed = bytes.prefix(upTo: bytes.lastIndex(where: { !isSpace($0) }).map(bytes.index(after:)) ?? bytes.startIndex)
            return trimmed.isEmpty ? nil : String(Substring(trimmed)).lowercased()
        }
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        return trimmed.isEmpty ? nil : trimmed
    }

    /// A phone number as its ASCII digits alone: `+40 (721) 000-111` is `40721000111`.
    public static func digits(_ value: String?) -> String? {
        let digits = String(value?.unicodeScalars.filter { $0.isASCII && $0.properties.numericType == .decimal }.map(Character.init) ?? [])
        return digits.isEmpty ? nil : digits
    }

    /// Text folded for a comparison that ignores case, accents, spacing and invisible
    /// characters: compatibility-decomposed (so `ﬁ` is `fi` and a full-width `Ａ` is `A`), combining
    /// marks dropped (`é` is `e`), case folded (`ß` is `ss`), and white space and invisible
    /// characters (zero-width spaces, joiners, soft hyphens) removed — so no one slips past an
    /// entry by typing their name with an accent, a double space or a hidden character.
    public static func folded(_ value: String?) -> String? {
        guard let value else { return nil }
        // ASCII: decomposition changes nothing, the only characters dropped are the controls
        // and the white space, and case folding is lower-casing (held equal to the general
        // path below by the tests).
        if value.utf8.allSatisfy({ $0 < 0x80 }) {
            let kept = value.utf8.filter { $0 > 0x20 && $0 != 0x7F }
            return kept.isEmpty ? nil : String(decoding: kept, as: UTF8.self).lowercased()
        }
        return unicodeFolded(value)
    }

    /// `folded` for any text: the general path (internal for the tests).
    static func unicodeFolded(_ value: String) -> String? {
        func stripped(_ text: String) -> String {
            var scalars = String.UnicodeScalarView()
            for scalar in text.decomposedStringWithCompatibilityMapping.unicodeScalars {
                let properties = scalar.properties
                switch properties.generalCategory {
                case .nonspacingMark, .spacingMark, .enclosingMark, .format, .control, .spaceSeparator,
                     .lineSeparator, .paragraphSeparator:
                    continue
                default:
                    if properties.isWhitespace || properties.isDefaultIgnorableCodePoint { continue }
                    scalars.append(scalar)
                }
            }
            return String(scalars)
        }
        // Upper then lower case is full case folding for every script that has case (`ß` →
        // `SS` → `ss`, final `ς` → `Σ` → `σ`); stripping again removes marks the mapping made.
        let folded = stripped(stripped(value).uppercased().lowercased())
        return folded.isEmpty ? nil : folded
    }
}

/// The organization's blocklist as the domain judges it: given the entries the store found
/// for a visitor's keys, which one (if any) blocks them.
public enum Blocklist {
    /// The first entry (oldest first, as given) that matches `visitor` at `now`.
    public static func firstMatch(_ entries: [BlocklistEntry], for visitor: Visitor, at now: Date) -> BlocklistEntry? {
        entries.first { $0.matches(visitor, at: now) }
    }

    /// Whether registering `new` is judged against the blocklist (api.md "Blocklist"): a new
    /// visitor always; an edit of `old` only when it changes a field an entry matches on (name,
    /// email, phone, company), so a visitor registered with `confirmBlocked` is not asked again
    /// for every later edit.
    public static func judgesRegistration(from old: Visitor?, to new: Visitor) -> Bool {
        guard let old else { return true }
        return old.name != new.name || old.email != new.email || old.phone != new.phone || old.company != new.company
    }
}

/// The body of `POST /api/blocklist`, as a client sends it.
public struct NewBlocklistEntry: Codable, Sendable, Equatable {
    public var name: String?
    public var email: String?
    public var phone: String?
    public var company: String?
    public var reason: String
    public var expiresAt: Timestamp?

    public init(name: String? = nil, email: String? = nil, phone: String? = nil, company: String? = nil, reason: String,
                expiresAt: Timestamp? = nil) {
        self.name = name; self.email = email; self.phone = phone; self.company = company
        self.reason = reason; self.expiresAt = expiresAt
    }

    /// The limit of a reason, in characters.
    public static let reasonLength = 500

    /// The entry's fields checked by the rules the server applies (`FieldRules`), trimmed and
    /// the email lowercased, so a form, the command line and the server refuse the same input.
    /// - Throws: the first field that breaks its rule, or `name` when none of name, email and
    ///   phone is given, or one is given that could never match anyone.
    public func validated(now: Date) throws(FieldRuleViolation) -> NewBlocklistEntry {
        let checked = NewBlocklistEntry(
            name: try FieldRules.text(name, "name", maxLength: FieldRules.nameLength),
            email: try FieldRules.email(email), phone: try FieldRules.phone(phone),
            company: try FieldRules.text(company, "company", maxLength: FieldRules.nameLength),
            reason: try FieldRules.text(reason, "reason", maxLength: Self.reasonLength, required: true)!,
            expiresAt: expiresAt)
        guard checked.name != nil || checked.email != nil || checked.phone != nil else {
            throw FieldRuleViolation(field: "name", message: "give at least one of name, email and phone")
        }
        if checked.name != nil, BlocklistKeys.folded(checked.name) == nil {
            throw FieldRuleViolation(field: "name", message: "name must hold a letter or digit once accents and spaces are ignored")
        }
        if checked.company != nil, BlocklistKeys.folded(checked.company) == nil {
            throw FieldRuleViolation(field: "company", message: "company must hold a letter or digit once accents and spaces are ignored")
        }
        // A company alone would block nobody (it only narrows a name): refused, not kept unused.
        if checked.company != nil, checked.name == nil {
            throw FieldRuleViolation(field: "company", message: "company narrows a name: give name with it")
        }
        if let expiresAt = checked.expiresAt, expiresAt.date <= now {
            throw FieldRuleViolation(field: "expiresAt", message: "expiresAt must be in the future")
        }
        return checked
    }
}
