import Foundation
import GatePassCore

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
    var autoCheckout: any AutoCheckoutRepository { get }

    /// Runs `body` so that a throw undoes only what `body` changed (a nested transaction).
    func savepoint<T>(_ body: () throws -> T) throws -> T

    /// Throws unless the database answers a trivial read.
    func ping() throws
}
