import Foundation
import GatePassCore
import Testing
@testable import GatePassConsole

@Suite struct UsersScreenTests {
    static let people = [
        Fixtures.user("u1", "Olivia Owner", .owner, lastLogin: Fixtures.now.addingTimeInterval(-600)),
        Fixtures.user("u2", "Adam Admin", .admin),
        Fixtures.user("u3", "Ion Approver", .approver, scans: true),
        Fixtures.user("u4", "Hana Host", .host, disabled: true),
    ]

    func withScreen(as me: ConsoleUser, users: [UserSummary] = UsersScreenTests.people,
                    _ body: (UsersScreen, FakeGovernanceServices) throws -> Void) rethrows {
        let services = FakeGovernanceServices()
        services.users = users
        let screen = UsersScreen(services: services, me: me, clock: TestClock().function, fallbackZone: TimeZone(identifier: "UTC")!)
        #expect(screen.appear() == .redraw)
        try body(screen, services)
    }

    static let owner = ConsoleUser(name: "Olivia Owner", email: "olivia@example.com", role: .owner, server: "http://gate.test", mayScan: true)
    static let admin = ConsoleUser(name: "Adam Admin", email: "adam@example.com", role: .admin, server: "http://gate.test", mayScan: true)

    func select(_ screen: UsersScreen, _ id: String) {
        _ = screen.handle(.home)
        while screen.selectedUser?.profile.id != id, screen.handle(.down) == .redraw {}
    }

