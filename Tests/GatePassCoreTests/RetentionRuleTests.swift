import Foundation
import Testing
@testable import GatePassCore

/// The retention rules (api.md "Retention"): what anonymising keeps, and when the daily run is due.
/// Instants are epoch seconds computed outside Swift (Python's zoneinfo), Europe/Bucharest.
@Suite struct RetentionRuleTests {
    static let zone = TimeZone(identifier: "Europe/Bucharest")!

    @Test func anonymisingErasesThePersonalFieldsAndKeepsEverythingElse() {
        var visitor = Fixture.visitor(status: .checkedOut, requiresApproval: true)
        visitor.hostEmail = "ion@acme.test"
        visitor.decisionNote = "Escort to bay 4"
        let anonymised = visitor.anonymised()
        #expect(anonymised.name == "(anonymised)")
        #expect([anonymised.email, anonymised.phone, anonymised.company, anonymised.purpose, anonymised.hostName,
                 anonymised.hostEmail, anonymised.decisionNote].allSatisfy { $0 == nil })
        var kept = anonymised
        kept.name = visitor.name; kept.email = visitor.email; kept.phone = visitor.phone; kept.company = visitor.company
        kept.purpose = visitor.purpose; kept.hostName = visitor.hostName; kept.hostEmail = visitor.hostEmail
        kept.decisionNote = visitor.decisionNote
        #expect(kept == visitor, "only the personal fields change")
        #expect(anonymised.anonymised() == anonymised)
    }

    @Test func theCutoffIsWholeDaysOf24Hours() {
        let now = Fixture.date(1_796_002_200)
        #expect(Retention.cutoff(now: now, retentionDays: 180) == Fixture.date(1_796_002_200 - 180 * 86_400))
    }

    /// (now, last run day, due?)
    static let cases: [(Double, String?, Bool, String)] = [
        (1_796_002_140, "2026-11-29", false, "03:29: not yet"),
        (1_796_002_200, "2026-11-29", true, "03:30 on the dot"),
        (1_796_075_940, "2026-11-29", true, "late in the day: the server was down at 03:30"),
        (1_796_002_200, "2026-11-30", false, "never twice the same day"),
        (1_795_993_200, "2026-11-29", false, "01:00, yesterday's run happened"),
        (1_796_079_600, "2026-11-29", true, "01:00, yesterday's run was missed: caught up now"),
        (1_796_079_600, nil, true, "never ran: due at once"),
        (1_806_195_540, "2027-03-27", false, "02:59 on the day the clocks skip 03:00–04:00"),
        (1_806_195_600, "2027-03-27", true, "04:00, the first minute after the skipped 03:30"),
    ]

    @Test(arguments: cases)
    func theDailyRun(_ testCase: (Double, String?, Bool, String)) {
        let (now, last, due, why) = testCase
        #expect(Retention.isDailyRunDue(now: Fixture.date(now), in: Self.zone, lastRunDay: last.flatMap(LocalDay.init)) == due, "\(why)")
    }
}
