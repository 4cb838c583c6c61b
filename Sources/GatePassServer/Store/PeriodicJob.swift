/// The server's periodic jobs. Each runs on one server at a time, among all that share a
/// database (`ServerDatabase.runExclusively`): every one is safe to repeat, but a mail sent
/// twice or a day's retention run twice at once is not what a site wants.
enum PeriodicJob: Int64, CaseIterable, Sendable {
    /// Purging what outlived its limit, and the daily retention runs.
    case maintenance = 1
    /// The end-of-day check-out.
    case autoCheckout = 2
    /// Re-issuing the passes of a revoked pass key.
    case reissue = 3
    /// Sending (and retrying) queued mail.
    case mailDelivery = 4
    /// Marking push deliveries left pending too long as failed.
    case pushFailures = 5
}

extension ServerDatabase {
    /// Runs `body` unless another server sharing the database is running `job` now; returns
    /// whether it ran. SQLite has one server per file: it always runs.
    @discardableResult
    func runExclusively(_ job: PeriodicJob, _ body: () throws -> Void) rethrows -> Bool {
        try engine.runExclusively(job, body)
    }
}
