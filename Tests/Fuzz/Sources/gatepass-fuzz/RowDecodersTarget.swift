import Foundation
import GatePassCore
import SQLite
@testable import GatePassServer

extension FuzzTarget {
    /// One stored value of a seeded database replaced by what the input spells (an integer at
    /// or past the ends of a range, a real, a text, a blob, text that is not UTF-8, NULL), then
    /// read back through the store's repositories. A read either succeeds with a value its
    /// column may hold, or fails with the store's error for an unreadable row; it never traps
    /// and never turns the value into a default.
    static let rowDecoders = FuzzTarget(name: "row-decoders",
                                        summary: "the store's row decoders (Store/SQL) over stored values out of range") { input in
        RowDecoderFuzzing.shared.run(input)
    }
}

/// The database the row-decoders target damages, made once per process. libFuzzer runs one
/// input at a time on one thread, so the connection is never shared.
final class RowDecoderFuzzing: @unchecked Sendable {
    static let shared = RowDecoderFuzzing()

    /// What a column may hold, as the decoder must judge it.
    enum Kind {
        case time, optionalTime, boolean
        case integer(ClosedRange<Int64>)
        /// NULL (a setting left to the server's default), or an integer in the range.
        case optionalInteger(ClosedRange<Int64>)
        /// Codes and texts: the decoder's parser judges them; only the failure's kind is checked.
        case other
    }

    /// A column one input damages, the seeded row's key and the repository read that decodes it.
    struct Column {
        var table: String
        var name: String
        var kind: Kind
        var key: (column: String, value: String)
        var read: (SQLTransaction<Connection>) throws -> Void
    }

    /// Values at and past the edges of what the store understands.
    static let edges: [Int64] = [Int64.max, Int64.min, StoredTime.range.upperBound, StoredTime.range.upperBound + 1,
                                 StoredTime.range.lowerBound, StoredTime.range.lowerBound - 1, 0, 1, 2, -1, 99, 100, 599,
                                 600, 3650, 3651, Int64(Int32.max), Int64(Int32.max) + 1]

    static let retentionDays = Int64(OrganizationRules.retentionDaysRange.lowerBound)...Int64(OrganizationRules.retentionDaysRange.upperBound)

    let connection: Connection
    let columns: [Column]

