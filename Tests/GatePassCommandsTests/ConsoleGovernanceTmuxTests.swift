import Foundation
import LoopbackHTTP
import Testing
@testable import GatePassCommands
@testable import GatePassServer

/// Issue 12's console paths in tmux against a real server (dev mode, the demo data): an admin
/// blocks a visitor and adds a user from the Blocklist and Users tabs; a blocked check-in at a
/// gate pops a security alert up over whatever tab the admin is on.
@Suite(.serialized) struct ConsoleGovernanceTmuxTests {
    typealias Run = ConsoleTabsTmuxTests.Run

    /// Logs `email` in with the command line in its own state folder (a second device).
    func logInElsewhere(_ run: Run, _ email: String, stateDirectory: String) throws {
        _ = try LoopbackHTTPClient(port: run.server.port).send("POST", "/api/auth/send-otp", json: ["email": email])
        let login = try ConsoleTabsTmuxTests().gatepass(
            ["login", "--server", "http://127.0.0.1:\(run.server.port)", "--email", email, "--otp", try run.code(email)],
            stateDirectory: stateDirectory)
        #expect(login.status == 0, "login: \(login.output)")
    }

    /// Blocks "Ana Pop" from the Blocklist tab (the reason typed after the name).
    func block(_ run: Run, name: String, reason: String) throws {
        let tmux = run.tmux
        try tmux.keys("7")
        #expect(try run.waitFor("Blocklist · "))
        #expect(try run.waitFor("Nobody is blocked. Press n to add an entry."))
        try tmux.keys("n")
        #expect(try run.waitFor("New blocklist entry"))
        try tmux.keys("-l", name)
        for _ in 0..<4 { try tmux.keys("Tab") }
        #expect(try run.waitFor("> Reason"))
        try tmux.keys("-l", reason)
        try tmux.keys("C-s")
        #expect(try run.waitFor("Added \(name): every gate now stops a match."))
        #expect(try run.waitUntil { screen in
            ConsoleTabsTmuxTests.rows(of: screen).contains { $0.hasPrefix(name) && $0.contains(reason) && $0.hasSuffix("never") }
        }, "the entry is listed: \((try? tmux.screen()) ?? "")")
    }

    @Test func anAdminBlocksAVisitorAndAddsAUserButIsNotOfferedToChangeTheOwner() throws {
        try ConsoleTabsTmuxTests().withConsole { run in
            let tmux = run.tmux
            try run.logIn("admin@demo.gatepass")
            let tabBar = try #require(try run.lines().first)
            #expect(tabBar.contains("1 Approvals") && tabBar.contains("6 More") && tabBar.contains(" 9 "), "the admin's tabs: \(tabBar)")

            try block(run, name: "Ana Pop", reason: "tmux test ban")
            #expect(try run.count("SELECT COUNT(*) FROM blocklist_entries WHERE name = ?", "Ana Pop") == 1)

            try tmux.keys("8")
            #expect(try run.waitFor("you are ADMIN"))
            #expect(try run.waitUntil { screen in
                ConsoleTabsTmuxTests.rows(of: screen).contains { $0.contains("owner@demo.gatepass") && $0.contains("OWNER") }
            })
            // The owner is listed first and selected: an admin is not offered to change them.
            try tmux.keys("e")
            #expect(try run.waitFor("Not offered: ADMIN may change ADMIN, APPROVER, HOST users, not OWNER."))
            try tmux.keys("n")
            #expect(try run.waitFor("New user · they log in with a code"))
            try tmux.keys("-l", "guard@demo.gatepass")
            try tmux.keys("Tab")
            try tmux.keys("-l", "Gus Guard")
            try tmux.keys("Tab")
            #expect(try run.waitFor("> Role"))
            #expect(try run.waitFor("< HOST >"))
            try tmux.keys("C-s")
            #expect(try run.waitFor("Added Gus Guard <guard@demo.gatepass> as HOST"))
            #expect(try run.count("SELECT COUNT(*) FROM users WHERE email = ? AND role = 'HOST'", "guard@demo.gatepass") == 1)

            try tmux.keys("q")
            #expect(run.exitStatus() == "EXIT=0\n")
        }
    }

    @Test func aBlockedCheckInPopsASecurityAlertUpOverAnyTab() throws {
        try ConsoleTabsTmuxTests().withConsole { run in
            let tmux = run.tmux
            let expected = try #require(run.shortIds["EXPECTED"])
            try run.logIn("admin@demo.gatepass")
            try block(run, name: "Ana Pop", reason: "tmux alert test")
            // The admin moves on to another tab; the gate is another device.
            try tmux.keys("3")
            #expect(try run.waitFor("Visitors from "))
            let gateState = run.directory + "/gate-state"
            try logInElsewhere(run, "owner@demo.gatepass", stateDirectory: gateState)
            let checkIn = try ConsoleTabsTmuxTests().gatepass(["checkin", expected], stateDirectory: gateState)
            #expect(checkIn.output.contains("BLOCKED"), "the gate's answer: \(checkIn.output)")
            #expect(!checkIn.output.contains("tmux alert test"), "the reason is never shown at the gate")

            #expect(try run.waitFor("SECURITY ALERT"), "the alert pops up without a key press")
            #expect(try run.waitFor("Ana Pop at Main gate"))
            #expect(try tmux.screen().contains("Visitors from "), "over the tab the admin was on")
            // A key for the tab below does not dismiss it; Enter does.
            try tmux.keys("4")
            #expect(try run.waitFor("SECURITY ALERT") && !(try tmux.screen().contains("On site now: ")))
            try tmux.keys("Enter")
            #expect(try run.waitForAbsence("SECURITY ALERT"))
            try tmux.keys("7")
            #expect(try run.waitFor("Recent matches at the gates"))
            #expect(try run.waitFor("Ana Pop at Main gate (entry Ana Pop)"))

            try tmux.keys("q")
            #expect(run.exitStatus() == "EXIT=0\n")
        }
    }

    @Test func theAuditTabListsTheGatesCheckInAndEnterOpensTheVisitor() throws {
        try ConsoleTabsTmuxTests().withConsole { run in
            let tmux = run.tmux
            let expected = try #require(run.shortIds["EXPECTED"])
            try run.logIn("admin@demo.gatepass")
            let gateState = run.directory + "/gate-state"
            try logInElsewhere(run, "owner@demo.gatepass", stateDirectory: gateState)
            let checkIn = try ConsoleTabsTmuxTests().gatepass(["checkin", expected], stateDirectory: gateState)
            #expect(checkIn.output.contains("CHECKED_IN"), "the gate's answer: \(checkIn.output)")

            try tmux.keys("9")
            #expect(try run.waitFor("Audit · action all · actor all · visitor all"))
            #expect(try run.waitFor("visitor.checkin"), "the check-in is in the log: \((try? tmux.screen()) ?? "")")
            #expect(try run.waitFor("session.login"))
            // The newest entry is selected: the check-in, with the change under the list.
            #expect(try run.waitFor(#"after:  {"#))
            try tmux.keys("v")
            #expect(try run.waitUntil { $0.contains("· visitor ") && !$0.contains("· visitor all") && $0.contains("visitor.checkin") })
            try tmux.keys("Enter")
            #expect(try run.waitFor("Ana Pop — checked in"), "Enter opens the visitor")
            try tmux.keys("Escape")
            #expect(try run.waitFor("Audit · action all"))
            try tmux.keys("x")
            #expect(try run.waitFor("Audit · action all · actor all · visitor all"))
            try tmux.keys("q")
            #expect(run.exitStatus() == "EXIT=0\n")
        }
    }

    @Test func aHostSeesOnlyTheirVisitorsAndIsOfferedNeitherDecisionsNorCheckOut() throws {
        try ConsoleTabsTmuxTests().withConsole { run in
            let tmux = run.tmux
            try run.logIn("host@demo.gatepass")
            let tabBar = try #require(try run.lines().first)
            #expect(tabBar.contains("1 Visitors") && tabBar.contains("2 More") && !tabBar.contains("Approvals")
                    && !tabBar.contains("Blocklist") && !tabBar.contains("3 "), "the host's tabs: \(tabBar)")
            #expect(try run.waitFor("Visitors from "))
            #expect(try run.waitFor("Mihai Ionescu") && (try run.waitFor("Ana Pop")))
            #expect(!(try tmux.screen().contains("Elena Radu")), "a visitor hosted by someone else is not listed")
            try tmux.keys("/")
            try tmux.keys("-l", "Mihai")
            try tmux.keys("Enter")
            #expect(try run.waitFor("· search \"Mihai\" · 1 shown"))
            try tmux.keys("Enter")
            #expect(try run.waitFor("Mihai Ionescu — expected"))
            #expect(try run.waitFor("c: cancel · i: invitation · p: pass · Esc: back"))
            let detail = try tmux.screen()
            #expect(!detail.contains("a: approve") && !detail.contains("o: check out"))
            try tmux.keys("Escape")
            #expect(try run.waitFor("· search \"Mihai\" · 1 shown"))
            try tmux.keys("q")
            #expect(run.exitStatus() == "EXIT=0\n")
        }
    }
}
