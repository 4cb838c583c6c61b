import Foundation
import GatePassCore
import Testing
@testable import GatePassConsole

@Suite struct AuditScreenTests {
    static func entry(_ id: String, _ action: String, actor: AuditActorKind = .user, actorId: String? = "u1", entityId: String? = "v1",
                      minutesAgo: Double = 5, before: String? = nil, after: String? = nil) -> AuditEntry {
        AuditEntry(id: id, at: Fixtures.now.addingTimeInterval(-minutesAgo * 60), actorKind: actor, actorId: actorId, action: action,
                   entity: String(action.prefix { $0 != "." }), entityId: entityId, before: before, after: after)
    }

    static let page = [
        entry("a3", "visitor.checkin", actor: .kiosk, actorId: "c1", before: #"{"status":"APPROVED"}"#, after: #"{"status":"CHECKED_IN"}"#),
        entry("a2", "blocklist.add", entityId: "b1", minutesAgo: 20, after: #"{"name":"Ana Pop"}"#),
        entry("a1", "visitor.checkout", actor: .system, actorId: nil, minutesAgo: 90),
    ]

    func withScreen(_ pages: [String?: AuditPage] = [nil: AuditPage(entries: AuditScreenTests.page, nextCursor: nil)],
                    _ body: (AuditScreen, FakeGovernanceServices) throws -> Void) rethrows {
        let services = FakeGovernanceServices()
        services.auditPages = pages
        services.users = [Fixtures.user("u1", "Olivia Owner", .owner)]
        let screen = AuditScreen(services: services, clock: TestClock().function, fallbackZone: TimeZone(identifier: "UTC")!)
        #expect(screen.appear() == .redraw)
        try body(screen, services)
    }

    @Test func listsEntriesNewestFirstWithActorsByNameAndTheSelectedChange() {
        withScreen { screen, _ in
            let canvas = Fixtures.render(screen, width: 100, height: 10)
            #expect(canvas.line(0) == "Audit · action all · actor all · visitor all · 3 shown")
            #expect(canvas.line(1).hasPrefix("When") && canvas.line(1).contains("Actor") && canvas.line(1).contains("Action"))
            #expect(canvas.line(2).hasPrefix("18:01") && canvas.line(2).contains("kiosk Main gate") && canvas.line(2).contains("visitor.checkin"))
            #expect(canvas.line(3).contains("Olivia Owner") && canvas.line(3).contains("blocklist b1"))
            #expect(canvas.line(4).contains("system") && canvas.line(4).contains("visitor.checkout"))
            #expect(canvas.line(7) == #"before: {"status":"APPROVED"}"#)
            #expect(canvas.line(8) == #"after:  {"status":"CHECKED_IN"}"#)
            _ = screen.handle(.end)
            #expect(Fixtures.render(screen, width: 100, height: 10).line(7) == "before: —")
        }
    }

    /// The visitor an entry is about shows by name (read once per visitor, a few each tick so
    /// a long page never stalls the keys), as do actors; `i` shows the ids instead, and an id
    /// whose visitor cannot be read (erased, gone) stays an id without being asked for again.
    @Test func visitorsAndActorsShowByNameAndIShowsTheIds() {
        let unknown = Self.entry("a4", "visitor.update", entityId: "v9", minutesAgo: 1)
        withScreen([nil: AuditPage(entries: [unknown] + Self.page, nextCursor: nil)]) { screen, services in
            services.visitorNames = ["v1": "Ana\u{1B}[2J Pop"]
            #expect(screen.tick(now: Fixtures.now) == .redraw)
            var canvas = Fixtures.render(screen, width: 110, height: 10)
            #expect(canvas.line(2).contains("Olivia Owner") && canvas.line(2).hasSuffix("visitor v9"))
            #expect(canvas.line(3).contains("kiosk Main gate") && canvas.line(3).hasSuffix(#"visitor Ana\x1b[2J Pop"#))
            #expect(canvas.line(5).hasSuffix(#"visitor Ana\x1b[2J Pop"#))
            #expect(services.calls.filter { $0.hasPrefix("visitor ") } == ["visitor v9", "visitor v1"], "each visitor read once")
            #expect(screen.tick(now: Fixtures.now) == .none)
            #expect(services.calls.filter { $0.hasPrefix("visitor ") }.count == 2, "not asked again")
            #expect(screen.keyHelp.contains { $0.key == "i" })
            _ = screen.handle(.down)
            _ = screen.handle(.character("v"))
            #expect(Fixtures.render(screen, width: 110, height: 10).line(0).hasPrefix(#"Audit · action all · actor all · visitor Ana\x1b[2J Pop"#))
            _ = screen.handle(.character("x"))
            #expect(screen.handle(.character("i")) == .redraw)
            canvas = Fixtures.render(screen, width: 110, height: 10)
            #expect(canvas.line(2).contains("u1 ") && canvas.line(2).hasSuffix("visitor v9"))
            #expect(canvas.line(3).contains("kiosk c1") && canvas.line(3).hasSuffix("visitor v1"))
        }
    }

    @Test func enterOpensTheVisitorOnlyForEntriesAboutAVisitor() {
        withScreen { screen, _ in
            #expect(screen.handle(.enter) == .openVisitor(id: "v1"))
            _ = screen.handle(.down)
            #expect(screen.handle(.enter) == .redraw)
            #expect(screen.notice?.text == "This entry is about a blocklist, not a visitor: nothing to open.")
        }
    }

    @Test func filtersByActionActorAndVisitorAreSentAsTheQuery() {
        withScreen { screen, services in
            _ = screen.handle(.character("a"))
            #expect(services.auditQueries.last == AuditQuery(action: AuditAction.allCases[0].rawValue))
            _ = screen.handle(.character("A"))
            #expect(services.auditQueries.last == AuditQuery())
            _ = screen.handle(.character("A"))
            #expect(services.auditQueries.last == AuditQuery(action: AuditAction.allCases.last?.rawValue), "backwards wraps to the last")
            _ = screen.handle(.character("x"))
            // The first entry's actor is a kiosk; its visitor is v1.
            _ = screen.handle(.character("u"))
            #expect(services.auditQueries.last == AuditQuery(actor: "c1"))
            _ = screen.handle(.character("v"))
            #expect(services.auditQueries.last == AuditQuery(actor: "c1", entityId: "v1"))
            #expect(Fixtures.render(screen, width: 100, height: 10).line(0).hasPrefix("Audit · action all · actor Main gate · visitor v1"))
            _ = screen.handle(.character("u"))
            #expect(services.auditQueries.last == AuditQuery(entityId: "v1"), "u again clears the actor")
            _ = screen.handle(.character("x"))
            #expect(services.auditQueries.last == AuditQuery())
        }
    }

    @Test func mReadsTheOlderPageByItsCursor() {
        let older = AuditPage(entries: [Self.entry("a0", "session.login", entityId: nil, minutesAgo: 600)], nextCursor: nil)
        withScreen([nil: AuditPage(entries: Self.page, nextCursor: "c-2"), "c-2": older]) { screen, services in
            #expect(Fixtures.render(screen, width: 100, height: 10).line(0).hasSuffix("3 shown, more: m"))
            _ = screen.handle(.character("m"))
            #expect(services.auditQueries.last?.cursor == "c-2")
            #expect(screen.entries.map(\.id) == ["a3", "a2", "a1", "a0"])
            _ = screen.handle(.character("m"))
            #expect(screen.notice?.text == "Nothing older: this is the whole log for these filters.")
        }
    }

    @Test func hostileValuesAreEscapedEmptyAndErrorsAreLines() {
        let hostile = Self.entry("h1", "visitor.update", entityId: "v\u{1B}[2J",
                                 after: "{\"name\":\"Eve\u{1B}]0;owned\u{7}\u{202E}" + String(repeating: "x", count: 3_000) + "\"}")
        withScreen([nil: AuditPage(entries: [hostile], nextCursor: nil)]) { screen, services in
            let canvas = Fixtures.render(screen, width: 80, height: 8)
            #expect(!canvas.text.contains("\u{1B}") && !canvas.text.contains("\u{7}") && !canvas.text.contains("\u{202E}"))
            #expect(canvas.line(6).hasPrefix(#"after:  {"name":"Eve\x1b]0;owned\x07<U+202E>xx"#) && canvas.line(6).hasSuffix("…"))
            services.auditPages = [:]
            _ = screen.handle(.character("a"))
            #expect(Fixtures.render(screen, width: 80, height: 8).line(1) == "No entry matches. Press x to clear the filters.")
            services.auditError = .refused("FORBIDDEN: OWNER or ADMIN only")
            _ = screen.handle(.character("r"))
            #expect(Fixtures.render(screen, width: 80, height: 8).line(1) == "Could not load the audit log. Refused: FORBIDDEN: OWNER or ADMIN only.")
        }
    }
}
