import Foundation
import GatePassCore
import Testing
@testable import GatePassConsole

/// The Visitors tab's registration form, key by key.
@Suite struct RegistrationFormTests {
    typealias Field = RegistrationForm.Field

    /// A Visitors tab with the form open (site zone Europe/Bucharest).
    func withForm(_ body: (VisitorsScreen, FakeVisitorsServices) throws -> Void) rethrows {
        let services = FakeVisitorsServices()
        let screen = VisitorsScreen(services: services, clock: { Fixtures.now }, fallbackZone: TimeZone(identifier: "UTC")!)
        _ = screen.appear()
        #expect(screen.handle(.character("n")) == .redraw)
        #expect(screen.form != nil && screen.isCapturingText)
        try body(screen, services)
    }

    func focus(_ field: Field, on screen: VisitorsScreen) {
        while screen.form?.focus != field { _ = screen.handle(.tab) }
    }

    /// The form's row for `field` and the row under it, as drawn.
    func rows(of field: Field, _ screen: VisitorsScreen, width: Int = 120, height: Int = 40) -> (String, String) {
        let canvas = Fixtures.render(screen, width: width, height: height)
        let label = "  " + field.label.padding(toLength: 13, withPad: " ", startingAt: 0)
        guard let row = (0..<canvas.height).first(where: { canvas.line($0).hasPrefix(label) || canvas.line($0).hasPrefix("> " + label.dropFirst(2)) })
        else { return ("", "") }
        return (canvas.line(row), row + 1 < canvas.height ? canvas.line(row + 1) : "")
    }

    func problemRow(_ message: String) -> String { String(repeating: " ", count: 15) + "! " + message }

    @Test func theFormShowsEveryFieldOfTheCreateBodyInOrder() {
        withForm { screen, services in
            #expect(services.calls.contains("approvers"))
            let canvas = Fixtures.render(screen, width: 100, height: 24)
            #expect(canvas.line(0) == "New visitor · times in Europe/Bucharest, YYYY-MM-DD HH:MM · empty: today, all day")
            #expect(canvas.line(1) == "> Name         _")
            #expect(canvas.line(2) == "  Email")
            #expect(canvas.line(7) == "  Host email")
            #expect(canvas.line(8) == "  Approver     < any approver >")
            #expect(canvas.line(9) == "  Approval     [ ] admitted on the pass alone")
            #expect(canvas.line(10) == "  Valid from")
            #expect(canvas.line(11) == "  Valid until")
            #expect(canvas.line(12) == "  Invitation   [ ] no invitation mail")
            #expect(canvas.line(23) == "Tab: next · Shift-Tab: back · Space: choose · Ctrl-S: register · Esc: close")
        }
    }

    @Test func tabShiftTabUpDownAndEnterMoveBetweenFieldsAndWrap() {
        withForm { screen, _ in
            #expect(screen.form?.focus == .name)
            _ = screen.handle(.tab)
            #expect(screen.form?.focus == .email)
            _ = screen.handle(.down)
            #expect(screen.form?.focus == .phone)
            _ = screen.handle(.enter)
            #expect(screen.form?.focus == .company)
            _ = screen.handle(.backTab)
            _ = screen.handle(.up)
            #expect(screen.form?.focus == .email)
            _ = screen.handle(.up)
            _ = screen.handle(.up)
            #expect(screen.form?.focus == .invite, "Shift-Tab from the first field wraps to the last")
            _ = screen.handle(.tab)
            #expect(screen.form?.focus == .name)
        }
    }

    @Test func spaceLeftAndRightChooseTheApproverAndToggleTheChoices() {
        withForm { screen, _ in
            focus(.approver, on: screen)
            _ = screen.handle(.character(" "))
            #expect(screen.form?.chosenApprover?.id == "u7")
            #expect(rows(of: .approver, screen).0 == "> Approver     < Ion Ene <ion@example.com> >")
            _ = screen.handle(.right)
            #expect(screen.form?.chosenApprover?.id == "u8")
            _ = screen.handle(.right)
            #expect(screen.form?.chosenApprover == nil, "after the last comes any approver")
            _ = screen.handle(.left)
            #expect(screen.form?.chosenApprover?.id == "u8")
            _ = screen.handle(.character("x"))
            #expect(screen.form?.chosenApprover?.id == "u8", "letters do nothing on a choice")
            _ = screen.handle(.tab)
            _ = screen.handle(.character(" "))
            #expect(screen.form?.requiresApproval == true)
            #expect(rows(of: .requiresApproval, screen).0 == "> Approval     [x] an approver decides at the gate")
            _ = screen.handle(.left)
            #expect(screen.form?.requiresApproval == false)
            focus(.invite, on: screen)
            _ = screen.handle(.right)
            #expect(screen.form?.invite == true)
        }
    }

