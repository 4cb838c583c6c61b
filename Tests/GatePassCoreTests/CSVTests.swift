import Foundation
import Testing
@testable import GatePassCore

/// Parses CSV with Python's csv module (strict mode) — a real parser, not ours — and returns
/// its rows.
func rowsParsedByPython(_ csv: String) throws -> [[String]] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    process.arguments = ["-c", """
        import csv, io, json, sys
        text = sys.stdin.buffer.read().decode('utf-8')
        rows = list(csv.reader(io.StringIO(text, newline=''), strict=True))
        sys.stdout.write(json.dumps(rows))
        """]
    let input = Pipe(), output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    try process.run()
    input.fileHandleForWriting.write(Data(csv.utf8))
    try input.fileHandleForWriting.close()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw CSVParseFailure(status: process.terminationStatus) }
    return try JSONDecoder().decode([[String]].self, from: data)
}

struct CSVParseFailure: Error { var status: Int32 }

@Suite("CSV cells")
struct CSVTests {
    /// Every line-break form, quotes, commas and every formula start, alone and combined.
    static let hostileCells: [String] = [
        "plain", "", "a,b", "say \"hi\"", "\"", "line\nbreak", "line\rbreak", "line\r\nbreak", "\r\n", "\n",
        "next\u{85}line", "line\u{2028}separator", "para\u{2029}separator", "=1+2", "+1", "-1", "@SUM(A1)",
        "\tTab", "\rCR first", "\r\nCRLF first", "=HYPERLINK(\"http://x\",\"y\")", "-2+3,\"x\"\n", "'already",
        "李 Ana", "e\u{301}\u{301}", "trailing\n", "=", "\u{2028}",
    ]

    /// What a parser must read back: the value, with `'` in front when it starts a formula.
    static func expectedCell(_ value: String) -> String {
        guard let first = value.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first) else { return value }
        return "'" + value
    }

    @Test func pythonsParserReadsBackEveryCell() throws {
        var csv = CSV.row(["header", "value", "after"])
        for value in Self.hostileCells { csv += CSV.row(["row", value, "end"]) }
        let rows = try rowsParsedByPython(csv)
        #expect(rows.count == Self.hostileCells.count + 1)
        for (index, value) in Self.hostileCells.enumerated() where index + 1 < rows.count {
            #expect(rows[index + 1] == ["row", Self.expectedCell(value), "end"], "cell \(index): \(value.debugDescription)")
        }
        // All the cells of one row, too.
        let wide = try rowsParsedByPython(CSV.row(Self.hostileCells))
        #expect(wide == [Self.hostileCells.map(Self.expectedCell)])
    }

    /// Python splits lines only at CR and LF; a spreadsheet or JavaScript parser also breaks at
    /// NEL and the Unicode separators, so those cells must be quoted as well.
    @Test(arguments: ["a\u{85}b", "a\u{2028}b", "a\u{2029}b", "a\r\nb", "a\rb", "a\nb"])
    func everyLineBreakIsQuoted(_ value: String) {
        #expect(CSV.cell(value) == "\"" + value + "\"")
    }

    @Test(arguments: ["=", "+", "-", "@", "\t", "\r"])
    func formulaStartsAreDefused(_ start: String) {
        let cell = CSV.cell(start + "1")
        #expect(cell.hasPrefix("'") || cell.hasPrefix("\"'"))
        #expect(CSV.cell("a" + start) == (start == "\r" ? "\"a\r\"" : "a" + start), "only the first character counts")
    }

    @Test func quotesAreDoubled() {
        #expect(CSV.cell("a\"b") == "\"a\"\"b\"")
        #expect(CSV.cell("plain text") == "plain text")
    }

    @Test func theScanHistoryHeaderKeepsItsColumnsAndAppendsTheNames() {
        #expect(ScanHistoryCSV.header == "id,shortId,raw,result,visitorId,checkpointId,scannedBy,scannedAt,receivedAt,offline,offlineDecision,"
                + "visitorName,company,gateName,guardName,scannedAtLocal\r\n")
    }

    @Test func aRowNamesItsIdsInCellsOfTheirOwnAndTheSitesTime() throws {
        let at = try #require(Timestamp.parse("2026-12-06T01:48:22Z"))
        let scan = Scan(id: "s1", shortId: "K7Q2M9XD", raw: "GP1:K7Q2M9XD", result: .checkedIn, visitorId: "v1",
                        checkpointId: "c1", scannedBy: "u1", scannedAt: Timestamp(at), receivedAt: Timestamp(at), offline: false)
        let named = NamedScan(scan: scan, visitorName: "=cmd|' /C calc'!A0", company: "Acme, \"Ltd\"", gateName: "-Gate\r\n2",
                              guardName: "@Guard")
        let east = ScanHistoryCSV.row(named, site: try #require(SiteClock(zoneNamed: "Europe/Bucharest")))
        #expect(east == "s1,K7Q2M9XD,GP1:K7Q2M9XD,CHECKED_IN,v1,c1,u1,2026-12-06T01:48:22Z,2026-12-06T01:48:22Z,false,,"
                + "'=cmd|' /C calc'!A0,\"Acme, \"\"Ltd\"\"\",\"'-Gate\r\n2\",'@Guard,2026-12-06T03:48:22+02:00\r\n")
        let west = ScanHistoryCSV.row(NamedScan(scan: scan), site: try #require(SiteClock(zoneNamed: "America/New_York")))
        #expect(west.hasSuffix(",false,,,,,,2026-12-05T20:48:22-05:00\r\n"))
    }
}
