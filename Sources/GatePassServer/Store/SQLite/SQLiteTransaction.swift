import Foundation
import GatePassCore
import SQLite

/// The SQLite implementation of `Transaction`: repositories over one connection inside the
/// transaction a pool opened for it.
struct SQLiteTransaction: Transaction {
    let db: Connection

    init(_ db: Connection) { self.db = db }

    var visitors: any VisitorRepository { SQLiteVisitorRepository(db: db) }
    var scans: any ScanRepository { SQLiteScanRepository(db: db) }
    var sessions: any SessionRepository { SQLiteSessionRepository(db: db) }
    var otps: any OTPRepository { SQLiteOTPRepository(db: db) }
    var idempotency: any IdempotencyRepository { SQLiteIdempotencyRepository(db: db) }
    var events: any EventRepository { SQLiteEventRepository(db: db) }
    var push: any PushRepository { SQLitePushRepository(db: db) }
    var notifications: any NotificationRepository { SQLiteNotificationRepository(db: db) }
    var directory: any DirectoryRepository { SQLiteDirectoryRepository(db: db) }
    var checkpoints: any CheckpointRepository { SQLiteCheckpointRepository(db: db) }
    var mail: any MailRepository { SQLiteMailRepository(db: db) }
    var blocklist: any BlocklistRepository { SQLiteBlocklistRepository(db: db) }
    var audit: any AuditRepository { SQLiteAuditRepository(db: db) }
    var kiosks: any KioskRepository { SQLiteKioskRepository(db: db) }
    var autoCheckout: any AutoCheckoutRepository { SQLiteAutoCheckoutRepository(db: db) }

    func savepoint<T>(_ body: () throws -> T) throws -> T { try db.inSavepoint(body) }

    func ping() throws { _ = try db.scalarInt("SELECT 1") }
}
