import CurlHTTP
import Foundation
import GatePassClient
import GatePassConsole
import GatePassConsoleServices
import GatePassCore
import GatePassScanner
import LoopbackHTTP
import Testing
@testable import GatePassServer

/// The Visitors and On site services against a real server (dev mode, mail to `.eml` files):
/// what the console's screens are given is what the server did.
@Suite(.serialized) struct ConsoleVisitorsServerTests {
    struct World {
        let server: GatePassServer
        let services: ClientCoreServices
        let directory: String
        var mailDirectory: String { directory + "/mail" }
        var workDirectory: String { directory + "/work" }

        func code(_ email: String) throws -> String {
            try #require(try LoopbackHTTPClient(port: server.port).get("/api/auth/dev-peek-otp?email=\(email)").json?["otp"] as? String)
        }

        /// A scanner token of the owner (for checking a pass in at the gate).
        func scannerToken() throws -> String {
            let http = LoopbackHTTPClient(port: server.port)
            _ = try http.send("POST", "/api/auth/send-otp", json: ["email": "admin@demo.gatepass"])
            let token = try #require(try http.send("POST", "/api/auth/verify-otp",
                                                   json: ["email": "admin@demo.gatepass", "otp": try code("admin@demo.gatepass")])
                .json?["token"] as? String)
            return try #require(try http.send("POST", "/api/visitor-scanner/token", token: token, json: [String: Any]())
                .json?["scannerToken"] as? String)
        }

        /// Waits (10 s at most, polling the folder) for a mail file whose text contains `text`.
        func mail(containing text: String) -> String? {
            let deadline = Date().addingTimeInterval(10)
            repeat {
                let files = (try? FileManager.default.contentsOfDirectory(atPath: mailDirectory)) ?? []
                for file in files.sorted() where file.hasSuffix(".eml") {
                    if let body = try? String(contentsOfFile: mailDirectory + "/" + file, encoding: .utf8), body.contains(text) {
                        return body
                    }
                }
                Thread.sleep(forTimeInterval: 0.05)
            } while Date() < deadline
            return nil
        }
    }

    func withWorld(_ body: (World) throws -> Void) throws {
        let directory = temporaryPath("console-visitors")
        try FileManager.default.createDirectory(atPath: directory + "/work", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = ServerConfiguration()
        configuration.database = directory + "/server.db"
        configuration.port = 0
        configuration.threads = 4
        configuration.otpResendIntervalSeconds = 0
        configuration.otpSendsPerHour = 1000
        configuration.mailDirectory = directory + "/mail"
        let server = try GatePassServer(configuration: configuration, devMode: true, logSink: ConsoleTmuxTests.Log())
        defer { server.stop() }
        try DemoData.seed(store: server.store, now: Date(), timeZone: .current)
        let transport = CurlSession(options: .init(connectTimeout: .seconds(2), requestTimeout: .seconds(10)))
        let core = try ClientCore(directory: StateDirectory(path: directory + "/state"), transport: transport)
        let services = ClientCoreServices(core: core, transport: transport, defaultServer: nil, workingDirectory: directory + "/work")
        let world = World(server: server, services: services, directory: directory)
        try services.sendCode(server: "http://127.0.0.1:\(server.port)", email: "owner@demo.gatepass")
        _ = try services.logIn(server: "http://127.0.0.1:\(server.port)", email: "owner@demo.gatepass",
                               code: try world.code("owner@demo.gatepass"), allowPurge: false)
        try body(world)
    }

    @Test func registerInviteScanFromThePassOnSiteAndCheckOut() throws {
        try withWorld { world in
            let services = world.services
            let site = try services.site().value
            let siteTime = try #require(SiteClock(zoneNamed: site.timeZone), "the server's zone is a zone: \(site.timeZone)")
            #expect(!site.name.isEmpty)
            let approvers = try services.approvers()
            #expect(approvers.contains { $0.email == "approver@demo.gatepass" })
            #expect(!approvers.contains { $0.email == "owner@demo.gatepass" })

            // Register with an invitation: the mail (an .eml in dev mode) names the visitor.
            let registration = VisitorRegistration(name: "Tess Tmux", email: "tess@example.com", company: "Initech",
                                                   hostName: "Olivia Owner", hostEmail: "owner@demo.gatepass", invite: true)
            let visitor = try services.register(registration, idempotencyKey: "console-test-1")
            #expect(visitor.status == .expected && visitor.hostEmail == "owner@demo.gatepass")
            #expect(try services.register(registration, idempotencyKey: "console-test-1").id == visitor.id,
                    "the same key again is the same registration")
            let mail = try #require(world.mail(containing: "tess@example.com"), "the invitation was written")
            #expect(mail.contains(visitor.shortId.rawValue))

            // Listed today, in the site's day.
            let today = try services.visitors(VisitorListQuery(fromDay: siteTime.day(Date())))
            #expect(today.value.contains { $0.id == visitor.id })
            let searched = try services.visitors(VisitorListQuery(fromDay: siteTime.day(Date()), status: .expected, search: "Tess"))
            #expect(searched.value.map(\.id) == [visitor.id])

            // The pass drawn on screen carries the same text as the printable pass.
            let code = try services.passCode(for: visitor)
            #expect(SignedPassText(parsing: code.text)?.shortId == visitor.shortId, "the signed GP2 text: \(code.text)")
            let png = try services.savePassPNG(for: visitor)
            #expect(png.hasPrefix(world.workDirectory + "/gatepass-pass-"))
            let attributes = try FileManager.default.attributesOfItem(atPath: png)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            let image = try GreyImage(contentsOf: png)
            let decoder = try QRDecoder()
            let decoded = try image.withFrame(index: 0) { try decoder.decode($0) }
            #expect(decoded.texts == [code.text], "the saved PNG scans to the pass text")

            // Scanned at the gate: on site; checked out from the office: gone.
            #expect(try services.onSite().value.entries.compactMap(\.visitor).allSatisfy { $0.id != visitor.id })
            let scanner = try world.scannerToken()
            let checkIn = try LoopbackHTTPClient(port: world.server.port).send(
                "POST", "/api/visitor-scanner/checkin", token: scanner, json: ["shortId": code.text])
            #expect(checkIn.json?["result"] as? String == "CHECKED_IN", "\(checkIn.text)")
            let inside = try services.onSite().value.entries.compactMap(\.visitor)
            let person = try #require(inside.first { $0.id == visitor.id })
            #expect(person.checkpointId.map { services.gateNames()[$0] } == "Main gate")
            #expect(try services.checkOutVisitor(id: visitor.id).status == .checkedOut)
            #expect(try services.onSite().value.entries.compactMap(\.visitor).allSatisfy { $0.id != visitor.id })
            #expect(throws: ConsoleError.self) { try services.inviteVisitor(id: visitor.id) }
        }
    }

    @Test func cancelResendAndTheServersRefusalsAsTheScreensSeeThem() throws {
        try withWorld { world in
            let services = world.services
            let visitor = try services.register(VisitorRegistration(name: "Carl Cancel", email: "carl@example.com"),
                                                idempotencyKey: "console-test-2")
            let page = try services.inviteVisitor(id: visitor.id)
            #expect(page.contains("/p/"))
            #expect(world.mail(containing: "carl@example.com") != nil)
            #expect(try services.cancelVisitor(id: visitor.id).status == .cancelled)
            #expect(throws: ConsoleError.self) { try services.checkOutVisitor(id: visitor.id) }
            // What the form would never send, the server refuses with its own words.
            do {
                _ = try services.register(VisitorRegistration(name: "X", email: "not-an-email"), idempotencyKey: "console-test-3")
                Issue.record("an email without @ was accepted")
            } catch let error as ConsoleError {
                guard case .refused(let message) = error else { Issue.record("not a refusal: \(error)"); return }
                #expect(message.contains("email"))
            }
            #expect(services.userNames().values.contains("Olivia Owner"), "who decided can be named")
        }
    }
}
