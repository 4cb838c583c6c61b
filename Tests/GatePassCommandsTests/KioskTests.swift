import Foundation
import GatePassClient
import GatePassCore
import GatePassScanner
import LoopbackHTTP
import QRCode
import Synchronization
import Testing
@testable import GatePassCommands
@testable import GatePassServer

/// A 640×480 grey picture of a pass (its QR code, axis-aligned, 6-pixel modules), as a P5 PGM.
func passPicture(_ text: String?) throws -> [UInt8] {
    let width = 640, height = 480
    var pixels = [UInt8](repeating: 235, count: width * height)
    if let text {
        let code = try QRCode(text)
        let module = 6
        let origin = (x: (width - code.width * module) / 2, y: (height - code.width * module) / 2)
        for y in 0..<code.width {
            for x in 0..<code.width where code.isDark(x: x, y: y) {
                for dy in 0..<module {
                    let row = (origin.y + y * module + dy) * width
                    for dx in 0..<module { pixels[row + origin.x + x * module + dx] = 20 }
                }
            }
        }
    }
    return Array("P5\n\(width) \(height)\n255\n".utf8) + pixels
}

/// The kiosk end to end, from image folders, against a real server.
@Suite(.serialized) struct KioskTests {
    final class Log: LogSink { func log(_ line: String) {} }

    final class Gate {
        let directory: String
        var configuration = ServerConfiguration()
        var server: GatePassServer?
        let environment: [String: String]
        let terminal = RecordingTerminal()
        var port: UInt16 = 0

        init() throws {
            directory = temporaryPath("kiosk")
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            configuration.database = directory + "/server.db"
            configuration.port = 0
            configuration.threads = 4
            configuration.otpResendIntervalSeconds = 0
            environment = ["GATEPASS_STATE_DIR": directory + "/state", "GATEPASS_CONNECT_TIMEOUT": "1"]
            try startServer()
            try DemoData.seed(store: server!.store, now: Date(), timeZone: .current)
        }

        func startServer() throws {
            let server = try GatePassServer(configuration: configuration, devMode: true, logSink: Log())
            self.server = server
            port = server.port
            configuration.port = Int(server.port)   // a restart comes back on the same port
        }

        func stopServer() {
            server?.stop(grace: .seconds(1))
            server = nil
        }

        deinit {
            stopServer()
            try? FileManager.default.removeItem(atPath: directory)
        }

        var http: LoopbackHTTPClient { LoopbackHTTPClient(port: port) }

        func token(_ email: String) throws -> String {
            _ = try http.send("POST", "/api/auth/send-otp", json: ["email": email])
            let code = try #require(try http.get("/api/auth/dev-peek-otp?email=\(email)").json?["otp"] as? String)
            return try #require(try http.send("POST", "/api/auth/verify-otp", json: ["email": email, "otp": code]).json?["token"] as? String)
        }

        func loginKiosk(_ email: String) throws {
            _ = try http.send("POST", "/api/auth/send-otp", json: ["email": email])
            let code = try #require(try http.get("/api/auth/dev-peek-otp?email=\(email)").json?["otp"] as? String)
            let status = GatePassCLI.main(["gatepass", "login", "--server", "http://127.0.0.1:\(port)", "--email", email,
                                           "--otp", code], terminal: RecordingTerminal(), environment: environment)
            guard status == 0 else { throw CommandFailure("kiosk login failed") }
        }

        func visitor(_ token: String, _ fields: [String: Any]) throws -> (id: String, shortId: String, name: String) {
            let answer = try http.send("POST", "/api/visitors", token: token, json: fields)
            let id = try #require(answer.json?["id"] as? String)
            return (id, try #require(answer.json?["shortId"] as? String), fields["name"] as! String)
        }

        /// A folder of pictures: each code (nil = an empty picture) becomes one file, in order.
        func folder(_ name: String, _ codes: [String?]) throws -> String {
            let path = directory + "/" + name
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            for (index, code) in codes.enumerated() {
                try Data(try passPicture(code)).write(to: URL(fileURLWithPath: path + String(format: "/frame-%03d.pgm", index)))
            }
            return path
        }

        func core() throws -> ClientCore {
            try ClientCommands.Context(terminal: terminal, environment: environment, clock: SystemWallClock()).core(platform: "kiosk")
        }

        func waitForLine(_ text: String) -> Bool {
            terminal.wait { terminal.stdout.contains(text) }
        }
    }