    @Test func listsRoleScanningStateAndLastLogin() {
        withScreen(as: Self.owner) { screen, _ in
            let canvas = Fixtures.render(screen, width: 100, height: 8)
            #expect(canvas.line(0) == "Users · 4 · 1 disabled · you are OWNER")
            #expect(canvas.line(1).hasPrefix("Name") && canvas.line(1).hasSuffix("Last login"))
            #expect(canvas.line(2).hasPrefix("Olivia Owner") && canvas.line(2).contains("OWNER") && canvas.line(2).hasSuffix("17:56"))
            #expect(canvas.line(4).contains("APPROVER") && canvas.line(4).contains("yes"))
            #expect(canvas.line(5).contains("HOST") && canvas.line(5).contains("disabled") && canvas.line(5).hasSuffix("never"))
            #expect(canvas[0, 5].style == .dim)
        }
        withScreen(as: Self.owner, users: []) { screen, services in
            #expect(Fixtures.render(screen, width: 80, height: 6).line(1) == "No users.")
            services.usersError = .offline("connection refused")
            _ = screen.handle(.character("r"))
            #expect(Fixtures.render(screen, width: 120, height: 6).line(1)
                    == "Could not load the users. The server cannot be reached (connection refused); try again when it is back.")
        }
    }

    @Test func hostileAndOversizedNamesAreSpelledOutAndCut() {
        var evil = Fixtures.user("u5", "Eve", .host)
        evil.profile.name = "Eve\u{1B}[2J\u{1B}]0;owned\u{7}\u{202E}" + String(repeating: "E", count: 5_000)
        evil.profile.email = "eve\u{1B}[31m@example.com"
        withScreen(as: Self.owner, users: [evil]) { screen, _ in
            let canvas = Fixtures.render(screen, width: 80, height: 6)
            #expect(!canvas.text.contains("\u{1B}") && !canvas.text.contains("\u{7}") && !canvas.text.contains("\u{202E}"))
            #expect(canvas.text.split(separator: "\n", omittingEmptySubsequences: false).count == 6)
            #expect(canvas.line(2).hasPrefix(#"Eve\x1b[2J"#) && canvas.line(2).contains("…") && canvas.line(2).contains("HOST"))
            _ = screen.handle(.character("d"))
            #expect(!Fixtures.render(screen, width: 80, height: 6).text.contains("\u{1B}"), "the question spells the name out too")
        }
    }

    @Test func anAdminIsOfferedNoOwnerRoleAndCannotChangeAnOwner() throws {
        try withScreen(as: Self.admin) { screen, services in
            _ = screen.handle(.character("n"))
            #expect(screen.offeredRoles == [.host, .approver, .admin], "the roles an ADMIN may give, least first")
            _ = screen.handle(.escape)
            select(screen, "u1")
            #expect(screen.handle(.character("e")) == .redraw && !screen.isFormOpen)
            #expect(screen.notice?.text == "Not offered: ADMIN may change ADMIN, APPROVER, HOST users, not OWNER.")
            #expect(screen.handle(.character("d")) == .redraw && screen.confirmingToggle == nil)
            // Nobody disables themself or changes their own role.
            select(screen, "u2")
            _ = screen.handle(.character("d"))
            #expect(screen.confirmingToggle == nil)
            #expect(screen.notice?.text == "Not offered: nobody changes their own role or disabled; ask another OWNER or ADMIN.")
            _ = screen.handle(.character("e"))
            #expect(screen.offeredRoles == [.admin], "their own role only")
            _ = screen.handle(.escape)
            #expect(services.updates.isEmpty)
        }
    }

    @Test func theLastOwnerIsNotOfferedForDisablingOrDemotion() {
        let bea = ConsoleUser(name: "Bea Second", email: "bea@example.com", role: .owner, server: "http://gate.test", mayScan: true)
        withScreen(as: bea, users: Self.people + [Fixtures.user("u9", "Bea Second", .owner)]) { screen, _ in
            select(screen, "u1")
            _ = screen.handle(.character("d"))
            #expect(screen.confirmingToggle?.profile.id == "u1", "two owners: one may go")
            _ = screen.handle(.escape)
        }
        withScreen(as: bea, users: [Fixtures.user("u1", "Olivia Owner", .owner), Fixtures.user("u9", "Bea Second", .owner, disabled: true)]) { screen, _ in
            select(screen, "u1")
            _ = screen.handle(.character("d"))
            #expect(screen.confirmingToggle == nil)
            #expect(screen.notice?.text == "Not offered: this is the organization's last OWNER: make another user OWNER first.")
            _ = screen.handle(.character("e"))
            #expect(screen.offeredRoles == [.owner])
        }
    }

    @Test func addingAUserSendsTheFormOnceAndSelectsTheNewUser() throws {
        try withScreen(as: Self.owner) { screen, services in
            _ = screen.handle(.character("n"))
            #expect(screen.isCapturingText)
            _ = screen.handle(.control("s"))
            #expect(services.created.isEmpty && screen.form?.notice?.text == "Not sent: email is required.")
            Fixtures.type("New.Person@Example.com", into: screen)
            _ = screen.handle(.tab)
            Fixtures.type("New \u{1B}[2JPerson", into: screen)
            #expect(screen.form?.text(1) == "New [2JPerson", "a control character is not typed")
            _ = screen.handle(.tab)
            _ = screen.handle(.right)   // HOST → APPROVER
            _ = screen.handle(.tab)
            _ = screen.handle(.character(" "))   // may scan
            services.createError = .refused("CONFLICT: a user with that email exists")
            #expect(screen.handle(.enter) == .alert)
            #expect(screen.isFormOpen && screen.form?.notice?.text.contains("CONFLICT") == true)
            services.createError = nil
            _ = screen.handle(.control("s"))
            #expect(services.created.count == 2 && services.created[0].key == services.created[1].key, "one key for the retry")
            let user = try #require(services.created.last?.user)
            #expect(user == NewUser(email: "new.person@example.com", name: "New [2JPerson", role: .approver, canScanCheckpoint: true))
            #expect(!screen.isFormOpen && screen.selectedUser?.profile.email == "new.person@example.com")
            #expect(screen.notice?.text.hasPrefix("Added New [2JPerson <new.person@example.com> as APPROVER") == true)
        }
    }

    @Test func editingSendsOnlyWhatChanged() throws {
        try withScreen(as: Self.owner) { screen, services in
            select(screen, "u3")
            _ = screen.handle(.character("e"))
            #expect(screen.form?.focus == UsersScreen.Field.name.rawValue)
            _ = screen.handle(.control("s"))
            #expect(services.updates.isEmpty && screen.notice?.text == "Nothing changed: nothing was sent.")
            _ = screen.handle(.character("e"))
            _ = screen.handle(.tab)
            _ = screen.handle(.left)   // APPROVER → ADMIN in OWNER, ADMIN, APPROVER, HOST order
            _ = screen.handle(.control("s"))
            let update = try #require(services.updates.last)
            #expect(update.id == "u3" && update.changes == UserChanges(role: .admin))
            #expect(screen.notice?.text == "Changed Ion Approver: ADMIN, scanning allowed.")
            #expect(screen.selectedUser?.profile.id == "u3" && screen.selectedUser?.profile.role == .admin)
        }
    }

    @Test func disablingAsksFirstThenSaysTheSessionsEnded() {
        withScreen(as: Self.owner) { screen, services in
            select(screen, "u3")
            _ = screen.handle(.character("d"))
            #expect(Fixtures.render(screen, width: 120, height: 8).line(7)
                    == "Disable Ion Approver? Their sessions, scanner tokens and live streams end at once. y/n")
            _ = screen.handle(.character("n"))
            #expect(services.updates.isEmpty)
            _ = screen.handle(.character("d"))
            services.updateError = .refused("CONFLICT: changed meanwhile")
            #expect(screen.handle(.character("y")) == .alert && screen.notice?.text == "Not changed: Refused: CONFLICT: changed meanwhile.")
            services.updateError = nil
            _ = screen.handle(.character("d"))
            #expect(screen.handle(.character("y")) == .redraw)
            #expect(services.updates.last?.changes == UserChanges(disabled: true))
            #expect(screen.notice?.text == "Disabled Ion Approver: their sessions, scanner tokens and live streams ended.")
            select(screen, "u4")
            _ = screen.handle(.character("d"))
            _ = screen.handle(.character("y"))
            #expect(services.updates.last?.changes == UserChanges(disabled: false) && screen.notice?.text == "Enabled Hana Host: they may log in again.")
        }
    }
}
