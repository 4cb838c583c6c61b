import Foundation
import Testing
@testable import GatePassCore

/// The blocklist's matching (api.md "Blocklist") over a table of entries × visitors: email
/// exactly in any case, phone by its digits, name (and company when the entry has one)
/// ignoring case, accents, spacing and invisible characters; expired entries match nobody.
/// Expected answers are written by hand, not computed with the code under test.
@Suite struct BlocklistMatchingTests {
    /// 2026-11-29T12:00:00Z
    static let now = Fixture.day.addingTimeInterval(12 * 3600)

    static func entry(name: String? = nil, email: String? = nil, phone: String? = nil, company: String? = nil,
                      expiresAt: Date? = nil) -> BlocklistEntry {
        BlocklistEntry(id: "entry", name: name, email: email, phone: phone, company: company, reason: "banned",
                       expiresAt: expiresAt, createdAt: Fixture.createdAt, createdBy: "owner-1")
    }

    static func visitor(_ name: String, email: String? = nil, phone: String? = nil, company: String? = nil) -> Visitor {
        var visitor = Fixture.visitor(status: .expected, requiresApproval: false)
        visitor.name = name
        visitor.email = email
        visitor.phone = phone
        visitor.company = company
        return visitor
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var why: String
        var entry: BlocklistEntry
        var visitor: Visitor
        var matches: Bool
        var testDescription: String { why }
    }

    static let cases: [Case] = [
        // Names: case, accents, spacing, invisible characters, compatibility forms.
        Case(why: "the same name", entry: entry(name: "Ana Pop"), visitor: visitor("Ana Pop"), matches: true),
        Case(why: "another case", entry: entry(name: "Ana Pop"), visitor: visitor("ANA pop"), matches: true),
        Case(why: "accents on the visitor", entry: entry(name: "Stefan Dobrescu"), visitor: visitor("Ștefan Dobrescu"), matches: true),
        Case(why: "accents on the entry", entry: entry(name: "José Müller"), visitor: visitor("Jose Muller"), matches: true),
        Case(why: "decomposed accents (e + U+0301)", entry: entry(name: "Jos\u{00E9}"), visitor: visitor("Jose\u{0301}"), matches: true),
        Case(why: "double and leading spaces", entry: entry(name: "Ana Pop"), visitor: visitor("  Ana   Pop "), matches: true),
        Case(why: "no space at all", entry: entry(name: "Ana Maria Pop"), visitor: visitor("AnaMaria Pop"), matches: true),
        Case(why: "a tab and a no-break space", entry: entry(name: "Ana Pop"), visitor: visitor("Ana\t\u{00A0}Pop"), matches: true),
        Case(why: "a zero-width space inside", entry: entry(name: "Ana Pop"), visitor: visitor("A\u{200B}na Pop"), matches: true),
        Case(why: "a soft hyphen inside", entry: entry(name: "Ana Pop"), visitor: visitor("An\u{00AD}a Pop"), matches: true),
        Case(why: "full-width letters", entry: entry(name: "Ana Pop"), visitor: visitor("\u{FF21}na Pop"), matches: true),
        Case(why: "sharp s and ss", entry: entry(name: "Hans Strauss"), visitor: visitor("Hans Strauß"), matches: true),
        Case(why: "Greek final sigma", entry: entry(name: "ΟΔΥΣΣΕΥΣ"), visitor: visitor("οδυσσευς"), matches: true),
        Case(why: "Turkish dotted capital I", entry: entry(name: "Ilkay"), visitor: visitor("İlkay"), matches: true),
        Case(why: "another name", entry: entry(name: "Ana Pop"), visitor: visitor("Ana Popescu"), matches: false),
        Case(why: "a name inside a longer one", entry: entry(name: "Pop"), visitor: visitor("Ana Pop"), matches: false),
        Case(why: "a hyphen is not a space", entry: entry(name: "Ana Maria"), visitor: visitor("Ana-Maria"), matches: false),
        // The company narrows a name.
        Case(why: "name and company", entry: entry(name: "Ana Pop", company: "Acme SRL"),
             visitor: visitor("Ana Pop", company: "ACME  srl"), matches: true),
        Case(why: "name, another company", entry: entry(name: "Ana Pop", company: "Acme"),
             visitor: visitor("Ana Pop", company: "Globex"), matches: false),
        Case(why: "name, no company given", entry: entry(name: "Ana Pop", company: "Acme"),
             visitor: visitor("Ana Pop"), matches: false),
        Case(why: "an entry without company, any company", entry: entry(name: "Ana Pop"),
             visitor: visitor("Ana Pop", company: "Globex"), matches: true),
        Case(why: "the company alone does not match", entry: entry(name: "Ion Ionescu", company: "Acme"),
             visitor: visitor("Ana Pop", company: "Acme"), matches: false),
        // Email: exact but for case.
        Case(why: "the same email", entry: entry(email: "ana@example.com"), visitor: visitor("X", email: "ana@example.com"), matches: true),
        Case(why: "email in another case", entry: entry(email: "Ana@Example.COM"), visitor: visitor("X", email: "ana@example.com"), matches: true),
        Case(why: "email with a plus tag is another", entry: entry(email: "ana@example.com"),
             visitor: visitor("X", email: "ana+gate@example.com"), matches: false),
        Case(why: "email with accents is another", entry: entry(email: "ana@example.com"),
             visitor: visitor("X", email: "ána@example.com"), matches: false),
        Case(why: "no email on the visitor", entry: entry(email: "ana@example.com"), visitor: visitor("X"), matches: false),
        // Phone: digits alone.
        Case(why: "the same phone", entry: entry(phone: "+40712345678"), visitor: visitor("X", phone: "+40712345678"), matches: true),
        Case(why: "spaces, dashes, parentheses, dots", entry: entry(phone: "+40 (712) 345-678"),
             visitor: visitor("X", phone: "40.712.345.678"), matches: true),
        Case(why: "a leading 00 is other digits", entry: entry(phone: "+40712345678"),
             visitor: visitor("X", phone: "0040712345678"), matches: false),
        Case(why: "another number", entry: entry(phone: "+40712345678"), visitor: visitor("X", phone: "+40712345679"), matches: false),
        Case(why: "no phone on the visitor", entry: entry(phone: "+40712345678"), visitor: visitor("X"), matches: false),
        // Any one identifying field is enough.
        Case(why: "email matches, name does not", entry: entry(name: "Ion Ionescu", email: "ana@example.com"),
             visitor: visitor("Ana Pop", email: "ana@example.com"), matches: true),
        Case(why: "phone matches, email does not", entry: entry(email: "ion@example.com", phone: "0712 345 678"),
             visitor: visitor("X", email: "ana@example.com", phone: "0712345678"), matches: true),
        // Expiry.
        Case(why: "expires later", entry: entry(name: "Ana Pop", expiresAt: now.addingTimeInterval(1)),
             visitor: visitor("Ana Pop"), matches: true),
        Case(why: "expires at this instant", entry: entry(name: "Ana Pop", expiresAt: now), visitor: visitor("Ana Pop"), matches: false),
        Case(why: "expired yesterday", entry: entry(email: "ana@example.com", expiresAt: now.addingTimeInterval(-86_400)),
             visitor: visitor("X", email: "ana@example.com"), matches: false),
    ]

