import Foundation
import GatePassCore

/// Organizations and their users.
protocol DirectoryRepository {
    /// The user with this email (compared lowercased). An unknown role throws: it must never
    /// read as some role nobody gave.
    func user(email: String) throws -> Profile?
    func user(id: String) throws -> Profile?
    func organizationId(named name: String) throws -> String?
    /// The organization of user `userId`, if the user exists.
    func organizationId(ofUser userId: String) throws -> String?
    func organizationExists(id: String) throws -> Bool
    /// Creates an organization with its default checkpoint, "Main gate"; returns its id.
    func createOrganization(name: String, now: Date) throws -> String
    func createUser(organizationId: String, email: String, name: String, role: Role, canScan: Bool,
                    now: Date) throws -> Profile
    /// The organization's name, its own time zone (nil: the server's) and its settings.
    func organization(id: String) throws -> StoredOrganization?
    /// Stores every field of `organization` (a PATCH has merged its changes already).
    func update(_ organization: StoredOrganization) throws
    /// A user as the user routes answer it.
    func userSummary(id: String) throws -> UserSummary?
    /// Stores a user's changeable fields (a PATCH has merged and judged its changes already).
    func update(userId: String, name: String, role: Role, canScan: Bool, disabled: Bool) throws
    /// The `canScanCheckpoint` flag as stored (profiles show it only for APPROVERs).
    func storedCanScan(userId: String) throws -> Bool
    /// OWNERs of the organization who are not disabled.
    func activeOwnerCount(organizationId: String) throws -> Int
    func isDisabled(userId: String) throws -> Bool
    /// Users of one organization (nil: every organization), newest first.
    func users(organizationId: String?, after cursor: ListCursor?, limit: Int) throws -> [(user: UserSummary, cursor: ListCursor)]
    /// Every APPROVER of the organization (the audience of an unassigned visitor's approval mail).
    func approvers(organizationId: String) throws -> [Profile]
    func recordLogin(userId: String, at time: Date) throws

    // MARK: Retention

    /// Every organization's id (the daily jobs visit each).
    func organizationIds() throws -> [String]
    /// The site-local day of the organization's last daily retention run, nil if none ran.
    func lastRetentionDay(organizationId: String) throws -> LocalDay?
    func recordRetentionDay(_ day: LocalDay, organizationId: String) throws
    /// The retention of organizations that set none: the server's `retentionDays`, which it
    /// writes at start (so that commands on the database file follow the server's file).
    func serverRetentionDays() throws -> Int
    func setServerRetentionDays(_ days: Int) throws
}

/// An organization as stored: its time zone is nil until an owner sets one.
struct StoredOrganization: Sendable, Equatable {
    var id: String
    var name: String
    var timeZone: String?
    /// nil: the server's default (`DirectoryRepository.serverRetentionDays`).
    var retentionDays: Int? = nil
    var autoCheckoutAt: String? = nil
}

extension Checkpoint {
    /// The name of the checkpoint every organization is created with.
    static let defaultName = "Main gate"
}
