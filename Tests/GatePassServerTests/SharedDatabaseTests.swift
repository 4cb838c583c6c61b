import Foundation
import GatePassCore
import GatePassTestSupport
import LoopbackHTTP
import Testing
@testable import GatePassServer

/// The database a conformance test runs on: SQLite (a file in the test's folder) or a fresh
/// database in the throw-away PostgreSQL cluster (GatePassTestSupport's PostgresCluster).
enum Backend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgres

    var testDescription: String { rawValue }

    /// Points `configuration` at a new database of this kind, with the state files every
    /// instance of one site shares in `directory`.
    func configure(_ configuration: inout ServerConfiguration, directory: String, url: String?) {
        configuration.secretFile = directory + "/shared.secret"
        configuration.passKeysFile = directory + "/shared.pass-keys"
        if let url { configuration.database = url }
    }

    /// A new PostgreSQL database's URL; nil for SQLite (withTestServer's own file).
    func newDatabase() throws -> String? {
        switch self {
        case .sqlite: return nil
        case .postgres: return try PostgresCluster.shared().makeDatabase()
        }
    }

    /// The backends this machine can run: PostgreSQL only where its server binaries are installed.
    static var available: [Backend] { PostgresCluster.isAvailable ? [.sqlite, .postgres] : [.sqlite] }
}

/// The store's contract, run against both backends through the real API: what handlers rely
/// on (exactly-once check-in, the event log and its replay, idempotency, the OTP limit, the
/// audit chain) holds the same on SQLite and on PostgreSQL.
@Suite struct StoreConformanceTests {
    func withSite<T>(_ backend: Backend, _ body: (TestServer, Site) throws -> T) throws -> T {
        let url = try backend.newDatabase()
        return try withTestServer(configure: { configuration in
            backend.configure(&configuration, directory: NSTemporaryDirectory(), url: url)
            configuration.secretFile = nil
            configuration.passKeysFile = nil
            if url != nil {
                let folder = NSTemporaryDirectory() + "gatepass-pg-\(UUID().uuidString)"
                try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                configuration.secretFile = folder + "/gatepass.secret"
            }
        }) { server in
            return try body(server, try server.makeSite())
        }
    }

    @Test(arguments: Backend.available)
    func oneCheckedInAmongTwentyFour(_ backend: Backend) throws {
        try withSite(backend) { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Racing Visitor"])
            let results = CheckInRaceTests.race(server, shortId: visitor["shortId"] as! String, tokens: [site.scanner])
            _ = try CheckInRaceTests.verify(results, server: server, site: site, visitorId: visitor["id"] as! String)
        }
    }

    @Test(arguments: Backend.available)
    func eventsReplayFromLastEventId(_ backend: Backend) throws {
        try withSite(backend) { server, site in
            let stream = try SSETestClient(port: server.port, token: site.ownerToken)
            for index in 0..<3 {
                let visitor = try server.createVisitor(site.ownerToken, ["name": "Guest \(index)"])
                let answer = try server.client().send("POST", "/api/visitor-scanner/checkin", token: site.scanner,
                                                      json: ["shortId": visitor["shortId"] as! String])
                #expect(answer.status == 200, "\(answer.text)")
            }
            let frames = stream.events(3, timeout: 30)
            try #require(frames.count == 3)
            #expect(frames.count == 3)
            let ids = frames.compactMap(\.id)
            #expect(ids == ids.sorted() && Set(ids).count == 3)
            stream.close()
            // A client that saw the first event gets exactly the next two on reconnecting.
            let again = try SSETestClient(port: server.port, token: site.ownerToken, lastEventId: String(ids[0]))
            let replayed = again.events(2, timeout: 30)
            #expect(replayed.compactMap(\.id) == Array(ids.dropFirst()))
        }
    }

    @Test(arguments: Backend.available)
    func anIdempotentRequestIsAnsweredOnce(_ backend: Backend) throws {
        try withSite(backend) { server, site in
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Once Only"])
            let body: [String: Any] = ["shortId": visitor["shortId"] as! String]
            let first = try server.client().send("POST", "/api/visitor-scanner/checkin", token: site.scanner,
                                                 headers: ["Idempotency-Key": "conformance-1"], json: body)
            let second = try server.client().send("POST", "/api/visitor-scanner/checkin", token: site.scanner,
                                                  headers: ["Idempotency-Key": "conformance-1"], json: body)
            #expect(first.status == 200 && second.status == 200)
            #expect(first.json?["scanId"] as? String == second.json?["scanId"] as? String)
            #expect(first.json?["result"] as? String == "CHECKED_IN" && second.json?["result"] as? String == "CHECKED_IN")
            #expect(try server.history(site.ownerToken, "").count == 1)
        }
    }

    @Test(arguments: Backend.available)
    func theAuditChainVerifies(_ backend: Backend) throws {
        try withSite(backend) { server, site in
            _ = try server.createVisitor(site.ownerToken, ["name": "Audited"])
            server.server.application.auditLog.waitForHead()
            let configuration = server.server.application.configuration
            let verdict = try AuditVerification.verify(database: configuration.database, secretFile: configuration.secretFile)
            guard case .intact(let entries) = verdict else { Issue.record("the chain is \(verdict)"); return }
            #expect(entries > 0)
        }
    }
}