    @Test(arguments: cases)
    func matching(_ row: Case) {
        #expect(row.entry.matches(row.visitor, at: Self.now) == row.matches)
        // Keys agree with the judgement: whatever matches shares a key the store looks up by.
        if row.matches {
            let mine = row.entry.keys, theirs = BlocklistKeys(row.visitor)
            #expect((mine.name != nil && mine.name == theirs.name) || (mine.email != nil && mine.email == theirs.email)
                    || (mine.phone != nil && mine.phone == theirs.phone))
        }
    }

    @Test func foldedKeys() {
        #expect(BlocklistKeys.folded("  Ștefan  Dobrescu ") == "stefandobrescu")
        #expect(BlocklistKeys.folded("\u{0301}\u{200B} ") == nil)
        #expect(BlocklistKeys.folded("") == nil)
        #expect(BlocklistKeys.digits("+40 (712) 345-678") == "40712345678")
        // Digits of other scripts are not phone digits (FieldRules takes ASCII phones only).
        #expect(BlocklistKeys.digits("٠١٢") == nil)
        #expect(BlocklistKeys.email(" Ana@Example.COM ") == "ana@example.com")
    }

    @Test func firstMatchIsTheFirstInOrder() {
        let older = BlocklistEntry(id: "older", name: "Ana Pop", email: nil, phone: nil, company: nil, reason: "a",
                                   expiresAt: nil, createdAt: Fixture.createdAt, createdBy: "owner-1")
        let expired = BlocklistEntry(id: "expired", name: "Ana Pop", email: nil, phone: nil, company: nil, reason: "b",
                                     expiresAt: Self.now.addingTimeInterval(-1), createdAt: Fixture.createdAt, createdBy: "owner-1")
        var newer = older
        newer.id = "newer"
        let visitor = Self.visitor("Ana Pop")
        #expect(Blocklist.firstMatch([expired, older, newer], for: visitor, at: Self.now)?.id == "older")
        #expect(Blocklist.firstMatch([expired], for: visitor, at: Self.now) == nil)
        #expect(Blocklist.firstMatch([], for: visitor, at: Self.now) == nil)
    }

    // MARK: - The check-in, walk-in and approval decisions

    @Test func expiredEntryDoesNotBlockACheckIn() {
        let visitor = Fixture.visitor(status: .expected, requiresApproval: false)
        let expired = Self.entry(email: "ana@example.com", expiresAt: Fixture.validFrom)
        let decision = CheckIn.decide(visitor: visitor, receivedAt: Self.now, request: CheckInRequest(),
                                      checkpointId: Fixture.gate, blocklist: [expired])
        #expect(decision.result == .checkedIn)
        #expect(decision.blockingEntry == nil)
    }

    @Test func entryOfAnotherCompanyDoesNotBlockACheckIn() {
        let visitor = Fixture.visitor(status: .approved, requiresApproval: true)
        let decision = CheckIn.decide(visitor: visitor, receivedAt: Self.now, request: CheckInRequest(),
                                      checkpointId: Fixture.gate, blocklist: [Self.entry(name: "ana pop", company: "Globex")])
        #expect(decision.result == .checkedIn)
    }

    @Test func blockedWalkInIsRejectedWithoutANote() {
        var walkIn = Self.visitor("Ana Pop", phone: "0712 345 678")
        walkIn.status = .awaitingApproval
        walkIn.walkIn = true
        walkIn.approvalRequestedAt = Self.now
        walkIn.decisionNote = nil
        walkIn.decidedAt = nil
        walkIn.decidedBy = nil
        let entry = Self.entry(phone: "0712-345-678")
        let blocked = WalkIn.decide(walkIn, blocklist: [entry], at: Self.now)
        #expect(blocked.result == .blocked)
        #expect(blocked.blockingEntry == entry)
        #expect(blocked.visitor.status == .rejected)
        #expect(blocked.visitor.decidedAt == Self.now)
        #expect(blocked.visitor.decidedBy == nil)
        #expect(blocked.visitor.decisionNote == nil)
        let admitted = WalkIn.decide(walkIn, blocklist: [Self.entry(phone: "0712 345 679")], at: Self.now)
        #expect(admitted.result == .awaitingApproval)
        #expect(admitted.visitor == walkIn)
        #expect(admitted.blockingEntry == nil)
    }

    @Test func approvalOfABlockedVisitorIsAConflictButRejectionIsNot() throws {
        let visitor = Fixture.visitor(status: .awaitingApproval, requiresApproval: true)
        let entry = Self.entry(name: "Ana  Pöp")
        let error = #expect(throws: DecisionConflict.self) {
            try ApprovalDecision.approve.apply(to: visitor, by: "approver-1", note: nil, at: Self.now, blocklist: [entry])
        }
        #expect(error == DecisionConflict(status: .awaitingApproval, action: "approve", blocked: true))
        #expect(error?.description == "cannot approve: the visitor matches the site's blocklist")
        #expect(error?.description.contains("banned") == false)
        let rejected = try ApprovalDecision.reject.apply(to: visitor, by: "approver-1", note: nil, at: Self.now, blocklist: [entry])
        #expect(rejected.status == .rejected)
        let expired = Self.entry(name: "Ana Pop", expiresAt: Self.now)
        #expect(try ApprovalDecision.approve.apply(to: visitor, by: "approver-1", note: nil, at: Self.now, blocklist: [expired]).status == .approved)
    }

    // MARK: - Validation of a new entry

    @Test func validationTrimsAndLowercases() throws {
        let checked = try NewBlocklistEntry(name: "  Ana Pop ", email: " Ana@Example.com ", phone: "+40 712 345 678",
                                            company: " Acme ", reason: "  banned  ",
                                            expiresAt: Timestamp(Self.now.addingTimeInterval(60))).validated(now: Self.now)
        #expect(checked == NewBlocklistEntry(name: "Ana Pop", email: "ana@example.com", phone: "+40 712 345 678", company: "Acme",
                                             reason: "banned", expiresAt: Timestamp(Self.now.addingTimeInterval(60))))
    }

    @Test(arguments: [
        (NewBlocklistEntry(reason: "r"), "name", "give at least one of name, email and phone"),
        (NewBlocklistEntry(company: "Acme", reason: "r"), "name", "give at least one of name, email and phone"),
        (NewBlocklistEntry(email: "a@b.co", company: "Acme", reason: "r"), "company", "company narrows a name: give name with it"),
        (NewBlocklistEntry(name: "Ana", reason: "  "), "reason", "reason is required and must not be empty"),
        (NewBlocklistEntry(name: "\u{0301}\u{0301}", reason: "r"), "name", "name must hold a letter or digit once accents and spaces are ignored"),
        (NewBlocklistEntry(name: "Ana", company: "\u{0301}", reason: "r"), "company", "company must hold a letter or digit once accents and spaces are ignored"),
        (NewBlocklistEntry(name: String(repeating: "a", count: 201), reason: "r"), "name", "name must be at most 200 characters"),
        (NewBlocklistEntry(name: "Ana", reason: String(repeating: "r", count: 501)), "reason", "reason must be at most 500 characters"),
        (NewBlocklistEntry(name: "Ana\u{1B}[2J", reason: "r"), "name", "name must not contain control characters"),
        (NewBlocklistEntry(email: "not-an-email", reason: "r"), "email", "email must be an email address like ana@example.com"),
        (NewBlocklistEntry(phone: "call me", reason: "r"), "phone", "phone must be a phone number: digits, spaces and + - ( ) . only"),
        (NewBlocklistEntry(name: "Ana", reason: "r", expiresAt: Timestamp(BlocklistMatchingTests.now)), "expiresAt", "expiresAt must be in the future"),
    ])
    func validationRefuses(_ entry: NewBlocklistEntry, field: String, message: String) {
        let error = #expect(throws: FieldRuleViolation.self) { try entry.validated(now: Self.now) }
        #expect(error?.field == field)
        #expect(error?.message == message)
    }
}
