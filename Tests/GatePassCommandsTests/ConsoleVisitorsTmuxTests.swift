import Foundation
import LoopbackHTTP
import Testing
@testable import GatePassCommands
@testable import GatePassServer

/// Issue 11's path through the real console in tmux against a real server (dev mode, mail as
/// `.eml` files): register a visitor with an invitation, the invitation's pass scans at the
/// kiosk, the visitor shows in On site without a key press, is checked out from the console
/// and leaves On site.
@Suite(.serialized) struct ConsoleVisitorsTmuxTests {
    typealias Run = ConsoleTabsTmuxTests.Run

    /// The inline PNG of a mail (the first `image/png` part, base64).
    static func png(inMail mail: String) -> [UInt8]? {
        guard let type = mail.range(of: "Content-Type: image/png"),
              let start = mail.range(of: "\r\n\r\n", range: type.upperBound..<mail.endIndex) else { return nil }
        let rest = mail[start.upperBound...]
        let end = rest.range(of: "\r\n--")?.lowerBound ?? rest.endIndex
        return Data(base64Encoded: String(rest[..<end]), options: .ignoreUnknownCharacters).map { [UInt8]($0) }
    }

    /// Waits (15 s at most) for a mail file in `folder` whose text contains `text`.
    static func mail(in folder: String, containing text: String) -> String? {
        let deadline = Date().addingTimeInterval(15)
        repeat {
            for file in ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted() where file.hasSuffix(".eml") {
                if let body = try? String(contentsOfFile: folder + "/" + file, encoding: .utf8), body.contains(text) { return body }
            }
            Thread.sleep(forTimeInterval: 0.05)
        } while Date() < deadline
        return nil
    }

    /// The kiosk's pane: waits for `text` in it.
    func kioskShows(_ run: Run, _ text: String) throws -> Bool {
        let deadline = Date().addingTimeInterval(15)
        repeat {
            if try run.tmux.run(["capture-pane", "-p", "-t", "kiosk"]).contains(text) { return true }
            Thread.sleep(forTimeInterval: 0.05)
        } while Date() < deadline
        return false
    }

    @Test func registerInTheConsoleTheInvitationsPassScansAtTheKioskOnSiteThenCheckedOut() throws {
        try ConsoleTabsTmuxTests().withConsole { run in
            let tmux = run.tmux
            try run.logIn("owner@demo.gatepass")
            try tmux.keys("3")
            #expect(try run.waitFor("Visitors from "))

            // The registration form: name, email, then Tab to the invitation and Space.
            try tmux.keys("n")
            #expect(try run.waitFor("New visitor · times in"))
            try tmux.keys("-l", "Tess Tmux")
            try tmux.keys("Tab")
            try tmux.keys("-l", "tess@")
            #expect(try run.waitFor("! email must be an email address like ana@example.com"), "the rule is checked as typed")
            try tmux.keys("-l", "example.com")
            #expect(try run.waitForAbsence("! email must be"))
            for _ in 0..<10 { try tmux.keys("Tab") }
            #expect(try run.waitFor("> Invitation   [ ] no invitation mail"))
            try tmux.keys("Space")
            #expect(try run.waitFor("[x] e-mail the pass to the visitor"))
            try tmux.keys("Enter")
            #expect(try run.waitFor("Registered Tess Tmux, pass "))
            let notice = try #require(try run.lines().first { $0.contains("Registered Tess Tmux, pass ") })
            let shortId = try #require(notice.firstMatch(of: try Regex("pass ([0-9A-Z]{8})"))?.output[1].substring.map(String.init))
            #expect(try run.waitFor("the invitation is queued"))

            // The invitation mail, with the pass attached.
            let mail = try #require(Self.mail(in: run.directory + "/mail", containing: "tess@example.com"),
                                    "the invitation .eml was written")
            let png = try #require(Self.png(inMail: mail), "the mail carries the pass PNG")
            let passFile = run.directory + "/invitation-pass.png"
            try Data(png).write(to: URL(fileURLWithPath: passFile))

            // On site first, so the arrival is seen live.
            try tmux.keys("4")
            #expect(try run.waitFor("On site now: "))
            #expect(!(try tmux.screen().contains("Tess Tmux")))

            // The kiosk (its own state folder, an admin logged in) reads the pass from the picture.
            let kioskState = run.directory + "/kiosk-state"
            let login = try ConsoleTabsTmuxTests().gatepass(
                ["login", "--server", "http://127.0.0.1:\(run.server.port)", "--email", "admin@demo.gatepass",
                 "--otp", try sendAndPeek(run, "admin@demo.gatepass")], stateDirectory: kioskState)
            #expect(login.status == 0, "kiosk login: \(login.output)")
            let kiosk = "GATEPASS_STATE_DIR='\(kioskState)' \(ServeProcessTests.executable.path) kiosk --image '\(passFile)'; sleep 60"
            try tmux.run(["new-session", "-d", "-s", "kiosk", "-x", "100", "-y", "10", kiosk])
            #expect(try kioskShows(run, "ADMITTED  Tess Tmux (\(shortId))"))

            // On site shows Tess without a key press; the count went up.
            #expect(try run.waitFor("Tess Tmux"), "the arrival is live on the On site tab")
            #expect(try run.waitUntil { screen in
                ConsoleTabsTmuxTests.rows(of: screen).contains { $0.contains("Tess Tmux") && $0.contains("Main gate") }
            }, "with the gate")

            // Check out from the Visitors tab: search, open, o, y.
            try tmux.keys("3")
            #expect(try run.waitFor("Visitors from "))
            try tmux.keys("/")
            try tmux.keys("-l", "Tess")
            try tmux.keys("Enter")
            #expect(try run.waitFor("· search \"Tess\" · 1 shown"))
            try tmux.keys("Enter")
            #expect(try run.waitFor("Tess Tmux — checked in"))
            // The pass on screen, then back.
            try tmux.keys("p")
            #expect(try run.waitFor("s: save the pass as PNG"))
            #expect(try tmux.screen().contains("▀") && tmux.screen().contains(shortId))
            try tmux.keys("Escape")
            #expect(try run.waitFor("Tess Tmux — checked in"))
            try tmux.keys("o")
            #expect(try run.waitFor("Check Tess Tmux out now? y/n"))
            try tmux.keys("y")
            #expect(try run.waitFor("Checked out."))
            #expect(try run.waitFor("Tess Tmux — checked out"))
            try tmux.keys("Escape")
            // Esc is read as Esc once nothing follows it for 50 ms (else Alt-4): wait for the list.
            #expect(try run.waitFor("· search \"Tess\" · 1 shown"))
            try tmux.keys("4")
            #expect(try run.waitFor("On site now: "))
            #expect(try run.waitForAbsence("Tess Tmux"), "gone from On site")

            try tmux.keys("q")
            #expect(run.exitStatus() == "EXIT=0\n")
        }
    }

    func sendAndPeek(_ run: Run, _ email: String) throws -> String {
        let http = LoopbackHTTPClient(port: run.server.port)
        _ = try http.send("POST", "/api/auth/send-otp", json: ["email": email])
        return try run.code(email)
    }
}
