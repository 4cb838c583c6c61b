import Foundation
import GatePassCore

// What the Scan tab asks of the world. Kept apart from `ConsoleServices` so that a screen
// that does not scan never sees these calls, and a test of the Scan tab fakes only these.
// Only plain values cross it, like `ConsoleServices`.

/// The calls the Scan screen makes: gate stats, check-ins, lookups and walk-ins.
///
/// Every call blocks and is made from the console's one UI thread. Reads fail with a
/// `ConsoleError`; mutations never throw: each failure is an outcome the screen shows
/// (a check-in is always a `GateDecision`, a walk-in a `WalkInOutcome`).
///
/// ```swift
/// let screen = ScanScreen(services: clientCoreServices, clock: Date.init, sourceDescription: "Camera /dev/video0",
///                         siteClock: SiteClock(zoneNamed: "Europe/Bucharest")!)
/// ```
public protocol ScanServices: AnyObject {
    /// Today's counters (checked in, awaiting approval, expected, on site), from the server or,
    /// offline, from the cache (then `fromCache` is true and `updatedAt` says how old they are).
    /// - Throws: `.offline` when neither the server nor the cache can answer; `.failed` or
    ///   `.refused` for the rest (a user who may not see gate stats).
    func stats() throws(ConsoleError) -> ConsoleRead<ScanStats>

    /// Checks a pass in through the outbox and says what the gate should show.
    ///
    /// - Parameters:
    ///   - code: a canonical short id (typed, already normalised) or the raw text of a QR
    ///     code (the server parses `GP1:` and URLs, and records text that is no pass as INVALID).
    ///   - confirmApprovalRequest: false on a first scan: a pass that needs approval then
    ///     answers `APPROVAL_REQUIRED` (result of the decision) and nothing is requested; the
    ///     screen asks the guard and calls again with true to request it.
    /// - Returns: the server's decision; `.queuedOffline` when the server cannot be reached
    ///   (the check-in waits in the outbox) or the session has ended (it waits for a login);
    ///   `.denied` for an unknown pass, a refusal, or a check-in that could not even be queued.
    func checkIn(code: String, confirmApprovalRequest: Bool) -> GateDecision

    /// Visitors whose short id, name, phone or email contains `query` (at most 20, newest first).
    /// - Throws: `.refused` for an empty query or one the server refuses; `.offline` when the
    ///   server cannot be reached (lookups are not cached).
    func lookup(_ query: String) throws(ConsoleError) -> [Visitor]

    /// Registers a visitor without a pass, who then waits for an approver (walk-ins always
    /// need approval), through the outbox.
    func walkIn(_ registration: WalkInRegistration) -> WalkInOutcome

    /// When this device's pass cache (what offline decisions are judged against) was last
    /// brought up to date; nil when it has none. Reading it never fails the tab: an unreadable
    /// cache is nil here, and its error is the kiosk's to say.
    func passCacheSyncedAt() -> Date?
}

/// A walk-in as typed at the gate. Empty optional fields are sent as absent.
public struct WalkInRegistration: Sendable, Equatable {
    public var name: String
    public var phone: String?
    public var email: String?
    public var company: String?
    public var purpose: String?
    public var hostName: String?

    public init(name: String, phone: String? = nil, email: String? = nil, company: String? = nil, purpose: String? = nil,
                hostName: String? = nil) {
        self.name = name; self.phone = phone; self.email = email; self.company = company
        self.purpose = purpose; self.hostName = hostName
    }

    /// The fields of a walk-in, in the order the form shows them.
    public enum Field: Int, Sendable, Equatable, CaseIterable {
        case name, phone, email, company, purpose, hostName

        public var label: String {
            switch self {
            case .name: "Name"
            case .phone: "Phone"
            case .email: "Email"
            case .company: "Company"
            case .purpose: "Purpose"
            case .hostName: "Host"
            }
        }

        /// The longest value the server takes (api.md walk-in; the server's field rules).
        public var limit: Int {
            switch self {
            case .name, .company, .hostName: 200
            case .phone: 32
            case .email: 254
            case .purpose: 500
            }
        }
    }

    /// A walk-in that breaks one of the server's field rules, said for a person.
    public struct Problem: Error, Sendable, Equatable {
        public var field: Field
        public var message: String
    }

    /// The registration with every value trimmed and empty optional values dropped, or the
    /// first field that the server would refuse. The rules are the server's (name required,
    /// lengths, a phone of digits and `+ - ( ) .`, an e-mail address's shape), checked here so
    /// that a guard hears about a typo at once, offline too, instead of after a queued walk-in
    /// is refused.
    public func validated() throws(Problem) -> WalkInRegistration {
        func clean(_ value: String?, _ field: Field) throws(Problem) -> String? {
            let trimmed = (value ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.isEmpty { return nil }
            guard trimmed.count <= field.limit else {
                throw Problem(field: field, message: "\(field.label) takes at most \(field.limit) characters; it has \(trimmed.count).")
            }
            guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw Problem(field: field, message: "\(field.label) must not contain control characters.")
            }
            return trimmed
        }
        guard let name = try clean(name, .name) else {
            throw Problem(field: .name, message: "Type the visitor's name; it is the one field a walk-in needs.")
        }
        let phone = try clean(phone, .phone)
        if let phone {
            let allowed = Set("0123456789+-() .")
            guard phone.allSatisfy({ allowed.contains($0) }), phone.filter(\.isNumber).count >= 3 else {
                throw Problem(field: .phone, message: "Phone may hold digits, spaces and + - ( ) . only (at least 3 digits), like +40 721 000 000.")
            }
        }
        let email = try clean(email, .email)
        if let email {
            let parts = email.split(separator: "@", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, parts[0].count <= 64, parts[1].contains("."),
                  !parts[1].hasPrefix("."), !parts[1].hasSuffix("."), !email.contains(where: \.isWhitespace)
            else {
                throw Problem(field: .email, message: "Email must be an address like ana@example.com.")
            }
        }
        return WalkInRegistration(name: name, phone: phone, email: email?.lowercased(), company: try clean(company, .company),
                                  purpose: try clean(purpose, .purpose), hostName: try clean(hostName, .hostName))
    }
}

/// What became of a walk-in registration.
public enum WalkInOutcome: Sendable, Equatable {
    /// The server registered the visitor (status AWAITING_APPROVAL).
    case applied(Visitor)
    /// The server could not be reached: the walk-in waits in the outbox.
    case queued
    /// The server refused it for good (a field it does not accept…), in words for a person.
    case refused(String)
    /// The session is over: the walk-in stays queued until someone logs in again.
    case needsLogin(String)
}
