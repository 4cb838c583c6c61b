import Foundation
import GatePassCore
import HTTPServer
import LoopbackHTTP
import Synchronization
import Testing
@testable import GatePassServer

/// Parses CSV with Python's csv module in strict mode (a real parser, not ours).
func rowsParsedByPython(_ csv: [UInt8]) throws -> [[String]] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    process.arguments = ["-c", """
        import csv, io, json, sys
        text = sys.stdin.buffer.read().decode('utf-8')
        sys.stdout.write(json.dumps(list(csv.reader(io.StringIO(text, newline=''), strict=True))))
        """]
    let input = Pipe(), output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    try process.run()
    // Written from another thread: a large export would fill the pipe before Python answers.
    let writer = Thread {
        input.fileHandleForWriting.write(Data(csv))
        try? input.fileHandleForWriting.close()
    }
    writer.start()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw TestFailure("python's csv module refused the export") }
    return try JSONDecoder().decode([[String]].self, from: data)
}

/// Text from outside in CSV exports and log lines (issue 9, item 3).
@Suite struct CSVExportEncodingTests {
    /// Scanned texts with every line-break form, quotes, commas and formula starts.
    static let hostileTexts = [
        "He said \"hi\", then left", "=HYPERLINK(\"http://evil.test\",\"click\")", "+1 phone", "@SUM(A1)", "-2+3",
        "line\nbreak", "carriage\rreturn", "crlf\r\nbreak", "\r\nCRLF first", "\rCR first", "\tTab first",
        "next\u{85}line", "line\u{2028}separator", "para\u{2029}separator", "\u{1B}[2Kescape", "trailing,\n",
    ]

    static func expected(_ value: String) -> String {
        guard let first = value.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first) else { return value }
        return "'" + value
    }

    @Test func everyHostileScanIsReadBackByARealParser() throws {
        try withSite { server, site in
            for text in Self.hostileTexts {
                server.clock.advance(by: 1)
                #expect(try server.checkIn(site.scanner, text).status == 400)
            }
            let export = try server.get("/api/admin/scan-history.csv", token: site.adminToken)
            #expect(export.status == 200)
            #expect(export.headers["content-type"] == "text/csv; charset=utf-8")
            #expect(export.headers["content-disposition"] == "attachment; filename=\"scan-history.csv\"")
            let rows = try rowsParsedByPython(export.body)
            #expect(rows.first == ["id", "shortId", "raw", "result", "visitorId", "checkpointId", "scannedBy", "scannedAt",
                                   "receivedAt", "offline", "offlineDecision", "visitorName", "company", "gateName", "guardName",
                                   "scannedAtLocal"])
            #expect(rows.count == 1 + Self.hostileTexts.count)
            #expect(rows.allSatisfy { $0.count == 16 })
            // Newest first: the texts come back in reverse order of scanning, each one exact.
            let raws = rows.dropFirst().map { $0[2] }
            #expect(raws == Self.hostileTexts.reversed().map(Self.expected))
        }
    }

    /// 1,234 scans (more than two pages) arrive whole and in order over the socket.
    @Test func aLongExportArrivesWholeAndInOrder() throws {
        try withSite { server, site in
            let count = 1_234
            try Self.insertScans(count, server: server, site: site)
            let export = try server.get("/api/admin/scan-history.csv", token: site.ownerToken)
            #expect(export.status == 200)
            let rows = try rowsParsedByPython(export.body)
            #expect(rows.count == 1 + count)
            #expect(rows.dropFirst().map { $0[2] } == (0..<count).reversed().map { "scan \($0)" })
            let filtered = try server.get("/api/admin/scan-history.csv?result=NOT_FOUND", token: site.ownerToken)
            #expect(try rowsParsedByPython(filtered.body).count == 1 + count / 2)
        }
    }

    /// The 100,000-row cap of the export holds while it streams.
    @Test func theExportStopsAtOneHundredThousandRows() throws {
        try withSite { server, site in
            try Self.insertScans(GatePassApplication.csvRowLimit + 5, server: server, site: site)
            let export = try server.get("/api/admin/scan-history.csv", token: site.ownerToken)
            #expect(export.status == 200)
            let lines = export.text.components(separatedBy: "\r\n")
            #expect(lines.count == 1 + GatePassApplication.csvRowLimit + 1, "header, the rows, and the empty rest after the last CRLF")
            #expect(lines[1].contains(",scan \(GatePassApplication.csvRowLimit + 4),"), "newest first")
        }
    }

    /// Half NOT_FOUND, half INVALID; raw "scan N", one second apart, oldest first.
    static func insertScans(_ count: Int, server: TestServer, site: Site) throws {
        let start = server.clock.now()
        let organization = site.organizationId, checkpoint = site.mainGate, user = site.owner.id
        try server.store.write { tx in
            for index in 0..<count {
                let at = Timestamp(start.addingTimeInterval(Double(index)))
                try tx.scans.insert(Scan(id: newIdentifier(), shortId: nil, raw: "scan \(index)",
                                         result: index % 2 == 0 ? .notFound : .invalid, visitorId: nil,
                                         checkpointId: checkpoint, scannedBy: user, scannedAt: at, receivedAt: at,
                                         offline: false),
                                    organizationId: organization, kioskId: nil)
            }
        }
    }
}