    func runner(_ gate: Gate, json: Bool = false, options: KioskRunner.Options? = nil, clock: any WallClock = SystemWallClock(),
                checkInTransport: (any HTTPTransport)? = nil) throws -> KioskRunner {
        let core = try ClientCommands.Context(terminal: gate.terminal, environment: gate.environment, clock: clock).core(platform: "kiosk")
        _ = try core.ensureScannerToken(now: Date())
        let decoder = try QRDecoder()
        return KioskRunner(core: core, terminal: gate.terminal, clock: clock, options: options ?? .init(cooldown: 3, json: json),
                           notifier: SystemdNotifier(environment: [:]), checkInTransport: checkInTransport) { frame in
            try decoder.decode(frame).codes.map(\.text)
        }
    }

    @Test func admittedDeniedAndApprovalRequestedThenDecided() throws {
        let gate = try Gate()
        try gate.loginKiosk("owner@demo.gatepass")
        let owner = try gate.token("owner@demo.gatepass")
        let guest = try gate.visitor(owner, ["name": "Gina Guest"])
        let cancelled = try gate.visitor(owner, ["name": "Carl Cancelled"])
        _ = try gate.http.send("POST", "/api/visitors/\(cancelled.id)/cancel", token: owner, json: [String: Any]())
        let needsApproval = try gate.visitor(owner, ["name": "Abe Approval", "requiresApproval": true])
        let folder = try gate.folder("phase1", ["GP1:\(guest.shortId)", "GP1:\(guest.shortId)", nil,
                                                "GP1:\(cancelled.shortId)", nil, "GP1:\(needsApproval.shortId)",
                                                "not a pass", "GP1:ZZZZZZZZ"])
        let kiosk = try runner(gate)
        try kiosk.start()
        defer { kiosk.stop() }
        #expect(try kiosk.scan(ImageFileSource(directory: folder)) == 8)
        kiosk.settle(timeout: 0.5)
        #expect(gate.waitForLine("ADMITTED  Gina Guest (\(guest.shortId)) — welcome"))
        #expect(gate.waitForLine("DENIED  Carl Cancelled (\(cancelled.shortId)) — the pass was cancelled"))
        #expect(gate.waitForLine("APPROVAL REQUESTED  Abe Approval (\(needsApproval.shortId)) — waiting for an approver"))
        #expect(gate.waitForLine("DENIED  not a pass — not a Gate Pass code"))
        #expect(gate.waitForLine("DENIED  ZZZZZZZZ — unknown pass"), "a pass text is named by its short id")
        // A pass held over two frames is checked in once.
        #expect(gate.terminal.stdout.components(separatedBy: "Gina Guest").count == 2)
        // The approver decides; the kiosk hears it on its event stream and lets the visitor in.
        let approver = try gate.token("approver@demo.gatepass")
        let approved = try gate.http.send("POST", "/api/approver/visitors/\(needsApproval.id)/approve", token: approver,
                                          json: [String: Any]())
        #expect(approved.status == 200)
        #expect(gate.waitForLine("ADMITTED  Abe Approval (\(needsApproval.shortId)) — welcome"))
        let visitor = try gate.http.get("/api/visitors/\(needsApproval.id)", token: owner).json
        #expect(visitor?["status"] as? String == "CHECKED_IN")
    }

    @Test func aRejectionArrivesAsADenial() throws {
        let gate = try Gate()
        try gate.loginKiosk("owner@demo.gatepass")
        let owner = try gate.token("owner@demo.gatepass")
        let doubtful = try gate.visitor(owner, ["name": "Dora Doubt", "requiresApproval": true])
        let kiosk = try runner(gate, json: true)
        try kiosk.start()
        defer { kiosk.stop() }
        try kiosk.scan(ImageFileSource(directory: try gate.folder("one", ["GP1:\(doubtful.shortId)"])))
        #expect(gate.waitForLine(#""outcome":"approval-requested""#))
        let approver = try gate.token("approver@demo.gatepass")
        _ = try gate.http.send("POST", "/api/approver/visitors/\(doubtful.id)/reject", token: approver, json: ["note": "not today"])
        #expect(gate.waitForLine(#""outcome":"denied""#))
        let lines = gate.terminal.stdout.split(separator: "\n")
        let last = try #require(lines.last.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        #expect(last["reason"] as? String == "an approver rejected the visit: not today")
        #expect(last["visitorName"] as? String == "Dora Doubt")
    }

