import CurlHTTP
import Foundation
import GatePassCore
import Testing
@testable import GatePassServer

/// The pure parts of mail: the calendar entry's text rules, and the worker's retry schedule.
@Suite struct MailComposerTests {
    @Test func calendarTextIsEscapedAndCannotStartAProperty() {
        #expect(MailComposer.icsText("a,b;c\\d") == "a\\,b\\;c\\\\d")
        #expect(MailComposer.icsText("line\r\nATTENDEE:evil@x.test") == "line  ATTENDEE:evil@x.test")
        #expect(MailComposer.icsText("tab\there\u{0}") == "tab here ")
    }

    @Test func longLinesFoldAt75OctetsWithoutSplittingACharacter() {
        let line = "SUMMARY:" + String(repeating: "é", count: 60) + String(repeating: "x", count: 40)
        let folded = MailComposer.fold(line)
        let physical = folded.components(separatedBy: "\r\n")
        #expect(physical.count > 1)
        #expect(physical.allSatisfy { $0.utf8.count <= 75 })
        #expect(physical.dropFirst().allSatisfy { $0.hasPrefix(" ") })
        // Unfolding gives the line back (RFC 5545 §3.1), and every piece is whole UTF-8.
        #expect(physical.first! + physical.dropFirst().map { String($0.dropFirst()) }.joined() == line)
        #expect(MailComposer.fold("SHORT:x") == "SHORT:x")
    }

    @Test func theEntryCoversTheWindow() throws {
        let from = try #require(Timestamp.parse("2026-12-02T09:00:00Z"))
        func entry(until: String) throws -> String {
            let visitor = Visitor(id: "v1", shortId: ShortID("K7Q2M9XD")!, name: "Ana; Pop, Jr.",
                                  validity: ValidityWindow(from: from, until: try #require(Timestamp.parse(until))),
                                  createdAt: from)
            let site = SiteProfile(organizationId: "o", name: "Acme, Inc.", timeZone: TimeZone(identifier: "UTC")!, timeZoneName: "UTC")
            return MailComposer.calendarEntry(visitor, site: site, passURL: "https://gate.example/p/t", from: "gate@example.com")
        }
        let timed = try entry(until: "2026-12-02T17:00:00Z")
        #expect(timed.contains("DTSTART:20261202T090000Z\r\nDTEND:20261202T170000Z\r\n"))
        #expect(timed.contains("SUMMARY:Visit to Acme\\, Inc.\r\n"))
        #expect(timed.hasPrefix("BEGIN:VCALENDAR\r\n") && timed.hasSuffix("END:VCALENDAR\r\n"))
        #expect(timed.contains("METHOD:PUBLISH\r\n"))
        // The default day ends at 23:59:59: the entry ends at midnight.
        #expect(try entry(until: "2026-12-02T23:59:59Z").contains("DTEND:20261203T000000Z\r\n"))
    }

    @Test func retriesBackOffToAnHour() {
        #expect((1...8).map { MailWorker.retryDelay(afterAttempts: $0) } == [60, 120, 240, 480, 960, 1920, 3600, 3600])
        // Over 24 hours that is about 30 attempts, never a storm.
        var elapsed: TimeInterval = 0, attempts = 0
        while elapsed < 24 * 3600 { attempts += 1; elapsed += MailWorker.retryDelay(afterAttempts: attempts) }
        #expect((25...35).contains(attempts))
    }

    @Test func onlyAFiveHundredToTheEnvelopeOrTheDataIsFinal() {
        func error(_ stage: SMTPStage, _ reply: String?) -> SMTPError {
            SMTPError(url: "smtp://relay", stage: stage, curlCode: 55, detail: "refused", serverReply: reply)
        }
        #expect(MailWorker.isPermanent(error(.recipient, "550 no such user")))
        #expect(MailWorker.isPermanent(error(.mailFrom, "553 sender refused")))
        #expect(MailWorker.isPermanent(error(.data, "554 rejected as spam")))
        #expect(!MailWorker.isPermanent(error(.recipient, "451 try later")))
        #expect(!MailWorker.isPermanent(error(.auth, "535 bad credentials")))
        #expect(!MailWorker.isPermanent(error(.connect, nil)))
        #expect(!MailWorker.isPermanent(error(.tls, nil)))
    }

    @Test func loopbackIsTheOnlyPlainTextException() {
        for host in ["127.0.0.1", "127.9.8.7", "localhost", "LOCALHOST", "::1", "[::1]"] {
            #expect(MailSettings.isLoopback(host: host), "\(host)")
        }
        for host in ["10.0.0.1", "128.0.0.1", "mail.example.com", "localhost.example.com", "::2", "", "127.0.0.1.nip.io"] {
            #expect(!MailSettings.isLoopback(host: host), "\(host)")
        }
    }
}
