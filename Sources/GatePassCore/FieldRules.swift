import Foundation

/// A field that breaks its rule; the message names the field and says what it must be.
public struct FieldRuleViolation: Error, Sendable, Equatable, CustomStringConvertible {
    public var field: String
    public var message: String
    public var description: String { message }

    public init(field: String, message: String) { self.field = field; self.message = message }
}

/// The rules of the text fields the API accepts, in one place: the server enforces them and
/// the console's forms check them as the user types, so both say the same thing.
///
/// Text is trimmed, limited in characters and in bytes, and free of control characters;
/// empty text counts as absent.
public enum FieldRules {
    /// Every character limit is also a byte limit of this many UTF-8 bytes per character.
    public static let bytesPerCharacter = 4

    /// The limits of a visitor's fields (create and edit bodies, walk-ins).
    public static let nameLength = 200
    public static let purposeLength = 500
    public static let emailLength = 254
    public static let phoneLength = 32

    public static func text(_ value: String?, _ name: String, maxLength: Int = 200,
                            required: Bool = false) throws(FieldRuleViolation) -> String? {
        let trimmed = value?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        if trimmed.isEmpty {
            if required { throw FieldRuleViolation(field: name, message: "\(name) is required and must not be empty") }
            return nil
        }
        guard trimmed.count <= maxLength else {
            throw FieldRuleViolation(field: name, message: "\(name) must be at most \(maxLength) characters")
        }
        // Characters are grapheme clusters: one can hold any number of combining marks. Four
        // bytes per character is room for any script (李 is 3), never for a stack of marks.
        let maxBytes = maxLength * Self.bytesPerCharacter
        guard trimmed.utf8.count <= maxBytes else {
            throw FieldRuleViolation(field: name, message:
                "\(name) must be at most \(maxBytes) bytes of UTF-8 (\(maxLength) characters of up to 4 bytes)")
        }
        guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw FieldRuleViolation(field: name, message: "\(name) must not contain control characters")
        }
        return trimmed
    }

    /// An email address, lowercased.
    public static func email(_ value: String?, _ name: String = "email", required: Bool = false) throws(FieldRuleViolation) -> String? {
        guard let email = try text(value, name, maxLength: emailLength, required: required) else { return nil }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !parts[1].hasPrefix("."),
              !parts[1].hasSuffix("."), !email.contains(where: { $0.isWhitespace }), parts[0].count <= 64,
              parts[0].utf8.count <= 64 * bytesPerCharacter,
              // Mail headers and SMTP commands carry the address as it is: nothing that could end
              // or split them (an apostrophe, as in o'brien@, is ordinary address text).
              !email.contains(where: { "<>\",;:\\()[]".contains($0) })
        else { throw FieldRuleViolation(field: name, message: "\(name) must be an email address like ana@example.com") }
        return email.lowercased()
    }

    /// An id as a query or a path names it (`entityId=`, `actor=`): 1 to 64 printable ASCII
    /// characters, no spaces.
    public static func identifier(_ value: String, _ name: String) throws(FieldRuleViolation) -> String {
        guard (1...64).contains(value.utf8.count), value.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw FieldRuleViolation(field: name, message: "\(name) must be an id (1 to 64 printable characters, no spaces)")
        }
        return value
    }

    public static func phone(_ value: String?, _ name: String = "phone") throws(FieldRuleViolation) -> String? {
        guard let phone = try text(value, name, maxLength: phoneLength) else { return nil }
        let allowed = Set("0123456789+-() .")
        guard phone.allSatisfy({ allowed.contains($0) }), phone.filter(\.isNumber).count >= 3 else {
            throw FieldRuleViolation(field: name, message: "\(name) must be a phone number: digits, spaces and + - ( ) . only")
        }
        return phone
    }
}
