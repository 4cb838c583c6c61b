import CurlHTTP
import GatePassClient
import GatePassCore

/// Everything a client command needs, built from the environment (no hidden globals).
struct CommandContext {
    let terminal: any Terminal
    let environment: [String: String]
    let clock: any WallClock

    /// - Parameter extraRequestTime: seconds added to the request timeout, for requests the
    ///   server answers late on purpose (push-test waits for its deliveries).
    func core(platform: String = "console", extraRequestTime: Double = 0) throws -> ClientCore {
        try coreAndTransport(platform: platform, extraRequestTime: extraRequestTime).core
    }

    /// The client core and the transport it uses (the console's services need both).
    /// - Parameter wrapping: puts a layer over the transport (the console's, which reports
    ///   every request's outcome); the core and the caller both get the wrapped one.
    func coreAndTransport(platform: String = "console", extraRequestTime: Double = 0,
                          wrapping: (any HTTPTransport) -> any HTTPTransport = { $0 }) throws -> (core: ClientCore, transport: any HTTPTransport) {
        let directory = StateDirectory.resolve(environment: environment)
        let store = try ClientDatabase(directory: directory)
        var options = try transportOptions(store)
        options.requestTimeout += .milliseconds(Int(extraRequestTime * 1000))
        let transport = wrapping(CurlSession(options: options))
        return (ClientCore(store: store, directory: directory, transport: transport, clock: clock, platform: platform),
                transport)
    }

    /// A handle that gives up after `timeout`, connecting included (the kiosk's check-ins:
    /// `offlineAfterMs`), with the same CA file as the core's.
    func transport(for core: ClientCore, timeout: Duration) throws -> any HTTPTransport {
        var options = try transportOptions(core.store)
        options.connectTimeout = min(options.connectTimeout, timeout)
        options.requestTimeout = timeout
        return CurlSession(options: options)
    }

    private func transportOptions(_ store: ClientDatabase) throws -> CurlSession.Options {
        // The CA file named at login is kept, so later commands trust the same server.
        let caFile = try environment["GATEPASS_CA_FILE"] ?? store.meta("ca_file")
        return CurlSession.Options(connectTimeout: seconds("GATEPASS_CONNECT_TIMEOUT", default: 3),
                                   requestTimeout: seconds("GATEPASS_REQUEST_TIMEOUT", default: 10), caFile: caFile)
    }

    func seconds(_ name: String, default value: Double) -> Duration {
        guard let raw = environment[name], let parsed = Double(raw), parsed > 0 else { return .milliseconds(Int(value * 1000)) }
        return .milliseconds(Int(parsed * 1000))
    }
}
