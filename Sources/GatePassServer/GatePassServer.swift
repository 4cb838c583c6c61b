import Foundation
import GatePassCore
import HTTPServer

/// A running Gate Pass API server: store, application and HTTP listener, started together
/// and stopped together. Tests start one on port 0; `gatepass serve` runs one until a signal.
// @unchecked: every stored property is immutable; the timer is only cancelled, which is thread-safe.
public final class GatePassServer: @unchecked Sendable {
    public let application: GatePassApplication
    public let store: Store
    let http: HTTPServer
    public let port: UInt16
    private let maintenance: DispatchSourceTimer

    /// Opens the database (migrating it), loads or creates the secret, and starts listening.
    public init(configuration: ServerConfiguration, devMode: Bool = false, clock: any Clock = SystemClock(),
                logSink: any LogSink = StandardErrorLog()) throws {
        try configuration.validate()
        let store = try Store(path: configuration.database, synchronous: configuration.sqliteSynchronous,
                              busyTimeoutMilliseconds: Int32(configuration.sqliteBusyTimeoutMilliseconds))
        let secret: ServerSecret
        do {
            secret = try ServerSecret.loadOrCreate(path: configuration.resolvedSecretFile)
        } catch {
            store.close()
            throw error
        }
        let application = GatePassApplication(configuration: configuration, store: store, secret: secret, clock: clock,
                                              logSink: logSink, devMode: devMode)
        let http = HTTPServer(
            configuration: .init(host: configuration.host, port: UInt16(configuration.port), threads: configuration.threads,
                                 bodyLimit: configuration.bodyLimitBytes, connectionLimit: configuration.maxConnections),
            responder: application)
        do {
            try application.eventHub.start()
            port = try http.start()
        } catch {
            application.eventHub.stop()
            store.close()
            throw error
        }
        self.application = application
        self.store = store
        self.http = http
        // Expired idempotency records, send counters and codes are swept every 10 minutes.
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global(qos: .utility))
        timer.schedule(deadline: .now() + 60, repeating: 600)
        timer.setEventHandler { [application] in application.purgeExpiredRecords() }
        timer.resume()
        maintenance = timer
    }

    public var baseURL: String { "http://\(http.configuration.host == "0.0.0.0" ? "127.0.0.1" : http.configuration.host):\(port)" }

    /// Stops accepting, lets requests in flight finish, then closes the database cleanly
    /// (queued writes committed, WAL checkpointed).
    public func stop(grace: Duration = .seconds(10)) {
        maintenance.cancel()
        // Streams end first: they never finish by themselves, and the hub reads the store.
        application.eventHub.stop()
        http.stop(grace: grace)
        store.close()
    }
}
