import Foundation
import GatePassCore
import GatePassTestSupport
import Testing
@testable import GatePassServer

/// The invitation and the pass page show the validity in the organization's zone with the
/// zone's name, on a site east of UTC and one west: a pass valid all of 6 December reads
/// `06 Dec 2026 00:00–23:59 (zone)` in both.
@Suite(.serialized) struct SiteTimeMailAndPageTests {
    @Test(arguments: ["Europe/Bucharest", "America/Los_Angeles"])
    func theInvitationAndThePageGiveTheWindowInTheSitesZone(_ zoneName: String) throws {
        let zone = try #require(TimeZone(identifier: zoneName))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let noon = try #require(calendar.date(from: DateComponents(year: 2026, month: 12, day: 6, hour: 12)))
        let day = ValidityWindow.day(containing: noon, in: zone)
        try withServer(configure: { $0.timeZone = zoneName }) { server in
            let site = try server.makeMailSite()
            let (_, link) = try server.invitedVisitor(site, [
                "name": "Ada Lovelace", "hostName": "Grace Hopper",
                "validFrom": Timestamp.format(day.from), "validUntil": Timestamp.format(day.until),
            ])
            let window = "06 Dec 2026 00:00\u{2013}23:59 (\(zoneName))"
            let page = try server.get(passPath(link)).text
            #expect(page.contains(window), "\(page)")

            let mail = try #require(try server.mailLog().first { $0.kind == .invitation })
            let text = try server.devMailText(mail.id, kind: "invitation")
            #expect(text.contains("you are expected at Acme: \(window)."), "\(text)")

            // The host's arrival notice: the test clock's 12:00 UTC on 29 November.
            let guest = try server.createVisitor(site.ownerToken, ["name": "Ana Pop", "hostName": "Grace", "hostEmail": "grace@acme.test"])
            #expect(try server.checkIn(site.scanner, guest["shortId"] as? String ?? "").json?["result"] as? String == "CHECKED_IN")
            var arrival: MailSummary?
            _ = server.mailWorker.changes.wait { arrival = try? server.mailLog().first { $0.kind == .arrival }; return arrival != nil }
            let notice = try server.devMailText(try #require(arrival).id, kind: "arrival")
            let local = zoneName == "Europe/Bucharest" ? "29 Nov 2026 14:00" : "29 Nov 2026 04:00"
            #expect(notice.hasPrefix("Ana Pop checked in at Main gate on \(local) (\(zoneName))."), "\(notice)")
        }
    }
}

extension TestServer {
    /// The plain text of the `.eml` file that `--dev` wrote for mail `id` of `kind`.
    func devMailText(_ id: String, kind: String) throws -> String {
        let prefix = "dev: mail \(id) (\(kind)) written to "
        var line: String?
        _ = mailWorker.changes.wait { line = log.all.first { $0.hasPrefix(prefix) }; return line != nil }
        guard let line else { throw TestFailure("no .eml written for mail \(id): \(log.all)") }
        return try ReceivedMessage.parse(emlFile: String(line.dropFirst(prefix.count))).part("text/plain")?.text ?? ""
    }
}