    @Test func offlineScansAreDecidedFromTheCacheThenReplayedWhenTheServerIsBack() throws {
        let gate = try Gate()
        try gate.loginKiosk("owner@demo.gatepass")
        let owner = try gate.token("owner@demo.gatepass")
        let late = try gate.visitor(owner, ["name": "Olga Offline"])
        let kiosk = try runner(gate)
        try kiosk.start()
        defer { kiosk.stop() }
        let reader = try gate.core()
        #expect(kiosk.cacheSyncs.wait { ((try? reader.passCacheStatus()) ?? nil)?.passes ?? 0 > 0 })
        gate.stopServer()
        try kiosk.scan(ImageFileSource(directory: try gate.folder("offline", ["GP1:\(late.shortId)"])))
        #expect(gate.waitForLine("ADMITTED offline (cache "))
        #expect(gate.waitForLine("Olga Offline (\(late.shortId)) — welcome"))
        let queued = try #require(try reader.store.outboxEntries().first)
        #expect(queued.body?.contains(#""offlineDecision":"CHECKED_IN""#) == true)
        try gate.startServer()
        // The outbox service probes /api/healthz with backoff (1, 2, 4 … s) and then drains.
        #expect(gate.terminal.wait { gate.terminal.stderr.contains("offline scan of \(late.shortId) delivered") })
        let scans = try gate.http.get("/api/visitor-scanner/scan-history", token: try gate.token("owner@demo.gatepass")).json
        let items = ((scans?["items"] as? [[String: Any]]) ?? []).filter { $0["shortId"] as? String == late.shortId }
        #expect(items.count == 1)
        #expect(items.first?["offline"] as? Bool == true && items.first?["result"] as? String == "CHECKED_IN")
        #expect(items.first?["scannedAt"] as? String == Timestamp(queued.scannedAt!).description)
    }

    @Test func kioskArgumentsAreChecked() {
        #expect(GatePassCLI.main(["gatepass", "kiosk"], terminal: RecordingTerminal()) == 2)
        #expect(GatePassCLI.main(["gatepass", "kiosk", "--dir", "a", "--video", "b.y4m"], terminal: RecordingTerminal()) == 2)
        #expect(GatePassCLI.main(["gatepass", "kiosk", "--dir", "a", "--size", "640x480"], terminal: RecordingTerminal()) == 2)
        #expect(GatePassCLI.main(["gatepass", "kiosk", "--device", "/dev/video0", "--size", "huge"], terminal: RecordingTerminal()) == 2)
        #expect(GatePassCLI.main(["gatepass", "kiosk", "--dir", "a", "--cooldown", "-1"], terminal: RecordingTerminal()) == 2)
        for bad in [["--offline-policy", "allow"], ["--offline-policy", "SIGNED"], ["--offline-policy", ""],
                    ["--offline-after-ms", "0"], ["--offline-after-ms", "1.5"], ["--offline-after-ms", "99999999"]] {
            let terminal = RecordingTerminal()
            #expect(GatePassCLI.main(["gatepass", "kiosk", "--dir", "a"] + bad, terminal: terminal) == 2, "\(bad)")
            #expect(terminal.stderr.contains(bad[0]))
        }
        let help = RecordingTerminal()
        #expect(GatePassCLI.main(["gatepass", "kiosk", "--help"], terminal: help) == 0)
        #expect(help.stdout.contains("USAGE: gatepass kiosk"))
        // Without a login the kiosk says how to log in.
        let lonely = RecordingTerminal()
        let state = temporaryPath("nobody")
        defer { try? FileManager.default.removeItem(atPath: state) }
        let status = GatePassCLI.main(["gatepass", "kiosk", "--dir", "/tmp"], terminal: lonely,
                                      environment: ["GATEPASS_STATE_DIR": state])
        #expect(status == 1 && lonely.stderr.contains("gatepass login"))
    }
}
