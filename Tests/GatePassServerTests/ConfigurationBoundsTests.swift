import Foundation
import Testing
@testable import GatePassServer

/// Every duration and count the server file sets has an upper bound: a lifetime is added to
/// the clock and stored as milliseconds, so an unbounded one (`tokenLifetimeSeconds`:
/// 9223372036854775807) was accepted and then overflowed on the first login, a crash that
/// came back at every start. The file is refused at start instead, naming the key and range.
@Suite struct ConfigurationBoundsTests {
    static let keys = ["otpLifetimeSeconds", "otpMaxWrongTries", "otpSendsPerHour", "otpResendIntervalSeconds",
                       "tokenLifetimeSeconds", "scannerTokenLifetimeSeconds", "enrolmentAttemptsPerMinute", "bodyLimitBytes",
                       "idempotencyRetentionHours", "eventRetentionHours", "pushDeliveryRetentionHours",
                       "mailLogRetentionHours", "pushFailAfterSeconds"]

    @Test(arguments: keys)
    func aHugeValueIsRefusedNamingTheKey(_ key: String) throws {
        try withTemporaryDirectory { folder in
            for huge in ["9223372036854775807", "1000000000000"] {
                let path = folder + "/server.json"
                try "{\"\(key)\": \(huge)}".write(toFile: path, atomically: true, encoding: .utf8)
                #expect(throws: ConfigurationError.self, "\(key) = \(huge)") { try ServerConfiguration.load(path: path) }
                do {
                    _ = try ServerConfiguration.load(path: path)
                } catch let error as ConfigurationError {
                    #expect(error.message.hasPrefix("\(key) must be between"), "\(error.message)")
                }
            }
        }
    }

    /// The defaults, and the largest value each key takes, lie inside the bounds.
    @Test func theDefaultsAndTheBoundsThemselvesAreAccepted() throws {
        try ServerConfiguration().validate()
        for key in ServerConfiguration.keys where Self.keys.contains(key.name) {
            let largest = try #require(key.acceptedRange?.upperBound, "\(key.name) has no range")
            try withTemporaryDirectory { folder in
                let path = folder + "/server.json"
                try "{\"\(key.name)\": \(largest)}".write(toFile: path, atomically: true, encoding: .utf8)
                _ = try ServerConfiguration.load(path: path)
            }
        }
    }
}
