import Foundation
import GatePassCore
import GatePassServer

/// `gatepass user add --db` and `gatepass checkpoint add --db`: bootstrapping on the database file.
enum AdministrationCommands {

    /// Runs `body` on the database file, closed after, with its audit log (keyed by the
    /// server's secret); an administration rule it breaks is a failure in one sentence.
    static func withStore<T>(_ path: String, secretFile: String?,
                             _ body: (ServerDatabase, Administration.Audit) throws -> T) throws -> T {
        let files = try databaseFiles(path, secretFile: secretFile)
        let store = try openStore(files)
        defer { store.close() }
        let audit: Administration.Audit
        do {
            audit = try Administration.Audit(files: files, store: store, now: Date())
        } catch {
            throw CommandFailure("cannot open the audit log: \(error)")
        }
        do {
            return try body(store, audit)
        } catch let failure as Administration.Failure {
            throw CommandFailure(failure.message)
        }
    }

    /// What `--db` (and `--secret-file`, `--keys-file`) name, or a usage failure in one sentence.
    static func databaseFiles(_ database: String, secretFile: String? = nil, passKeysFile: String? = nil) throws -> DatabaseFiles {
        do {
            return try DatabaseFiles(database: database, secretFile: secretFile, passKeysFile: passKeysFile)
        } catch {
            throw CommandFailure(error.message)
        }
    }

    static func openStore(_ files: DatabaseFiles) throws -> ServerDatabase {
        do {
            return try files.open()
        } catch {
            throw CommandFailure("cannot open the database \(files.location.description): \(error)")
        }
    }

    static func openStore(_ database: String) throws -> ServerDatabase { try openStore(try databaseFiles(database)) }

    /// Refuses a SQLite file that does not exist (these commands never create one; `hint`
    /// says what would), or a location that is not one. A PostgreSQL database is made by its
    /// administrator, so there is nothing to look for before connecting.
    static func requireExisting(_ database: String, hint: String = "") throws {
        if case .sqlite(let path) = try databaseFiles(database).location, !FileManager.default.fileExists(atPath: path) {
            throw CommandFailure("no database at \(path)" + hint)
        }
    }
}
