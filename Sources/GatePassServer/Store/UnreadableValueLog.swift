import GatePassCore

/// The log's notice of a stored value the code does not understand, given once per table and
/// column: a damaged row fails every request or job run that reads it until it is repaired,
/// and one line says so better than one a request (which would bury everything else).
/// Each owner (the application, a periodic job) keeps its own; nothing is global.
final class UnreadableValueLog: Sendable {
    private let logged = Locked<Set<String>>([])

    /// Whether `error` is a stored value that could not be read (`DatabaseFailure.unreadableColumn`);
    /// the first one of each column is written to `log`, naming `place` (a route, a job).
    func note(_ error: any Error, in place: String, to log: any LogSink) -> Bool {
        guard let failure = error as? any DatabaseFailure, let column = failure.unreadableColumn else { return false }
        if logged.withLock({ $0.insert(column).inserted }) {
            log.log("a stored value in \(column) cannot be read; everything that reads its row fails until it is "
                    + "repaired (logged once; first seen in \(place)): \(failure)")
        }
        return true
    }
}
