import Foundation
import GatePassCore
import HTTPServer
import Testing
@testable import GatePassServer

/// The CSV export is produced as the socket drains (issue 9, item 7), never built whole.
@Suite struct CSVExportStreamTests {
    /// The answer is a stream, not a body: rows are read from the store a page at a time,
    /// as the bytes are taken.
    @Test func theExportIsReadPageByPageAsTheBytesAreTaken() throws {
        try withSite { server, site in
            try CSVExportEncodingTests.insertScans(CSVExport.pageSize * 2 + 10, server: server, site: site)
            let request = HTTPRequest(method: "GET", path: "/api/admin/scan-history.csv",
                                      headers: ["authorization": "Bearer \(site.ownerToken)"])
            let answered = Locked<HTTPResponse?>(nil)
            server.server.application.respond(to: request) { response in answered.withLock { $0 = response } }
            let response = try #require(answered.withLock { $0 })
            #expect(response.status == 200 && response.body.isEmpty)
            let stream = try #require(response.stream as? CSVExportStream<ScanExportRow>)
            #expect(stream.pagesRead == 1)
            var buffer = [UInt8](repeating: 0, count: 1_000)
            var received: [UInt8] = []
            var pagesSeen: [Int] = []
            while let count = buffer.withUnsafeMutableBytes({ stream.read(into: $0) }) {
                #expect(count > 0, "a CSV stream always has bytes until it ends: it never suspends")
                received += buffer.prefix(count)
                pagesSeen.append(stream.pagesRead)
            }
            stream.finished()
            // The second page was read only after many reads of the first; three pages and an empty check in all.
            #expect(pagesSeen.firstIndex(of: 2).map { $0 > 10 } == true)
            #expect(stream.pagesRead == 3)
            #expect(try rowsParsedByPython(received).count == 1 + CSVExport.pageSize * 2 + 10)
        }
    }

    @Test func aStreamWithASmallLimitStopsAtItAndAFailingPageEndsIt() throws {
        @Sendable func scan(_ index: Int) -> (scan: Scan, seq: Int64) {
            (Scan(id: "id\(index)", shortId: nil, raw: "r\(index)", result: .invalid, visitorId: nil, checkpointId: "c",
                  scannedBy: "u", scannedAt: Timestamp(Date(timeIntervalSince1970: 1_000_000 - Double(index))),
                  receivedAt: Timestamp(Date(timeIntervalSince1970: 0)), offline: false), Int64(10_000 - index))
        }
        @Sendable func row(_ index: Int) -> ScanExportRow {
            let (scanned, seq) = scan(index)
            return ScanExportRow(scan: ExportedScan(named: NamedScan(scan: scanned), organizationId: "o", seq: seq),
                                 site: SiteClock(timeZone: TimeZone(identifier: "UTC")!))
        }
        func drain(_ stream: CSVExportStream<ScanExportRow>) -> String {
            var buffer = [UInt8](repeating: 0, count: 7)
            var out: [UInt8] = []
            while let count = buffer.withUnsafeMutableBytes({ stream.read(into: $0) }) { out += buffer.prefix(count) }
            return String(decoding: out, as: UTF8.self)
        }
        let asked = Locked<[Int]>([])
        let limited = CSVExportStream(.scanHistory, firstPage: (0..<3).map(row), rowLimit: 7, pageSize: 3, readPage: { cursor, limit in
            asked.withLock { $0.append(limit) }
            let start = cursor.map { 10_000 - Int($0.seq) + 1 } ?? 0
            return (start..<(start + limit)).map(row)
        }, onError: { _ in })
        let text = drain(limited)
        #expect(text.components(separatedBy: "\r\n").dropFirst().dropLast().map { $0.split(separator: ",", omittingEmptySubsequences: false)[2] }
                == ["r0", "r1", "r2", "r3", "r4", "r5", "r6"])
        #expect(asked.withLock { $0 } == [3, 1])

        struct Broken: Error {}
        let errors = Locked<Int>(0)
        let failing = CSVExportStream(.scanHistory, firstPage: (0..<3).map(row), rowLimit: 100, pageSize: 3, readPage: { _, _ in throw Broken() },
                                      onError: { _ in errors.withLock { $0 += 1 } })
        #expect(drain(failing).components(separatedBy: "\r\n").count == 5)
        #expect(errors.withLock { $0 } == 1)
    }

}