    private init() {
        do {
            // In memory: nothing is left behind when libFuzzer exits.
            connection = try Connection(path: ":memory:")
            try Migrator.migrate(connection, Schema.sqliteMigrations)
            try connection.executeScript(Self.seed)
            // Values the schema's CHECK constraints refuse can still reach a file (an older
            // schema, a hand edit): the decoder must meet them too.
            try connection.executeScript("PRAGMA ignore_check_constraints = ON")
        } catch {
            fatalError("row-decoders: the seeded database could not be made: \(error)")
        }
        let visitor = ("id", "v1")
        let session = ("id", "s1")
        let readVisitor: (SQLTransaction<Connection>) throws -> Void = { tx in
            FuzzCheck.require(try tx.visitors.find(id: "v1") != nil, "the seeded visitor is gone")
        }
        let readSession: (SQLTransaction<Connection>) throws -> Void = { tx in
            FuzzCheck.require(try tx.sessions.find(id: "s1") != nil, "the seeded session is gone")
        }
        let readUser: (SQLTransaction<Connection>) throws -> Void = { tx in
            _ = try tx.directory.isDisabled(userId: "u1")
            FuzzCheck.require(try tx.directory.userSummary(id: "u1") != nil, "the seeded user is gone")
            try readSession(tx)
        }
        columns = [
            Column(table: "visitors", name: "valid_from", kind: .time, key: visitor, read: readVisitor),
            Column(table: "visitors", name: "valid_until", kind: .time, key: visitor, read: readVisitor),
            Column(table: "visitors", name: "created_at", kind: .time, key: visitor, read: readVisitor),
            Column(table: "visitors", name: "checked_in_at", kind: .optionalTime, key: visitor, read: readVisitor),
            Column(table: "visitors", name: "requires_approval", kind: .boolean, key: visitor, read: readVisitor),
            Column(table: "visitors", name: "walk_in", kind: .boolean, key: visitor, read: readVisitor),
            Column(table: "visitors", name: "status", kind: .other, key: visitor, read: readVisitor),
            Column(table: "visitors", name: "short_id", kind: .other, key: visitor, read: readVisitor),
            Column(table: "sessions", name: "expires_at", kind: .time, key: session, read: readSession),
            Column(table: "sessions", name: "revoked_at", kind: .optionalTime, key: session, read: readSession),
            Column(table: "sessions", name: "kind", kind: .other, key: session, read: readSession),
            Column(table: "users", name: "disabled", kind: .boolean, key: ("id", "u1"), read: readUser),
            Column(table: "users", name: "can_scan", kind: .boolean, key: ("id", "u1"), read: readUser),
            Column(table: "users", name: "role", kind: .other, key: ("id", "u1"), read: readUser),
            Column(table: "organizations", name: "retention_days", kind: .optionalInteger(Self.retentionDays), key: ("id", "o1")) { tx in
                FuzzCheck.require(try tx.directory.organization(id: "o1") != nil, "the seeded organization is gone")
            },
            Column(table: "checkpoints", name: "is_default", kind: .boolean, key: ("id", "c1")) { tx in
                FuzzCheck.require(try tx.checkpoints.find(id: "c1", organizationId: "o1") != nil, "the seeded checkpoint is gone")
            },
            Column(table: "otp_codes", name: "expires_at", kind: .time, key: ("email", "a@example.test")) { tx in
                FuzzCheck.require(try tx.otps.code(email: "a@example.test") != nil, "the seeded code is gone")
            },
            Column(table: "otp_codes", name: "wrong_tries", kind: .integer(0...Int64(Int32.max)),
                   key: ("email", "a@example.test")) { tx in
                FuzzCheck.require(try tx.otps.code(email: "a@example.test") != nil, "the seeded code is gone")
            },
            Column(table: "otp_codes", name: "used", kind: .boolean, key: ("email", "a@example.test")) { tx in
                FuzzCheck.require(try tx.otps.code(email: "a@example.test") != nil, "the seeded code is gone")
            },
            Column(table: "idempotency_keys", name: "status", kind: .integer(100...599), key: ("key", "k1")) { tx in
                FuzzCheck.require(try tx.idempotency.find(scope: "u1", key: "k1") != nil, "the seeded answer is gone")
            },
            Column(table: "kiosks", name: "code_expires_at", kind: .time, key: ("id", "k1")) { tx in
                FuzzCheck.require(try tx.kiosks.find(codeHash: [1, 2, 3]) != nil, "the seeded kiosk is gone")
            },
            Column(table: "scans", name: "scanned_at", kind: .time, key: ("id", "scan1")) { tx in
                FuzzCheck.require(try tx.scans.scans(visitorId: "v1", limit: 5).count == 1, "the seeded scan is gone")
            },
            Column(table: "scans", name: "offline", kind: .boolean, key: ("id", "scan1")) { tx in
                FuzzCheck.require(try tx.scans.scans(visitorId: "v1", limit: 5).count == 1, "the seeded scan is gone")
            },
        ]
    }

    /// One row of each table the columns name, every value one the store writes.
    static let seed = """
        INSERT INTO organizations (id, name, created_at) VALUES ('o1', 'Acme', 1764547200000);
        INSERT INTO users (id, organization_id, email, name, role, can_scan, created_at)
            VALUES ('u1', 'o1', 'owner@example.test', 'Olga', 'OWNER', 1, 1764547200000);
        INSERT INTO checkpoints (id, organization_id, name, is_default, created_at) VALUES ('c1', 'o1', 'Main gate', 1, 1764547200000);
        INSERT INTO sessions (id, user_id, kind, checkpoint_id, created_at, expires_at) VALUES ('s1', 'u1', 'login', NULL, 1764547200000, 1764633600000);
        INSERT INTO otp_codes (email, code_hmac, expires_at, wrong_tries, used) VALUES ('a@example.test', x'00', 1764547500000, 0, 0);
        INSERT INTO visitors (id, organization_id, short_id, name, requires_approval, walk_in, status, valid_from, valid_until,
                              created_at, change_seq, search_text, lookup_text)
            VALUES ('v1', 'o1', 'ABCDEFGH', 'Ana', 0, 0, 'EXPECTED', 1764547200000, 1764633600000, 1764547200000, 1, 'ana', 'ana');
        INSERT INTO scans (id, organization_id, short_id, raw, result, visitor_id, checkpoint_id, scanned_by, scanned_at,
                           received_at, offline)
            VALUES ('scan1', 'o1', 'ABCDEFGH', 'GP1:ABCDEFGH', 'CHECKED_IN', 'v1', 'c1', 'u1', 1764550000000, 1764550000000, 0);
        INSERT INTO idempotency_keys (scope, key, fingerprint, status, headers, body, created_at)
            VALUES ('u1', 'k1', x'00', 201, 'Content-Type:application/json', x'7b7d', 1764547200000);
        INSERT INTO kiosks (id, organization_id, checkpoint_id, name, created_by, created_at, code_hash, code_expires_at)
            VALUES ('k1', 'o1', 'c1', 'Gate kiosk', 'u1', 1764547200000, x'010203', 1764550800000);
        """

