import Foundation
import GatePassCore

/// Whether the database has been found unable to take writes: a write that failed because
/// the file is read-only, damaged or failing (`DatabaseFailure.isUnwritable`), a checkpoint
/// that could not write the database file, or a health probe that found the file can no
/// longer be opened for writing. Once found, it stays so until the server restarts: every
/// write is refused (503) before it runs and healthz answers 503. A write taken into the WAL
/// of a file that can no longer be checkpointed, or into a damaged b-tree, would be a write
/// the server cannot stand behind; restarting after the cause is fixed runs the start's
/// checks (writable, `quick_check`) again.
final class StorageHealth: Sendable {
    private let found = Locked<String?>(nil)
    private let reporter = Locked<(@Sendable (String) -> Void)?>(nil)

    /// Why the database cannot be written, once found; nil while it can.
    var unwritable: String? { found.withLock { $0 } }

    /// Where the finding is told, once (the server's log).
    func report(to log: @escaping @Sendable (String) -> Void) {
        reporter.withLock { $0 = log }
    }

    /// Notes that the database cannot be written, for `reason`; the first finding stays.
    func noteUnwritable(_ reason: String) {
        let first = found.withLock { current -> Bool in
            guard current == nil else { return false }
            current = reason
            return true
        }
        guard first else { return }
        reporter.withLock { $0 }?("the database cannot be written: \(reason); every write is refused (503) until the cause "
                                  + "is fixed and the server restarted")
    }

    /// Notes `error` if it says the database cannot be written.
    func note(_ error: any Error) {
        guard let failure = error as? any DatabaseFailure, failure.isUnwritable, !(error is UnwritableDatabase) else { return }
        noteUnwritable("\(error)")
    }

    /// Throws `UnwritableDatabase` once the database has been found unwritable.
    func refuseIfUnwritable() throws {
        if let reason = unwritable { throw UnwritableDatabase(reason: reason) }
    }
}

/// A write refused before it ran: the database was found unable to take writes (see
/// `StorageHealth`).
struct UnwritableDatabase: Error, CustomStringConvertible, DatabaseFailure {
    var reason: String
    var description: String { "the database cannot be written (\(reason)); restart the server once the cause is fixed" }
    var isClosing: Bool { false }
    var isBusy: Bool { false }
    var isUnwritable: Bool { true }
    var unreadableColumn: String? { nil }
}
