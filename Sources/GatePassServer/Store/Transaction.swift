import Foundation
import GatePassCore
import Synchronization

/// The repositories of one read or write transaction: everything a handler, the auth layer
/// or the event hub may ask of the database. Each repository is a protocol of domain
/// values; the SQLite implementation (Store/SQLite) is the only code that knows SQL, so a
/// second database is a second implementation of these protocols, not a change to handlers.
///
/// A transaction is used on the thread that was handed it and never kept past its body.
protocol Transaction {
    var visitors: any VisitorRepository { get }
    var scans: any ScanRepository { get }
    var sessions: any SessionRepository { get }
    var otps: any OTPRepository { get }
    var idempotency: any IdempotencyRepository { get }
    var events: any EventRepository { get }
    var push: any PushRepository { get }
    var notifications: any NotificationRepository { get }
    var directory: any DirectoryRepository { get }
    var checkpoints: any CheckpointRepository { get }
    var mail: any MailRepository { get }
    var blocklist: any BlocklistRepository { get }
    var audit: any AuditRepository { get }
    var kiosks: any KioskRepository { get }
    var scannerDevices: any ScannerDeviceRepository { get }
    var autoCheckout: any AutoCheckoutRepository { get }

    /// Runs `body` so that a throw undoes only what `body` changed (a nested transaction).
    func savepoint<T>(_ body: () throws -> T) throws -> T

    /// Throws unless the database answers a trivial read.
    func ping() throws

    /// A session or a user row was changed (a logout, a revoked token, a disable, a new role):
    /// after the commit, sessions cached from before it are stale (`SessionCache`).
    var changedPrincipals: Bool { get }
}

/// Set by repositories as they change rows that caches outside the transaction depend on;
/// read by `ServerDatabase` after the commit (each write keeps one to carry them past it).
/// One per transaction (a group commit's jobs each have their own), so a job's note never
/// leaks to another's.
final class TransactionNotes: Sendable {
    private let principals = Atomic<Bool>(false)

    /// A session or user row changed (see `Transaction.changedPrincipals`).
    func notePrincipalsChanged() { principals.store(true, ordering: .releasing) }
    var changedPrincipals: Bool { principals.load(ordering: .acquiring) }
}