    func run(_ input: UnsafeRawBufferPointer) {
        guard let first = input.first else { return }
        let column = columns[Int(first) % columns.count]
        var rest = Array(input.dropFirst())
        let (assignment, argument) = Self.value(from: &rest)
        do {
            try connection.executeScript("SAVEPOINT fuzz")
            defer { try? connection.executeScript("ROLLBACK TO fuzz; RELEASE fuzz") }
            guard damage(column, assignment, argument) else { return }
            // What the column holds now (SQLite's affinity may have turned '12' into 12).
            let stored = try connection.queryFirst("""
                SELECT typeof(\(column.name)) AS type, \(column.name) AS value FROM \(column.table) WHERE \(column.key.column) = ?
                """, [column.key.value]) { row -> Int64?? in
                switch try row.string(named: "type") {
                case "null": return .some(nil)
                case "integer": return .some(try row.int64(named: "value"))
                default: return nil
                }
            }
            let value = stored ?? nil
            let readable = Self.understood(value, as: column.kind)
            do {
                try column.read(SQLTransaction(connection))
                if let readable {
                    FuzzCheck.require(readable, "\(column.table).\(column.name) holding \(Self.describe(value)) was read although the column may not hold it")
                }
            } catch let error as SQLiteError {
                FuzzCheck.require(error.isUnreadableValue && error.unreadableColumn != nil,
                                  "\(column.table).\(column.name): a failure other than an unreadable value: \(error)")
                if let readable {
                    FuzzCheck.require(!readable, "\(column.table).\(column.name) holding \(Self.describe(value)) was refused: \(error)")
                }
            } catch is StoredDataError {
                // The store's own error for a value it cannot use: also a failed read.
            }
        } catch {
            fatalError("row-decoders: the damage itself failed: \(error)")
        }
    }

    /// Writes the value into the seeded row; false when the database refuses it (NOT NULL and
    /// UNIQUE hold even with CHECK constraints off: such a value cannot be on disk).
    private func damage(_ column: Column, _ assignment: String, _ argument: (any SQLBindable)?) -> Bool {
        let arguments: [any SQLBindable] = argument.map { [$0, column.key.value] } ?? [column.key.value]
        do {
            try connection.execute("UPDATE \(column.table) SET \(column.name) = \(assignment) WHERE \(column.key.column) = ?",
                                   arguments)
            return true
        } catch {
            if error.isConstraintViolation { return false }
            fatalError("row-decoders: the damage itself failed: \(error)")
        }
    }

    static func describe(_ value: Int64??) -> String {
        switch value {
        case .none: "a value that is not an integer"
        case .some(.none): "NULL"
        case .some(.some(let integer)): "\(integer)"
        }
    }

    /// Whether the decoder must accept the stored value: an integer within the kind's range
    /// (NULL only for an optional time); anything else it must refuse. Nil for `other`, whose
    /// parser decides.
    static func understood(_ stored: Int64??, as kind: Kind) -> Bool? {
        switch (kind, stored) {
        case (.other, _): return nil
        case (.optionalTime, .some(.none)), (.optionalInteger, .some(.none)): return true
        case (_, .some(.none)): return false
        case (_, .none): return false
        case (.time, .some(.some(let value))), (.optionalTime, .some(.some(let value))): return StoredTime.range.contains(value)
        case (.boolean, .some(.some(let value))): return value == 0 || value == 1
        case (.integer(let range), .some(.some(let value))), (.optionalInteger(let range), .some(.some(let value))):
            return range.contains(value)
        }
    }

    /// The SQL expression and its argument the input spells: its first byte picks the kind.
    static func value(from bytes: inout [UInt8]) -> (String, (any SQLBindable)?) {
        guard !bytes.isEmpty else { return ("NULL", nil) }
        let tag = bytes.removeFirst()
        func int64() -> Int64 {
            var value: UInt64 = 0
            for _ in 0..<8 where !bytes.isEmpty { value = value << 8 | UInt64(bytes.removeFirst()) }
            return Int64(bitPattern: value)
        }
        switch tag % 7 {
        case 0: return ("NULL", nil)
        case 1: return ("?", edges[Int(bytes.first ?? 0) % edges.count])
        case 2: return ("?", int64())
        case 3: return ("?", Double(bitPattern: UInt64(bitPattern: int64())))
        case 4: return ("?", String(decoding: bytes, as: UTF8.self))
        case 5: return ("?", bytes)
        default: return ("CAST(? AS TEXT)", bytes) // a text that may not be UTF-8
        }
    }
}
