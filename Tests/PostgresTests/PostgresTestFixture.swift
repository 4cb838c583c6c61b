import GatePassTestSupport
import LocalPostgres
import Postgres
import Testing

/// Every suite that needs the server carries this trait: without the server binaries the
/// suite is skipped with the reason, not failed.
let needsPostgreSQL = ConditionTrait.enabled(if: PostgresCluster.isAvailable,
                                             Comment(rawValue: PostgresCluster.unavailableReason))

/// Runs `body` with a connection to a fresh, empty database of its own, closed afterwards
/// whether `body` returns or throws.
func withTemporaryDatabase(_ body: (PGConnection, String) throws -> Void) throws {
    let url = try PostgresCluster.shared().makeDatabase()
    let connection = try PGConnection(url: url, applicationName: "gatepass-postgres-tests")
    defer { connection.close() }
    try body(connection, url)
}

/// Runs `body` with `expression`'s error as a `PGError`; records an issue when it does not
/// throw or throws something else.
func expectPGError(_ expression: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation,
                   _ check: (PGError) -> Void) {
    do {
        try expression()
        Issue.record("expected a PGError, nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as PGError {
        check(error)
    } catch {
        Issue.record("expected a PGError, got \(error)", sourceLocation: sourceLocation)
    }
}
