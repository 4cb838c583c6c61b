import Foundation
import GatePassCore

// What the Visitors tab, the On site tab and a visitor's management keys ask of the world
// (OWNER/ADMIN). The shell backs it with the client core (`ClientCoreServices`, in
// GatePassConsoleServices); tests back it with a fake. Only plain values cross it: the QR
// code arrives as a matrix of modules, files are written by the services, never by a screen.

/// Which visitors the Visitors tab lists: those whose validity overlaps `fromDay` or later.
public struct VisitorListQuery: Sendable, Equatable, Hashable {
    /// The first day wanted, `YYYY-MM-DD` in the site's time zone (today).
    public var fromDay: String
    /// Only visitors with this status; nil: every status.
    public var status: VisitorStatus?
    /// Matches name, email, phone, company or short id (the server's `q`); nil: no search.
    public var search: String?

    public init(fromDay: String, status: VisitorStatus? = nil, search: String? = nil) {
        self.fromDay = fromDay; self.status = status; self.search = search
    }
}

/// A visitor as the registration form sends it. Empty optional values are sent as absent;
/// an absent validity is the server's default (today, the whole day, site-local).
public struct VisitorRegistration: Sendable, Equatable {
    public var name: String
    public var email: String?
    public var phone: String?
    public var company: String?
    public var purpose: String?
    public var hostName: String?
    public var hostEmail: String?
    public var approverId: String?
    public var requiresApproval: Bool
    public var validFrom: Date?
    public var validUntil: Date?
    /// Queue the invitation mail with the creation (needs `email`).
    public var invite: Bool
    /// Register them even though they match the blocklist: set when the person confirmed
    /// after the server's `BLOCKLIST_MATCH`.
    public var confirmBlocked: Bool

    public init(name: String, email: String? = nil, phone: String? = nil, company: String? = nil, purpose: String? = nil,
                hostName: String? = nil, hostEmail: String? = nil, approverId: String? = nil, requiresApproval: Bool = false,
                validFrom: Date? = nil, validUntil: Date? = nil, invite: Bool = false, confirmBlocked: Bool = false) {
        self.name = name; self.email = email; self.phone = phone; self.company = company; self.purpose = purpose
        self.hostName = hostName; self.hostEmail = hostEmail; self.approverId = approverId
        self.requiresApproval = requiresApproval; self.validFrom = validFrom; self.validUntil = validUntil; self.invite = invite
        self.confirmBlocked = confirmBlocked
    }
}

/// A user who may be chosen as a visitor's approver.
public struct ApproverChoice: Sendable, Equatable {
    public var id: String
    public var name: String
    public var email: String

    public init(id: String, name: String, email: String) { self.id = id; self.name = name; self.email = email }
}

/// A pass's QR code as modules, without the quiet zone: what the pass view draws.
public struct PassCode: Sendable, Equatable {
    /// The text the code carries: the signed GP2 text the server's pass carries.
    public var text: String
    /// Modules per side.
    public var size: Int
    /// Row-major, true = dark.
    public var modules: [Bool]
    /// Smaller codes of the same pass, for a terminal the code does not fit: its unsigned
    /// `GP1:` form (accepted online, and by kiosks whose cache holds the pass).
    public var smaller: [PassCode]

    public init(text: String, size: Int, modules: [Bool], smaller: [PassCode] = []) {
        precondition(modules.count == size * size, "a QR code is square")
        self.text = text; self.size = size; self.modules = modules; self.smaller = smaller
    }

    public func isDark(x: Int, y: Int) -> Bool { modules[y * size + x] }
}

/// The calls of the Visitors and On site tabs and of a visitor's management keys.
///
/// Every call blocks and is made from the console's one UI thread. Failures are
/// `ConsoleError`s, already sorted into what a person can act on.
public protocol VisitorsServices: AnyObject {
    /// The site (name and time zone, which defines "today"), from the server or the cache.
    func site() throws(ConsoleError) -> ConsoleRead<Organization>

    /// The visitors matching `query`, earliest validity first as the server lists them,
    /// one page (`hasMore` when there are more). Offline, the cached answer to the same query.
    func visitors(_ query: VisitorListQuery) throws(ConsoleError) -> ConsoleRead<[Visitor]>

    /// The users who may be chosen as approvers (APPROVERs that are not disabled).
    func approvers() throws(ConsoleError) -> [ApproverChoice]

    /// Names of the organization's users by id, best effort (empty when unknown): who decided.
    func userNames() -> [String: String]

    /// Registers a visitor. The same `idempotencyKey` for a retry of the same registration
    /// (after a timeout the server may have it already).
    /// - Throws: `.refused` with the server's message (a field it refused), `.blocklistMatch`
    ///   (not confirmed, or an invitation to a blocked visitor), `.offline`.
    func register(_ registration: VisitorRegistration, idempotencyKey: String) throws(ConsoleError) -> Visitor

    /// Cancels the visit (the pass stops working).
    func cancelVisitor(id: String) throws(ConsoleError) -> Visitor

    /// Checks a CHECKED_IN visitor out from the office.
    func checkOutVisitor(id: String) throws(ConsoleError) -> Visitor

    /// Sends (or sends again) the invitation mail; a new pass page each time.
    /// - Returns: the new pass page's URL.
    func inviteVisitor(id: String) throws(ConsoleError) -> String

    /// The QR code of the visitor's pass, drawn with error correction Q.
    func passCode(for visitor: Visitor) throws(ConsoleError) -> PassCode

    /// Saves the printable pass (PNG) in the current folder with mode 0600.
    /// - Returns: the absolute path written (a new file: an existing one is never replaced).
    func savePassPNG(for visitor: Visitor) throws(ConsoleError) -> String

    /// Everyone CHECKED_IN now (the evacuation roll), every page, with what this device admitted
    /// and checked out that the server's roll does not show yet. Offline, the server's last roll
    /// (kept with the pass cache) with those changes and the stream's arrivals and departures
    /// since; `updatedAt` is the age of the server's part.
    func onSite() throws(ConsoleError) -> ConsoleRead<OnSiteRoll>

    /// Tells the offline copy of the roll what the stream changed (`visitor.arrived`,
    /// `visitor.departed`), like `ConsoleServices.noteLiveApproval` for the approvals.
    func noteLiveOnSite(_ change: LiveListChange)

    /// Checkpoint (gate) names by id, best effort: empty when unknown.
    func gateNames() -> [String: String]

    /// Writes the roll's text to a new file in the current folder with mode 0600.
    /// - Returns: the absolute path written.
    func saveOnSiteRoll(_ text: String) throws(ConsoleError) -> String
}
