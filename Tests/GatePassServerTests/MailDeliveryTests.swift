import CurlHTTP
import Foundation
import GatePassAPI
import GatePassCore
import GatePassMail
import GatePassScanner
import GatePassTestSupport
import Testing
@testable import GatePassServer

/// The server's mail end to end: a real SMTP server on loopback (the sink of
/// `smtp_sink.py`: STARTTLS with a CA made for the test, AUTH required, the conversation
/// recorded), the queue in the database and the worker that sends it. Serialized: each test
/// starts a Python sink and libcurl sessions, and several read the conversation as a whole.
@Suite(.serialized) struct MailDeliveryTests {
    // MARK: - Login codes

    @Test func theLoginCodeArrivesOverSTARTTLSWorksOnceAndLeavesTheQueue() throws {
        try withSMTPSink(.starttls) { sink in
            try withMailServer(sink, devMode: false) { server in
                // The start probe's session first, so the sessions do not interleave in the record.
                #expect(server.log.changes.wait { server.log.all.contains("mail: \(sink.url) works (probed at start)") })
                let user = try server.addUser("olga@acme.test", role: .owner, name: "Olga Owner")
                #expect(try server.post("/api/auth/send-otp", ["email": "OLGA@acme.test"]).status == 202)
                let mail = try server.waitUntilSent(.otp, to: "olga@acme.test")
                #expect(mail.attempts == 1 && mail.lastError == nil && mail.sentAt != nil)
                #expect(try server.store.read { tx in try tx.mail.payload(id: mail.id) } == nil, "the code left the queue")

                let message = try sink.onlyMessage(to: "olga@acme.test")
                #expect(message.defects.isEmpty, "\(message.defects)")
                #expect(message.mailFrom == "gate@acme.test")
                #expect(message.from == "Gate Pass <gate@acme.test>")
                #expect(message.subject == "Your Gate Pass login code")
                #expect(message.parts.map(\.contentType) == ["text/plain"])
                let text = try #require(message.part("text/plain")).text
                let code = String(try #require(text.firstMatch(of: #/login code is (\d{6})\./#)).1)

                // Every session with the relay said STARTTLS, and only then AUTH (the probe's
                // session and the delivery's).
                let sessions = sink.sessions()
                #expect(sessions.count >= 2, "\(sink.conversation())")
                for session in sessions {
                    #expect(Array(session.prefix(4)) == ["EHLO", "STARTTLS", "EHLO", "AUTH"], "\(session)")
                }
                #expect(sessions.contains { $0.contains("DATA") })
                #expect(sink.conversation().contains("-- TLS"))

                // The code is in no log line and not in the mail log.
                #expect(!server.logText.contains(code))
                let ownerToken = try server.directLogin(user)
                let mailLog = try server.get(Endpoint.adminMailList.path(), token: ownerToken)
                #expect(mailLog.status == 200 && !mailLog.text.contains(code))

                let verified = try server.post("/api/auth/verify-otp", ["email": "olga@acme.test", "otp": code])
                #expect(verified.status == 200, "\(verified.text)")
                #expect(try server.post("/api/auth/verify-otp", ["email": "olga@acme.test", "otp": code]).status == 401)

                // Unknown addresses get the same answer and no mail.
                #expect(try server.post("/api/auth/send-otp", ["email": "nobody@acme.test"]).status == 202)
                #expect(try server.mailLog().filter { $0.to == "nobody@acme.test" }.isEmpty)
            }
        }
    }

    @Test func aLoginCodeNotSentBeforeItExpiresIsGivenUpAndErased() throws {
        try withSMTPSink(.starttls) { sink in
            sink.stop()
            try withMailServer(sink, devMode: false) { server in
                try server.addUser("olga@acme.test", role: .owner)
                #expect(try server.post("/api/auth/send-otp", ["email": "olga@acme.test"]).status == 202)
                let tried = try server.waitForMail("a first failed attempt") { $0.kind == .otp && $0.attempts == 1 }
                #expect(try server.store.read { tx in try tx.mail.payload(id: tried.id) } != nil, "kept while it is retried")
                server.clock.advance(by: 601)
                server.mailWorker.deliverDue()
                let expired = try server.waitForMail("the code given up") { $0.id == tried.id && $0.status == .failed }
                #expect(expired.lastError?.hasSuffix("not sent in time, given up") == true, "\(expired)")
                #expect(try server.store.read { tx in try tx.mail.payload(id: tried.id) } == nil)
            }
        }
    }

    // MARK: - A relay that is down, refuses the password, or shows the wrong certificate

    @Test func mailQueuedWhileTheRelayIsDownIsSentWhenItComesBack() throws {
        try withSMTPSink(.starttls) { sink in
            sink.stop()
            try withMailServer(sink, devMode: false) { server in
                let probeLine = "mail: the mail settings do not work (\(sink.url)): "
                #expect(server.log.changes.wait { server.log.all.contains { $0.hasPrefix(probeLine) && $0.contains("failed at connect") } },
                        "\(server.log.all)")
                try server.addUser("olga@acme.test", role: .owner)
                #expect(try server.post("/api/auth/send-otp", ["email": "olga@acme.test"]).status == 202)
                let failed = try server.waitForMail("a first failed attempt") { $0.kind == .otp && $0.attempts == 1 }
                #expect(failed.status == .queued)
                #expect(failed.lastError?.contains("failed at connect") == true, "\(failed)")
                // The log line follows the row's update: wait for it, do not race it.
                #expect(server.log.changes.wait { server.log.all.contains { $0.hasPrefix("mail \(failed.id) (otp) attempt 1 failed, retrying: ") } })

                // Still down a minute later: the second attempt fails, and the third waits two minutes.
                server.clock.advance(by: 60)
                server.mailWorker.wake()
                let second = try server.waitForMail("a second failed attempt") { $0.id == failed.id && $0.attempts == 2 }
                #expect(second.status == .queued)

                try sink.start()
                server.clock.advance(by: 119)
                #expect(server.mailWorker.deliverDue() == 0, "not due before its time")
                server.clock.advance(by: 1)
                server.mailWorker.wake()
                let sent = try server.waitUntilSent(.otp, to: "olga@acme.test")
                #expect(sent.id == failed.id && sent.attempts == 3 && sent.lastError == nil)

                let text = try #require(sink.onlyMessage(to: "olga@acme.test").part("text/plain")).text
                let code = String(try #require(text.firstMatch(of: #/login code is (\d{6})\./#)).1)
                #expect(try server.post("/api/auth/verify-otp", ["email": "olga@acme.test", "otp": code]).status == 200)
            }
        }
    }

    @Test func aMailNotSentWithin24HoursIsGivenUpAndErased() throws {
        try withSMTPSink(.starttls) { sink in
            sink.stop()
            try withMailServer(sink) { server in
                let site = try server.makeMailSite()
                #expect(try server.post(Endpoint.adminMailTest.path(), token: site.ownerToken, ["to": "admin@acme.test"]).status == 202)
                let failed = try server.waitForMail("a first failed attempt") { $0.kind == .test && $0.attempts == 1 }
                #expect(MailWorker.retryDelay(afterAttempts: 12) == 3600, "an hour apart at most")
                server.clock.advance(by: 24 * 3600 - 1)
                server.mailWorker.wake()
                let late = try server.waitForMail("the last attempt in time") { $0.id == failed.id && $0.attempts == 2 }
                #expect(late.status == .failed, "the next attempt would be after 24 h: given up now")
                #expect(late.lastError?.hasSuffix("not sent in time, given up") == true, "\(late)")
                #expect(try server.store.read { tx in try tx.mail.payload(id: failed.id) } == nil)
            }
        }
    }

    @Test func aDeliveryProgramTakesTheLoginCodeInsteadOfMail() throws {
        try withTemporaryDirectory { folder in
            let script = try codeDeliveryScript(in: folder)
            try withSMTPSink(.starttls) { sink in
                try withMailServer(sink, devMode: false, configure: { $0.otpDeliveryCommand = script }) { server in
                    let user = try server.addUser("olga@acme.test", role: .owner)
                    #expect(try server.post("/api/auth/send-otp", ["email": user.email]).status == 202)
                    let codeFile = folder + "/\(user.email).code"
                    #expect(eventually { FileManager.default.fileExists(atPath: codeFile) })
                    let code = try String(contentsOfFile: codeFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
                    #expect(try server.post("/api/auth/verify-otp", ["email": user.email, "otp": code]).status == 200)
                    #expect(try server.mailLog().isEmpty, "no login code in the mail queue")
                    // The rest of the mail still goes out over SMTP.
                    #expect(try server.post(Endpoint.adminMailTest.path(), token: server.directLogin(user), ["to": user.email]).status == 202)
                    try server.waitUntilSent(.test, to: user.email)
                    #expect(try sink.onlyMessage(to: user.email).subject == "Gate Pass test mail")
                }
            }
        }
    }

    @Test func aWrongPasswordIsNamedAtStartAndOnEachAttemptAndNeverShown() throws {
        let wrong = "Tr0ub4dor&3-not-the-password"
        try withSMTPSink(.starttls) { sink in
            try withMailServer(sink, devMode: false, password: wrong) { server in
                let probeLine = "mail: the mail settings do not work (\(sink.url)): "
                #expect(server.log.changes.wait {
                    server.log.all.contains { $0.hasPrefix(probeLine) && $0.contains("failed at auth") && $0.contains("535") }
                }, "\(server.log.all)")
                let user = try server.addUser("olga@acme.test", role: .owner)
                #expect(try server.post("/api/auth/send-otp", ["email": "olga@acme.test"]).status == 202)
                let failed = try server.waitForMail("a refused attempt") { $0.kind == .otp && $0.attempts == 1 }
                // A password is the admin's to fix: the mail waits and is tried again.
                #expect(failed.status == .queued)
                #expect(failed.lastError?.contains("failed at auth") == true, "\(failed)")
                #expect(server.log.all.contains {
                    $0.hasPrefix("mail \(failed.id) (otp) attempt 1 failed, retrying: ") && $0.contains("failed at auth")
                }, "\(server.log.all)")
                #expect(!sink.commands().contains("MAIL"))
                #expect(sink.messageFiles().isEmpty)

                let mailLog = try server.get(Endpoint.adminMailList.path(), token: server.directLogin(user)).text
                let plain = Data("\0\(SMTPSink.user)\0\(wrong)".utf8).base64EncodedString()
                let login = Data(wrong.utf8).base64EncodedString()
                for text in [server.logText, mailLog, failed.lastError ?? "", sink.conversation().joined(separator: "\n")] {
                    #expect(!text.contains(wrong) && !text.contains(plain) && !text.contains(login))
                }
            }
        }
    }

    @Test func aFailedTLSHandshakeNeverFallsBackToPlainText() throws {
        // The relay's certificate is checked against another CA: the handshake fails. The relay
        // is on loopback, where a server that offers no STARTTLS may be spoken to in plain
        // text, but one that offers it and fails the handshake must not be.
        try withSMTPSink(.starttls) { otherCA in
            try withSMTPSink(.starttls) { sink in
                try withMailServer(sink, devMode: false, configure: { $0.smtpCAFile = otherCA.caFile }) { server in
                    #expect(server.log.changes.wait {
                        server.log.all.contains { $0.hasPrefix("mail: the mail settings do not work") && $0.contains("failed at tls") }
                    }, "\(server.log.all)")
                    try server.addUser("olga@acme.test", role: .owner)
                    #expect(try server.post("/api/auth/send-otp", ["email": "olga@acme.test"]).status == 202)
                    let failed = try server.waitForMail("a failed handshake") { $0.kind == .otp && $0.attempts == 1 }
                    #expect(failed.status == .queued)
                    #expect(failed.lastError?.contains("failed at tls") == true, "\(failed)")
                    let commands = sink.commands()
                    #expect(commands.contains("STARTTLS"), "\(sink.conversation())")
                    for verb in ["AUTH", "MAIL", "RCPT", "DATA"] { #expect(!commands.contains(verb), "\(sink.conversation())") }
                    #expect(sink.messageFiles().isEmpty)
                }
            }
        }
    }

    @Test func aRelayOnLoopbackWithoutSTARTTLSIsSpokenToInPlainText() throws {
        try withSMTPSink(.plain) { sink in
            try withMailServer(sink, devMode: false, configure: { $0.smtpCAFile = nil }) { server in
                try server.addUser("olga@acme.test", role: .owner)
                #expect(try server.post("/api/auth/send-otp", ["email": "olga@acme.test"]).status == 202)
                try server.waitUntilSent(.otp, to: "olga@acme.test")
                let commands = sink.commands()
                #expect(!commands.contains("STARTTLS"))
                #expect(commands.contains("AUTH") && commands.contains("DATA"), "\(sink.conversation())")
            }
        }
    }

    /// The loopback exception is for this machine only: any other relay must offer STARTTLS.
    @Test(arguments: [
        ("smtp://127.0.0.1:25", true), ("smtp://127.8.9.10:2525", true), ("smtp://localhost:25", true),
        ("smtp://LOCALHOST:25", true), ("smtp://[::1]:25", true),
        ("smtp://mail.example.com:587", false), ("smtp://128.0.0.1:25", false), ("smtp://10.0.0.1:25", false),
        ("smtp://localhost.example.com:25", false), ("smtp://127.0.0.1.nip.io:25", false), ("smtp://[::2]:25", false),
        ("smtp://0.0.0.0:25", false),
    ])
    func plainTextIsAllowedOnlyForLoopbackRelays(url: String, allowed: Bool) throws {
        var configuration = ServerConfiguration()
        configuration.smtpURL = url
        configuration.mailFrom = "gate@example.com"
        configuration.publicBaseURL = "https://gate.example.com"
        try configuration.validate()
        let settings = try MailSettings.resolve(configuration, devMode: false)
        let transport = try #require(settings.transport as? SMTPTransport)
        #expect(transport.configuration.plainTextWithoutSTARTTLS == allowed, "\(url)")
    }

    // MARK: - The invitation

    @Test func theInvitationHasTextHTMLThePassInlineAndACalendarEntry() throws {
        try withSMTPSink(.starttls) { sink in
            try withMailServer(sink) { server in
                let site = try server.makeMailSite()
                let created = try server.createVisitor(site.ownerToken, [
                    "name": "Zoë Müller", "email": "zoe@visitor.test", "hostName": "Grace Hopper", "invite": true,
                    "validFrom": "2026-11-30T08:00:00Z", "validUntil": "2026-11-30T16:59:59Z",
                ])
                let shortId = try #require(created["shortId"] as? String)
                let visitorId = try #require(created["id"] as? String)
                let mail = try server.waitUntilSent(.invitation, to: "zoe@visitor.test")
                #expect(try server.store.read { tx in try tx.mail.payload(id: mail.id) } == nil, "the pass token left the queue")

                let message = try sink.onlyMessage(to: "zoe@visitor.test")
                #expect(message.defects.isEmpty, "\(message.defects)")
                #expect(message.to == "zoe@visitor.test")
                #expect(message.subject == "Your visitor pass for Acme")
                #expect(message.parts.map(\.contentType) == ["multipart/mixed", "multipart/related", "multipart/alternative",
                                                             "text/plain", "text/html", "image/png", "text/calendar"])
                let text = try #require(message.part("text/plain")).text
                let html = try #require(message.part("text/html")).text
                let grouped = shortId.prefix(4) + "-" + shortId.suffix(4)
                #expect(text.contains("Hello Zoë Müller,"))
                #expect(text.contains("Your host: Grace Hopper"))
                #expect(text.contains("you are expected at Acme: 30 Nov 2026 08:00\u{2013}16:59 (UTC)."), "\(text)")
                #expect(text.contains(grouped))
                let link = try #require(passLink(in: text), "\(text)")
                #expect(html.contains("href=\"\(link)\""), "the HTML links the same page")
                #expect(html.contains("Hello Zoë Müller,"))
                #expect(html.contains("src=\"cid:pass\""))

                // The inline image is the pass: the one the HTML shows by its Content-ID.
                let image = try #require(message.part("image/png"))
                #expect(image.contentID == "<pass>")
                #expect(image.disposition == "inline")
                #expect(image.filename == "pass-\(shortId).png")
                let chunks = pngChunks(image.payload)
                let header = try #require(chunks.first { $0.type == "IHDR" })
                #expect(bigEndian32(header.data, 0) == 1240 && bigEndian32(header.data, 4) == 1748)
                #expect(try isSignedPass(decodedTexts(greyImage(ofPNG: image.payload)), shortId: shortId))

                // The calendar entry: the visit's times in UTC, the page's address, and the same
                // iTIP method in the part's header as in the entry.
                let calendarPart = try #require(message.part("text/calendar"))
                let calendar = calendarPart.text.replacingOccurrences(of: "\r\n ", with: "")
                let lines = calendar.components(separatedBy: "\r\n")
                #expect(lines.contains("DTSTART:20261130T080000Z"), "\(calendar)")
                #expect(lines.contains("DTEND:20261130T170000Z"))
                #expect(lines.contains("UID:\(visitorId)@gatepass"))
                #expect(lines.contains("URL:\(link)"))
                #expect(lines.contains("SUMMARY:Visit to Acme"))
                #expect(lines.contains("ORGANIZER:mailto:gate@acme.test"))
                let method = try #require(lines.first { $0.hasPrefix("METHOD:") }).dropFirst("METHOD:".count)
                #expect(calendarPart.method?.uppercased() == String(method), "Content-Type method=\(calendarPart.method ?? "nil"), entry METHOD:\(method)")
                #expect(calendarPart.disposition == "attachment")

                // The link opens the visitor's pass page on this server.
                let page = try server.get(passPath(link))
                #expect(page.status == 200)
                #expect(page.text.contains("Zoë Müller"))
                #expect(page.text.contains(shortId.prefix(4) + "-" + shortId.suffix(4)))
            }
        }
    }

    @Test func reSendingTheInvitationGivesANewPageAndEndsTheOldOne() throws {
        try withSMTPSink(.starttls) { sink in
            try withMailServer(sink) { server in
                let site = try server.makeMailSite()
                let created = try server.createVisitor(site.ownerToken, ["name": "Ana Pop", "email": "ana@visitor.test"])
                let shortId = try #require(created["shortId"] as? String)
                #expect(try server.mailLog().isEmpty, "no invitation without invite: true")

                // By short id, as everywhere a path names a visitor.
                let first = try server.post(Endpoint.visitorsInvite.path(shortId), token: site.ownerToken)
                #expect(first.status == 202, "\(first.text)")
                #expect(first.keys == ["queued", "passURL"] && first.json?["queued"] as? Bool == true)
                let firstURL = try #require(first.string("passURL"))
                #expect(passLink(in: firstURL) == firstURL, "\(firstURL)")
                try server.waitUntilSent(.invitation, to: "ana@visitor.test")
                #expect(try server.get(passPath(firstURL)).status == 200)

                let second = try server.post(Endpoint.visitorsInvite.path(shortId), token: site.ownerToken)
                let secondURL = try #require(second.string("passURL"))
                #expect(secondURL != firstURL)
                try server.waitForMailLog("both invitations sent") { log in
                    log.filter { $0.kind == .invitation && $0.status == .sent }.count == 2
                }
                let messages = try sink.messages(to: "ana@visitor.test")
                #expect(messages.count == 2)
                let links = messages.map { passLink(in: $0.part("text/plain")?.text ?? "") }
                #expect(links == [firstURL, secondURL])
                #expect(try server.get(passPath(firstURL)).status == 404, "the old page ended")
                #expect(try server.get(passPath(secondURL)).status == 200)
            }
        }
    }

    /// An invitation still queued when a newer one ends its page (a re-send, a changed window),
    /// or when the visit is called off, would bring a link that no longer opens: it is given up.
    @Test func anInvitationOvertakenWhileTheRelayWasDownIsGivenUpNotSent() throws {
        try withSMTPSink(.starttls) { sink in
            sink.stop()
            try withMailServer(sink) { server in
                let site = try server.makeMailSite()
                let moved = try server.createVisitor(site.ownerToken, ["name": "Ana Pop", "email": "ana@visitor.test", "invite": true])
                let called = try server.createVisitor(site.ownerToken, ["name": "Ion Ionescu", "email": "ion@visitor.test", "invite": true])
                try server.waitForMailLog("both first attempts failed") { log in log.filter { $0.attempts == 1 }.count == 2 }
                let edited = try server.client().send("PATCH", Endpoint.visitorsUpdate.path(moved["id"] as? String ?? ""),
                                                      token: site.ownerToken,
                                                      json: ["validFrom": "2026-11-30T09:00:00Z", "validUntil": "2026-11-30T17:00:00Z"])
                #expect(edited.status == 200, "\(edited.text)")
                #expect(try server.post(Endpoint.visitorsCancel.path(called["id"] as? String ?? ""), token: site.ownerToken).status == 200)

                try sink.start()
                server.clock.advance(by: 60)
                server.mailWorker.wake()
                try server.waitForMailLog("every invitation settled") { log in !log.contains { $0.status == .queued } }
                let invitations = try server.mailLog().filter { $0.kind == .invitation }
                #expect(invitations.map(\.status) == [.sent, .failed, .failed], "newest first: \(invitations)")
                #expect(invitations[1].to == "ion@visitor.test" && invitations[1].lastError?.contains("CANCELLED") == true)
                #expect(invitations[2].to == "ana@visitor.test" && invitations[2].lastError?.contains("newer invitation") == true)
                // Ana gets one invitation, the one whose link opens; Ion none.
                let received = try sink.onlyMessage(to: "ana@visitor.test")
                let link = try #require(passLink(in: received.part("text/plain")?.text ?? ""))
                #expect(try server.get(passPath(link)).status == 200)
                #expect(try sink.messages(to: "ion@visitor.test").isEmpty)
            }
        }
    }

    // MARK: - Notices

    @Test func theHostIsToldWhenTheirVisitorArrives() throws {
        try withSMTPSink(.starttls) { sink in
            try withMailServer(sink) { server in
                let site = try server.makeMailSite()
                let withHost = try server.createVisitor(site.ownerToken, ["name": "Ana Pop", "company": "Pop & Co",
                                                                          "hostName": "Grace", "hostEmail": "grace@acme.test"])
                let withoutHost = try server.createVisitor(site.ownerToken, ["name": "Ion Ionescu"])

                #expect(try server.checkIn(site.scanner, withoutHost["shortId"] as? String ?? "").json?["result"] as? String == "CHECKED_IN")
                #expect(try server.mailLog().isEmpty, "no hostEmail, no notice")
                #expect(try server.checkIn(site.scanner, withHost["shortId"] as? String ?? "").json?["result"] as? String == "CHECKED_IN")
                try server.waitUntilSent(.arrival, to: "grace@acme.test")
                let message = try sink.onlyMessage(to: "grace@acme.test")
                #expect(message.subject == "Your visitor Ana Pop has arrived")
                let text = try #require(message.part("text/plain")).text
                // The zone as configured ("UTC"; Foundation on Linux would call it GMT).
                #expect(text.hasPrefix("Ana Pop from Pop & Co checked in at Main gate on 29 Nov 2026 12:00 (UTC)."), "\(text)")
                #expect(text.contains("Pass \(withHost["shortId"] as? String ?? "-"), Acme."))
                #expect(try server.mailLog().map(\.kind) == [.arrival])
            }
        }
    }

    @Test func anAssignedApproverIsToldWhenTheirVisitorWaits() throws {
        try withSMTPSink(.starttls) { sink in
            try withMailServer(sink) { server in
                let site = try server.makeMailSite()
                let visitor = try server.createVisitor(site.ownerToken, ["name": "Ana Pop", "requiresApproval": true,
                                                                         "purpose": "Audit", "approverId": site.desk.id])
                let answer = try server.checkIn(site.scanner, visitor["shortId"] as? String ?? "", ["confirmApprovalRequest": true])
                #expect(answer.json?["result"] as? String == "AWAITING_APPROVAL", "\(answer.text)")
                try server.waitUntilSent(.approval, to: site.desk.email)
                #expect(try server.mailLog().map(\.to) == [site.desk.email], "only the assigned approver")
                let message = try sink.onlyMessage(to: site.desk.email)
                #expect(message.subject == "A visitor waits for your approval: Ana Pop")
                let text = try #require(message.part("text/plain")).text
                #expect(text.contains("Ana Pop is waiting at Acme for your decision.\r\nPurpose: Audit"), "\(text)")
            }
        }
    }

    @Test func everyApproverIsToldWhenAnUnassignedVisitorOrAWalkInWaits() throws {
        try withSMTPSink(.starttls) { sink in
            try withMailServer(sink) { server in
                let site = try server.makeMailSite()
                // Another site's approver hears nothing of this one.
                try server.addUser("approver@other.test", role: .approver, organization: "Other")
                let visitor = try server.createVisitor(site.ownerToken, ["name": "Ana Pop", "requiresApproval": true])
                _ = try server.checkIn(site.scanner, visitor["shortId"] as? String ?? "", ["confirmApprovalRequest": true])
                let approvers = Set([site.approver.email, site.desk.email])
                for email in approvers { try server.waitUntilSent(.approval, to: email) }
                #expect(Set(try server.mailLog().map(\.to)) == approvers)

                let walkIn = try server.post(Endpoint.scannerWalkIn.path(), token: site.scanner, ["name": "Walter Walk"])
                #expect(walkIn.status == 201, "\(walkIn.text)")
                try server.waitForMailLog("both walk-in notices sent") { log in
                    log.filter { $0.kind == .approval && $0.status == .sent }.count == 4
                }
                for email in approvers {
                    #expect(try sink.messages(to: email).map(\.subject)
                            == ["A visitor waits for your approval: Ana Pop", "A visitor waits for your approval: Walter Walk"])
                }
            }
        }
    }

    // MARK: - Header injection

    @Test func visitorTextInHeadersIsEncodedAndAddsNoHeader() throws {
        try withSMTPSink(.starttls) { sink in
            try withMailServer(sink) { server in
                let siteName = #"Société =?utf-8?B?SGk=?= "Nord" <b>Tor 3</b>; Süd, \Halle"#
                let site = try server.makeMailSite(siteName)
                // CR and LF are refused at the door…
                for name in ["Ana\r\nBcc: attacker@evil.test", "Ana\nBcc: attacker@evil.test", "Ana\u{85}Bcc: x@evil.test"] {
                    let refused = try server.post("/api/visitors", token: site.ownerToken, ["name": name])
                    #expect(refused.isError(400, "BAD_REQUEST"), "\(refused.text)")
                }
                // … and what passes (line separators, non-ASCII, text that looks like an
                // encoded-word) is encoded in every header it reaches.
                let name = "Zoë\u{2028}Bcc: attacker@evil.test\u{2029}X-Injected: 1 Müller 李 <img src=x>"
                let visitor = try server.createVisitor(site.ownerToken, [
                    "name": name, "company": "Evil\u{2028}Co", "email": "zoe@visitor.test", "hostEmail": "grace@acme.test",
                    "invite": true,
                ])
                _ = try server.checkIn(site.scanner, visitor["shortId"] as? String ?? "")
                try server.waitUntilSent(.invitation, to: "zoe@visitor.test")
                try server.waitUntilSent(.arrival, to: "grace@acme.test")

                let messages = try sink.messages()
                #expect(messages.count == 2)
                for (index, message) in messages.enumerated() {
                    // A message of one part carries its transfer encoding at the top.
                    let expectedHeaders = ["Date", "Message-ID", "From", "To", "Subject", "MIME-Version", "Content-Type"]
                        + (message.parts.count == 1 ? ["Content-Transfer-Encoding"] : [])
                    #expect(message.headerNames == expectedHeaders, "\(message.headerNames)")
                    #expect(message.defects.isEmpty, "\(message.defects)")
                    #expect(message.recipients?.count == 1)
                    let raw = String(decoding: try sink.rawMessage(index + 1), as: UTF8.self)
                    let headEnd = try #require(raw.range(of: "\r\n\r\n"))
                    let head = String(raw[..<headEnd.lowerBound])
                    #expect(head.unicodeScalars.allSatisfy { $0.isASCII }, "7-bit headers")
                    let names = head.components(separatedBy: "\r\n").filter { !$0.hasPrefix(" ") && !$0.hasPrefix("\t") }
                        .map { String($0.prefix { $0 != ":" }) }
                    #expect(names == expectedHeaders, "\(head)")
                    #expect(head.contains("Subject: =?utf-8?B?"), "\(head)")
                }
                let arrival = try sink.onlyMessage(to: "grace@acme.test")
                #expect(arrival.subject == "Your visitor Zoë Bcc: attacker@evil.test X-Injected: 1 Müller 李 <img src=x> has arrived")
                let invitation = try sink.onlyMessage(to: "zoe@visitor.test")
                #expect(invitation.subject == "Your visitor pass for " + siteName, "a literal encoded-word is encoded, not decoded")
                // The same text in the HTML part is escaped, and in the calendar entry escaped the
                // iCalendar way (a line separator cannot start a property of its own).
                let html = try #require(invitation.part("text/html")).text
                #expect(!html.contains("<img src=x>") && !html.contains("<b>Tor"))
                #expect(html.contains("&lt;img src=x&gt;") && html.contains("&lt;b&gt;Tor 3&lt;/b&gt;"), "\(html)")
                let calendar = try #require(invitation.part("text/calendar")).text.replacingOccurrences(of: "\r\n ", with: "")
                #expect(calendar.components(separatedBy: "\r\n").contains(
                    #"SUMMARY:Visit to Société =?utf-8?B?SGk=?= "Nord" <b>Tor 3</b>\; Süd\, \\Halle"#), "\(calendar)")
            }
        }
    }

    // MARK: - The mail log and the test mail

    @Test func theMailLogShowsEachMailsFateAndNoSecret() throws {
        try withSMTPSink(.starttls) { sink in
            try withMailServer(sink) { server in
                let site = try server.makeMailSite()
                let other = try server.addUser("owner@other.test", role: .owner, organization: "Other")
                #expect(try server.post(Endpoint.adminMailTest.path(), token: server.directLogin(other), ["to": "x@other.test"]).status == 202)
                try server.waitUntilSent(.test, to: "x@other.test")

                #expect(try server.post("/api/auth/send-otp", ["email": site.owner.email]).status == 202)
                let invited = try server.post(Endpoint.visitorsInvite.path(
                    try #require(server.createVisitor(site.ownerToken, ["name": "Ana", "email": "ana@visitor.test"])["id"] as? String)),
                    token: site.ownerToken)
                let passURL = try #require(invited.string("passURL"))
                #expect(try server.post(Endpoint.adminMailTest.path(), token: site.ownerToken, ["to": "rejected@visitor.test"]).status == 202)
                try server.waitUntilSent(.otp, to: site.owner.email)
                try server.waitUntilSent(.invitation, to: "ana@visitor.test")
                let refused = try server.waitForMail("the refused test mail") { $0.to == "rejected@visitor.test" && $0.status == .failed }
                #expect(refused.attempts == 1, "a 550 is not retried")
                // The relay's reply echoes the address: the mail log (which shows `to` anyway)
                // keeps it, the server's log line does not.
                #expect(refused.lastError?.contains("<rejected@visitor.test>: Recipient address rejected") == true, "\(refused)")
                #expect(server.log.all.contains { $0.hasPrefix("mail \(refused.id) (test) given up: ") && $0.contains("(the recipient)") })
                #expect(!server.logText.contains("rejected@visitor.test"), "\(server.log.all)")

                let answer = try server.get(Endpoint.adminMailList.path(), token: site.ownerToken)
                #expect(answer.status == 200)
                #expect(answer.keys == Shape.list)
                let items = answer.items
                #expect(items.map { $0["kind"] as? String } == ["test", "invitation", "otp"], "newest first, this site only")
                for item in items {
                    #expect(Set(item.keys) == ["id", "kind", "to", "status", "attempts", "lastError", "createdAt", "sentAt"])
                }
                let byKind = Dictionary(uniqueKeysWithValues: items.map { ($0["kind"] as? String ?? "", $0) })
                #expect(byKind["otp"]?["status"] as? String == "sent" && byKind["otp"]?["attempts"] as? Int == 1)
                #expect(byKind["otp"]?["lastError"] is NSNull && date(byKind["otp"]?["sentAt"]) != nil)
                #expect(byKind["test"]?["status"] as? String == "failed" && byKind["test"]?["sentAt"] is NSNull)
                #expect((byKind["test"]?["lastError"] as? String)?.contains("550") == true, "\(items)")

                let code = String(try #require(try sink.onlyMessage(to: site.owner.email).part("text/plain")?.text
                    .firstMatch(of: #/login code is (\d{6})\./#)).1)
                let token = String(passURL.split(separator: "/").last ?? "")
                #expect(!answer.text.contains(code) && !answer.text.contains(token))

                // Pages follow the cursor.
                let pages = try server.allPages(Endpoint.adminMailList.path(), token: site.ownerToken, limit: 1)
                #expect(ids(pages.items) == ids(items) && pages.pages == 3)
                // Approvers do not read the mail log.
                #expect(try server.get(Endpoint.adminMailList.path(), token: site.approverToken).isError(403, "FORBIDDEN"))
            }
        }
    }

    @Test func theTestMailArrivesAndHostileAddressesAreRefused() throws {
        try withSMTPSink(.starttls) { sink in
            try withMailServer(sink) { server in
                let site = try server.makeMailSite()
                let answer = try server.post(Endpoint.adminMailTest.path(), token: site.ownerToken, ["to": "Admin@Acme.test"])
                #expect(answer.status == 202)
                #expect(answer.anyJSON as? [String: Bool] == ["queued": true])
                try server.waitUntilSent(.test, to: "admin@acme.test")
                let message = try sink.onlyMessage(to: "admin@acme.test")
                #expect(message.subject == "Gate Pass test mail")
                #expect(try #require(message.part("text/plain")).text
                        == "This is a test mail from Gate Pass at \(mailBaseURL). Mail works.")

                // Beyond HostRouteTests' bad addresses: what would split a header or an SMTP command.
                let hostile: [Any] = [
                    "a@acme.test\r\nBcc: evil@evil.test", "a@acme.test>\r\nRCPT TO:<evil@evil.test", "<a@acme.test>",
                    "a@acme.test, evil@evil.test", "\"a\"@acme.test", "a@acme.test;evil@evil.test",
                    String(repeating: "a", count: 300) + "@acme.test", "a@acme.test\u{0}", NSNull(),
                ]
                for to in hostile {
                    let refused = try server.post(Endpoint.adminMailTest.path(), token: site.ownerToken, ["to": to])
                    #expect(refused.isError(400, "BAD_REQUEST"), "\(to): \(refused.text)")
                }
                #expect(try server.mailLog().count == 1, "nothing queued for a refused address")

                // An address with non-ASCII characters passes the field rule, but SMTP without
                // SMTPUTF8 cannot carry it: the mail is given up at once, and the log says why.
                #expect(try server.post(Endpoint.adminMailTest.path(), token: site.ownerToken, ["to": "zoë@acme.test"]).status == 202)
                let given = try server.waitForMail("the non-ASCII address given up") { $0.to == "zoë@acme.test" && $0.status == .failed }
                #expect(given.attempts == 1 && given.lastError?.contains("is not an e-mail address this server can send to") == true,
                        "\(given)")
            }
        }
    }

    // MARK: - --dev's mail folder (mail off is in HostRouteTests)

    @Test func devModeWithoutSMTPWritesPrivateEmlFilesWhoseLinksWork() throws {
        try withTemporaryDirectory { folder in
            let mailFolder = folder + "/outgoing"
            try withServer(devMode: true, configure: { $0.mailDirectory = mailFolder }) { server in
                let site = try server.makeMailSite()
                let visitor = try server.createVisitor(site.ownerToken, ["name": "Zoë Müller", "email": "zoe@visitor.test",
                                                                         "invite": true])
                let mail = try server.waitUntilSent(.invitation, to: "zoe@visitor.test")
                let prefix = "dev: mail \(mail.id) (invitation) written to "
                let line = try #require(server.log.all.first { $0.hasPrefix(prefix + mailFolder + "/") }, "\(server.log.all)")
                let path = String(line.dropFirst(prefix.count))
                #expect(path.hasSuffix(".eml"))
                #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
                #expect(try FileManager.default.attributesOfItem(atPath: mailFolder)[.posixPermissions] as? Int == 0o700)
                #expect(try FileManager.default.contentsOfDirectory(atPath: mailFolder) == [URL(fileURLWithPath: path).lastPathComponent])

                let message = try ReceivedMessage.parse(emlFile: path)
                #expect(message.defects.isEmpty)
                #expect(message.to == "zoe@visitor.test")
                let text = try #require(message.part("text/plain")).text
                // Without publicBaseURL, --dev links to the address the server listens on.
                let link = try #require(passLink(in: text, base: server.server.baseURL), "\(text)")
                #expect(try server.get(passPath(link)).status == 200)
                #expect(try isSignedPass(decodedTexts(greyImage(ofPNG: try #require(message.part("image/png")).payload)),
                                         shortId: visitor["shortId"] as? String ?? ""))
            }
        }
    }

    @Test func devModeWritesMailBesideTheDatabaseByDefault() throws {
        try withServer(devMode: true) { server in
            let site = try server.makeMailSite()
            #expect(try server.post(Endpoint.adminMailTest.path(), token: site.ownerToken, ["to": "admin@acme.test"]).status == 202)
            try server.waitUntilSent(.test, to: "admin@acme.test")
            let files = try FileManager.default.contentsOfDirectory(atPath: server.directory + "/mail")
            #expect(files.count == 1 && files[0].hasSuffix(".eml"), "\(files)")
        }
    }
}
