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
    func coreAndTransport(platform: String = "console",
                          extraRequestTime: Double = 0) throws -> (core: ClientCore, transport: any HTTPTransport) {
        let directory = StateDirectory.resolve(environment: environment)
        // The CA file named at login is kept, so later commands trust the same server.
        let store = try ClientDatabase(directory: directory)
        let storedCAFile = try store.meta("ca_file")
        let caFile = environment["GATEPASS_CA_FILE"] ?? storedCAFile
        let options = CurlSession.Options(connectTimeout: seconds("GATEPASS_CONNECT_TIMEOUT", default: 3),
                                          requestTimeout: seconds("GATEPASS_REQUEST_TIMEOUT", default: 10)
                                              + .milliseconds(Int(extraRequestTime * 1000)),
                                          caFile: caFile)
        let transport = CurlSession(options: options)
        return (ClientCore(store: store, directory: directory, transport: transport, clock: clock, platform: platform),
                transport)
    }

    func seconds(_ name: String, default value: Double) -> Duration {
        guard let raw = environment[name], let parsed = Double(raw), parsed > 0 else { return .milliseconds(Int(value * 1000)) }
        return .milliseconds(Int(parsed * 1000))
    }
}