    @Test func approversThatCannotBeReadAreSaidAndTheFormStillWorks() {
        let services = FakeVisitorsServices()
        services.approversResult = .failure(.offline("connection refused"))
        let screen = VisitorsScreen(services: services, clock: { Fixtures.now })
        _ = screen.appear()
        _ = screen.handle(.character("n"))
        #expect(Fixtures.render(screen, width: 200, height: 30).line(1)
                == "The approvers could not be read (The server cannot be reached (connection refused); try again when it is back.); any approver may decide.")
        focus(.approver, on: screen)
        _ = screen.handle(.character(" "))
        #expect(screen.form?.notice?.text == "No approvers to choose from: any approver may decide.")
    }

    @Test func theServersFieldRulesAreCheckedAsEachKeyIsTyped() {
        withForm { screen, _ in
            focus(.email, on: screen)
            Fixtures.type("ana@", into: screen)
            #expect(rows(of: .email, screen).1 == problemRow("email must be an email address like ana@example.com"))
            Fixtures.type("example.com", into: screen)
            #expect(rows(of: .email, screen).1 == "  Phone", "fixed: the message is gone")
            _ = screen.handle(.tab)
            Fixtures.type("+40 abc", into: screen)
            #expect(rows(of: .phone, screen).1 == problemRow("phone must be a phone number: digits, spaces and + - ( ) . only"))
            _ = screen.handle(.control("u"))
            Fixtures.type("+40 721 000 000", into: screen)
            #expect(screen.form?.problem(.phone, siteTime: screen.siteTime) == nil)
            focus(.hostEmail, on: screen)
            Fixtures.type("ion(at)example.com", into: screen)
            #expect(rows(of: .hostEmail, screen).1 == problemRow("host email must be an email address like ana@example.com"))
        }
    }

    @Test func anEmptyNameIsSaidOnlyOnceRegistrationWasTried() {
        withForm { screen, services in
            #expect(rows(of: .name, screen).1 == "  Email", "a fresh form shows no error")
            focus(.email, on: screen)
            #expect(screen.handle(.control("s")) == .redraw)
            #expect(!services.calls.contains("register"))
            #expect(screen.form?.focus == .name, "the field at fault gets the keyboard")
            #expect(rows(of: .name, screen).1 == problemRow("name is required and must not be empty"))
            #expect(screen.form?.notice?.text == "Not sent: name is required and must not be empty.")
            Fixtures.type("   ", into: screen)
            #expect(rows(of: .name, screen).1 == problemRow("name is required and must not be empty"), "spaces are no name")
        }
    }

    @Test func theValidityIsSiteLocalBothOrNeitherAndUntilAfterFrom() {
        withForm { screen, services in
            Fixtures.type("Ana Pop", into: screen)
            focus(.validFrom, on: screen)
            Fixtures.type("2025-06-16 9:00", into: screen)
            #expect(rows(of: .validFrom, screen, width: 200).1 == problemRow(
                "valid from must be a site-local time like 2026-12-02 09:00 (or 2026-12-02T09:00) or an RFC 3339 time like 2026-12-02T07:00:00Z"))
            _ = screen.handle(.control("u"))
            Fixtures.type("2025-02-30 09:00", into: screen)
            #expect(rows(of: .validFrom, screen).1 == problemRow("valid from: 2025-02-30 09:00 is not a date and time of the calendar"))
            _ = screen.handle(.control("u"))
            Fixtures.type("2025-06-16 09:00", into: screen)
            #expect(screen.form?.problem(.validFrom, siteTime: screen.siteTime) == nil)
            _ = screen.handle(.control("s"))
            #expect(screen.form?.focus == .validUntil)
            #expect(rows(of: .validUntil, screen).1 == problemRow("give both valid from and valid until, or neither (today, all day)"))
            Fixtures.type("2025-06-16 08:00", into: screen)
            #expect(rows(of: .validUntil, screen).1 == problemRow("valid until must be after valid from"))
            _ = screen.handle(.control("u"))
            // An RFC 3339 time is taken too, as on the command line: 14:30 UTC is 17:30 there.
            Fixtures.type("2025-06-16T14:30:00Z", into: screen)
            services.registerResults = [.success(Fixtures.listed(5, name: "Ana Pop"))]
            _ = screen.handle(.control("s"))
            let sent = services.registrations.last?.registration
            // 09:00 in Bucharest (summer, UTC+3) is 06:00 UTC.
            #expect(sent?.validFrom == Fixtures.instant("2025-06-16T06:00:00Z"))
            #expect(sent?.validUntil == Fixtures.instant("2025-06-16T14:30:00Z"))
        }
    }

    @Test func anInvitationNeedsTheVisitorsEmail() {
        withForm { screen, services in
            Fixtures.type("Ana Pop", into: screen)
            focus(.invite, on: screen)
            _ = screen.handle(.character(" "))
            #expect(rows(of: .invite, screen).1 == problemRow("an invitation needs the visitor's email"))
            _ = screen.handle(.enter)
            #expect(!services.calls.contains("register") && screen.form?.focus == .invite)
        }
    }

    @Test func registeringSendsWhatWasTypedTrimmedClosesTheFormAndSelectsTheVisitor() {
        withForm { screen, services in
            // Typed field after field with Tab, as a person would.
            for text in ["  Ana Pop ", "Ana@Example.COM", "+40 721 000 000", "Acme", "Audit", "Ion Ene", "ion@example.com"] {
                Fixtures.type(text, into: screen)
                _ = screen.handle(.tab)
            }
            _ = screen.handle(.character(" "))
            _ = screen.handle(.tab)
            _ = screen.handle(.character(" "))
            focus(.invite, on: screen)
            _ = screen.handle(.character(" "))
            let created = Fixtures.listed(5, name: "Ana Pop")
            services.registerResults = [.success(created)]
            services.visitorsResult = .success(ConsoleRead(value: [Fixtures.listed(1), created], updatedAt: Fixtures.now, fromCache: false))
            let reads = services.queries.count
            #expect(screen.handle(.enter) == .redraw, "Enter on the last field registers")
            #expect(services.registrations.count == 1)
            #expect(services.registrations[0].registration == VisitorRegistration(
                name: "Ana Pop", email: "ana@example.com", phone: "+40 721 000 000", company: "Acme", purpose: "Audit",
                hostName: "Ion Ene", hostEmail: "ion@example.com", approverId: "u7", requiresApproval: true, invite: true))
            #expect(screen.form == nil && !screen.isCapturingText)
            #expect(screen.notice == VisitorsScreen.Notice(.ok, "Registered Ana Pop, pass K7Q2M9XD; the invitation is queued."))
            #expect(services.queries.count == reads + 1, "the list is read again")
            #expect(screen.selectedVisitor?.id == "v5")
        }
    }

    @Test func aRefusalKeepsEverythingTypedAndShowsTheServersMessage() {
        withForm { screen, services in
            Fixtures.type("Ana Pop", into: screen)
            _ = screen.handle(.tab)
            Fixtures.type("ana@example.com", into: screen)
            services.registerResults = [.failure(.refused("approverId is not an approver of this organization"))]
            #expect(screen.handle(.control("s")) == .alert)
            #expect(screen.form?.text(.name) == "Ana Pop" && screen.form?.text(.email) == "ana@example.com")
            #expect(screen.form?.notice?.text
                    == "Not registered: Refused: approverId is not an approver of this organization. The form is kept; correct it and press Ctrl-S.")
            let canvas = Fixtures.render(screen, width: 200, height: 24)
            #expect(canvas.line(22).hasPrefix("Not registered: Refused: approverId"))
            #expect(canvas[0, 22].style == OutcomeKind.error.style)
        }
    }

    @Test func aBlocklistMatchAsksAndTheSameRegistrationAgainConfirmsIt() {
        withForm { screen, services in
            Fixtures.type("Ion Ionescu", into: screen)
            let refusal = ConsoleError.blocklistMatch("this visitor matches the blocklist; nothing was saved")
            services.registerResults = [.failure(refusal), .failure(refusal), .failure(refusal), .failure(.offline("timed out")),
                                        .success(Fixtures.listed(5, name: "Ion Ionescus"))]
            #expect(screen.handle(.control("s")) == .alert)
            #expect(services.registrations[0].registration.confirmBlocked == false)
            #expect(screen.form?.confirmingBlocked == true && screen.form?.text(.name) == "Ion Ionescu")
            #expect(screen.form?.notice == VisitorsScreen.Notice(.warning,
                "Ion Ionescu matches the blocklist; nothing was saved. Press Ctrl-S again to register them anyway, or change the form or press Esc."))
            let canvas = Fixtures.render(screen, width: 200, height: 24)
            #expect(canvas.line(22).hasPrefix("Ion Ionescu matches the blocklist; nothing was saved. Press Ctrl-S again"))
            // A changed form is a new registration: asked again, not confirmed.
            Fixtures.type("s", into: screen)
            _ = screen.handle(.control("s"))
            #expect(services.registrations[1].registration.confirmBlocked == false)
            #expect(services.registrations[1].registration.name == "Ion Ionescus")
            // The same again confirms it, under a new key (the refusal is the first key's answer).
            _ = screen.handle(.control("s"))
            #expect(services.registrations[2].registration.confirmBlocked == true)
            #expect(services.registrations[2].key != services.registrations[1].key)
            // A confirmed registration refused (an invitation to a blocked visitor) says what to change.
            #expect(screen.form?.notice?.text.hasSuffix("The form is kept; turn the invitation off and press Ctrl-S.") == true)
            // An outage keeps the confirmation: the retry is the same confirmed registration.
            _ = screen.handle(.control("s"))
            _ = screen.handle(.control("s"))
            #expect(services.registrations[3].registration.confirmBlocked && services.registrations[4].registration.confirmBlocked)
            #expect(services.registrations[4].key == services.registrations[3].key)
            #expect(screen.form == nil && screen.notice?.text == "Registered Ion Ionescus, pass K7Q2M9XD.")
        }
    }

    @Test func anUnreachableServerKeepsTheFormAndARetrySendsTheSameKeyAnEditANewOne() {
        withForm { screen, services in
            Fixtures.type("Ana Pop", into: screen)
            services.registerResults = [.failure(.offline("timed out")), .failure(.offline("timed out")),
                                        .success(Fixtures.listed(5, name: "Ana Popa"))]
            _ = screen.handle(.control("s"))
            #expect(screen.form?.notice?.text
                    == "Not registered: The server cannot be reached (timed out); try again when it is back. The form is kept; Ctrl-S sends it again.")
            _ = screen.handle(.control("s"))
            #expect(services.registrations[0].key == services.registrations[1].key,
                    "the same registration again: the server may have the first one")
            Fixtures.type("a", into: screen)
            _ = screen.handle(.control("s"))
            #expect(services.registrations[2].key != services.registrations[1].key, "a different registration, a new key")
            #expect(services.registrations[2].registration.name == "Ana Popa")
            #expect(screen.form == nil)
        }
    }

    @Test func escOnAnEmptyFormClosesItAndOnATypedOneAsksFirst() {
        withForm { screen, services in
            #expect(screen.handle(.escape) == .redraw)
            #expect(screen.form == nil)
            #expect(screen.notice?.text == "Registration closed: nothing was sent.")
            _ = screen.handle(.character("n"))
            Fixtures.type("Ana", into: screen)
            _ = screen.handle(.escape)
            #expect(screen.form?.text(.name) == "Ana")
            #expect(screen.form?.notice?.text == "Press Esc again to discard what was typed; any other key goes on.")
            _ = screen.handle(.character(" "))
            _ = screen.handle(.escape)
            #expect(screen.form?.text(.name) == "Ana ", "another key in between: the first Esc is asked again")
            _ = screen.handle(.escape)
            #expect(screen.form == nil)
            #expect(!services.calls.contains("register"))
        }
    }

    @Test func backspaceAndCtrlUEditTheFocusedField() {
        withForm { screen, _ in
            Fixtures.type("Anna", into: screen)
            _ = screen.handle(.backspace)
            #expect(screen.form?.text(.name) == "Ann")
            _ = screen.handle(.delete)
            #expect(screen.form?.text(.name) == "An")
            _ = screen.handle(.control("u"))
            #expect(screen.form?.text(.name) == "")
            #expect(screen.handle(.backspace) == .none, "nothing to delete")
            focus(.approver, on: screen)
            #expect(screen.handle(.backspace) == .none)
        }
    }

    // MARK: - Hostile and oversized input, in every text field

    static let textFields = Field.allCases.filter(\.isText)

    @Test(arguments: textFields)
    func controlCharactersAndEscapeSequencesCannotBeTyped(_ field: Field) {
        withForm { screen, _ in
            focus(field, on: screen)
            for character in Fixtures.escapeSequence + "\r\n\t\u{7F}\u{9B}" { _ = screen.handle(.character(character)) }
            #expect(screen.form?.text(field) == String("[2J]0;owned".prefix(field.limit)))
            #expect(!(screen.form?.text(field).unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) } ?? true))
            let notice = screen.form?.notice?.text ?? ""
            #expect(notice == "Control characters cannot be typed here; nothing was changed."
                    || notice.hasPrefix("\(field.label) takes at most"))
            #expect(!Fixtures.render(screen, width: 120, height: 40).text.contains("\u{1B}"))
        }
    }

    @Test(arguments: textFields)
    func aTenKilobytePasteStopsAtTheServersLimitAndSaysSo(_ field: Field) {
        withForm { screen, _ in
            focus(field, on: screen)
            Fixtures.type(Fixtures.tenKilobytes, into: screen)
            #expect(screen.form?.text(field).count == field.limit)
            #expect(screen.form?.notice?.text == "\(field.label) takes at most \(field.limit) characters; the rest was not typed.")
            let canvas = Fixtures.render(screen, width: 80, height: 24)
            for y in 0..<24 { #expect(canvas.line(y).count <= 80) }
            let (row, _) = rows(of: field, screen, width: 80, height: 40)
            #expect(row.hasPrefix("> ") && row.hasSuffix("_"))
            #expect(row.contains("…") == (field.limit + 1 > 80 - 15), "the end of a long text shows, its start is cut")
        }
    }

    @Test(arguments: [Field.name, .company, .purpose, .hostName])
    func wideAndCombiningCharactersAreKeptAndTheByteRuleIsTheServers(_ field: Field) {
        withForm { screen, services in
            focus(field, on: screen)
            Fixtures.type(Fixtures.wide + " " + Fixtures.combiningStack, into: screen)
            #expect(screen.form?.text(field) == Fixtures.wide + " " + Fixtures.combiningStack)
            #expect(screen.form?.problem(field, siteTime: screen.siteTime) == nil, "6 characters, 135 bytes: within the rule")
            // Enough stacks of marks to pass the byte limit while staying within the character limit.
            let stacks = field.limit * FieldRules.bytesPerCharacter / Fixtures.combiningStack.utf8.count + 1
            _ = screen.handle(.control("u"))
            Fixtures.type(String(repeating: Fixtures.combiningStack, count: stacks), into: screen)
            #expect((screen.form?.text(field).count ?? 0) <= field.limit)
            let maxBytes = field.limit * FieldRules.bytesPerCharacter
            let message = "\(field == .hostName ? "host name" : field.label.lowercased()) must be at most \(maxBytes) bytes of UTF-8 (\(field.limit) characters of up to 4 bytes)"
            #expect(rows(of: field, screen, width: 200).1 == problemRow(message))
            if field != .name { focusAndType(.name, "Ana", on: screen) }
            _ = screen.handle(.control("s"))
            #expect(!services.calls.contains("register"), "the server would refuse it: not sent")
            #expect(screen.form?.focus == field)
        }
    }

    func focusAndType(_ field: Field, _ text: String, on screen: VisitorsScreen) {
        focus(field, on: screen)
        Fixtures.type(text, into: screen)
    }

    @Test func hostileTextIsSentAsTypedOnceTheRulesAllowItAndDrawnSpelledOut() {
        withForm { screen, services in
            // A bidi override and a zero-width space are format characters, not controls: the
            // server takes them, the screen spells them out.
            Fixtures.type("Ana\u{202E}nimda\u{200B} " + Fixtures.wide, into: screen)
            focusAndType(.company, "<script>alert(1)</script>", on: screen)
            let (row, _) = rows(of: .name, screen, width: 120)
            #expect(row == "  Name         Ana<U+202E>nimda<U+200B> 李小龍🙂")
            services.registerResults = [.success(Fixtures.listed(5))]
            _ = screen.handle(.control("s"))
            #expect(services.registrations.last?.registration.name == "Ana\u{202E}nimda\u{200B} " + Fixtures.wide)
            #expect(services.registrations.last?.registration.company == "<script>alert(1)</script>")
        }
    }

    @Test func theFormScrollsToKeepTheFocusedFieldInViewOnAShortTerminal() {
        withForm { screen, _ in
            focus(.invite, on: screen)
            var canvas = Fixtures.render(screen, width: 60, height: 6)
            #expect(canvas.line(4) == "> Invitation   [ ] no invitation mail")
            #expect(canvas.line(5).hasPrefix("Tab: next"))
            _ = screen.handle(.tab)
            canvas = Fixtures.render(screen, width: 60, height: 6)
            #expect(canvas.line(0).hasPrefix("New visitor"))
            for (width, height) in [(10, 3), (1, 1), (0, 0)] {
                let small = Fixtures.render(screen, width: width, height: height)
                for y in 0..<height { #expect(small.line(y).count <= width) }
            }
        }
    }

    @Test func theHelpListsTheFormsKeys() {
        withForm { screen, _ in
            let keys = screen.keyHelp.map(\.key)
            #expect(keys.contains("Ctrl-S") && keys.contains("Space, Left, Right") && keys.contains("Esc"))
        }
    }
}
