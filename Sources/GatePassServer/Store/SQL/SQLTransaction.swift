import Foundation
import GatePassCore
import SQLBinding

/// `Transaction` over SQL: the repositories of Store/SQL on one connection (SQLite's or
/// PostgreSQL's), inside the transaction the engine opened for it.
struct SQLTransaction<Database: SQLRunner>: Transaction {
    let db: Database
    /// What this transaction's repositories changed that caches outside it depend on.
    let notes = TransactionNotes()

    init(_ db: Database) { self.db = db }

    var changedPrincipals: Bool { notes.changedPrincipals }

    var visitors: any VisitorRepository { SQLVisitorRepository(db: db) }
    var scans: any ScanRepository { SQLScanRepository(db: db) }
    var sessions: any SessionRepository { SQLSessionRepository(db: db, notes: notes) }
    var otps: any OTPRepository { SQLOTPRepository(db: db) }
    var idempotency: any IdempotencyRepository { SQLIdempotencyRepository(db: db) }
    var events: any EventRepository { SQLEventRepository(db: db) }
    var push: any PushRepository { SQLPushRepository(db: db) }
    var notifications: any NotificationRepository { SQLNotificationRepository(db: db) }
    var directory: any DirectoryRepository { SQLDirectoryRepository(db: db, notes: notes) }
    var checkpoints: any CheckpointRepository { SQLCheckpointRepository(db: db) }
    var mail: any MailRepository { SQLMailRepository(db: db) }
    var blocklist: any BlocklistRepository { SQLBlocklistRepository(db: db) }
    var audit: any AuditRepository { SQLAuditRepository(db: db) }
    var kiosks: any KioskRepository { SQLKioskRepository(db: db) }
    var scannerDevices: any ScannerDeviceRepository { SQLScannerDeviceRepository(db: db) }
    var autoCheckout: any AutoCheckoutRepository { SQLAutoCheckoutRepository(db: db) }

    func savepoint<T>(_ body: () throws -> T) throws -> T { try db.inSavepoint(body) }

    func ping() throws { _ = try db.scalarInt("SELECT 1", []) }
}