/// Request log lines after hostile methods and paths, sent as raw bytes over a real socket.
@Suite struct RequestLogEncodingTests {
    static let hostileRequests: [String] = [
        "G\u{1B}[2KET /api/healthz HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET\u{1B}]0;owned\u{07} /api/healthz HTTP/1.1\r\nHost: x\r\n\r\n",
        "POST\u{7F}\u{01} /api/healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
        "PUT\u{85}\u{9B}2K /api/visitors HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
        "X\u{2028}200\u{202E} /nowhere/\u{1B}[2K HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET\rINJECTED /api/healthz HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /api/%0d%0aGET%20/api/healthz%20200 HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /api/\u{1B}[2K\u{0B}\u{0C} HTTP/1.1\r\nHost: x\r\n\r\n",
        String(repeating: "M\u{1B}", count: 3_000) + " /api/healthz HTTP/1.1\r\nHost: x\r\n\r\n",
    ]

    @Test func everyLoggedLineIsOneVisibleLine() throws {
        ignoreSIGPIPE()
        try withServer { server in
            for request in Self.hostileRequests {
                let client = server.client()
                _ = try? client.sendRaw(Array(request.utf8))
                client.disconnect()
            }
            // A well-formed request last: once its line is there, every earlier answered one is too.
            let healthz = try server.get("/api/healthz")
            #expect(healthz.status == 200)
            let lines = server.log.all
            #expect(lines.last?.hasPrefix("GET /api/healthz 200 ") == true)
            for line in lines {
                #expect(!line.unicodeScalars.contains(where: TerminalText.needsSpelling), "\(line.debugDescription)")
                #expect(line.count < 200, "a request cannot make a huge line: \(line.prefix(80))")
            }
            // The hostile methods that reached the server are there, spelled out.
            #expect(lines.contains { $0.hasPrefix("G\\x1b[2KET (unmatched) 405 ") })
            #expect(lines.contains { $0.hasPrefix("GET\\rINJECTED (unmatched) 405 ") })
            #expect(lines.contains { $0.hasPrefix("PUT<U+0085><U+009B>2K (unmatched) 405 ") })
            #expect(lines.contains { $0.hasPrefix("M\\x1bM\\x1b") && $0.contains("… ") })
            // The raw path is never logged, only the route pattern or "(unmatched)".
            #expect(!lines.contains { $0.contains("nowhere") || $0.contains("%0d") })
        }
    }

    @Test func errorsThatEchoTheMethodSpellItOut() throws {
        try withServer { server in
            // An unknown path's 404 names the method it was asked with.
            let answer = try server.client().sendRaw(Array("G\u{1B}[2KET\u{202E} /nowhere HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
            let message = try #require(answer.json?["error"] as? [String: Any])["message"] as? String
            #expect(answer.status == 404)
            #expect(message == "no route G\\x1b[2KET<U+202E> for this path")
        }
    }
}
