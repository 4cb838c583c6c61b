import CurlHTTP
import Foundation
import GatePassCore
import GatePassTestSupport
import Testing
@testable import GatePassMail

/// SMTP against the sink of `smtp_sink.py` on loopback: STARTTLS with a CA made by openssl
/// for the test, AUTH required, everything recorded to a folder this test reads.
@Suite(.serialized) struct SMTPTransportTests {
    func transport(_ sink: SMTPSink, password: String = SMTPSink.password, trustSinkCA: Bool = true) -> SMTPTransport {
        SMTPTransport(configuration: .init(url: sink.url, username: SMTPSink.user, password: SMTPPassword(password),
                                           caFile: trustSinkCA ? sink.caFile : nil,
                                           connectTimeout: .seconds(10), timeout: .seconds(30)))
    }

    func built(_ message: MailMessage = invitation()) throws -> OutgoingMail {
        var random = SplitMix64(seed: 42)
        return try MIMEBuilder.build(message, date: testDate, random: &random)
    }

    @Test func deliversOverSTARTTLSWithAuthAndTheMIMEStructureParsesBack() throws {
        try withSMTPSink(.starttls) { sink in
            let second = MailAddress("host@site.example", displayName: "Ada Host")
            let mail = try built(invitation(to: [MailAddress("zoe@visitor.example", displayName: hostileName), second]))
            try transport(sink).send(mail)
            let received = try sink.message(1)

            let commands = sink.commands()
            let order = ["EHLO", "STARTTLS", "EHLO", "AUTH", "MAIL", "RCPT", "RCPT", "DATA"]
            #expect(Array(commands.prefix(order.count)) == order, "\(sink.conversation())")
            #expect(sink.conversation().contains("-- TLS"))
            #expect(sink.conversation().contains("S: 235 2.7.0 Authentication successful"))

            #expect(received.mailFrom == "gate@site.example")
            #expect(received.recipients == ["zoe@visitor.example", "host@site.example"])
            #expect(received.defects.isEmpty, "\(received.defects)")
            #expect(received.headerNames == ["Date", "Message-ID", "From", "To", "Subject", "MIME-Version", "Content-Type"])
            #expect(received.subject == MIMEBuilder.sanitized(hostileSubject))
            #expect(received.to == "\"Zoë Müller Bcc: attacker@evil.example\" <zoe@visitor.example>, Ada Host <host@site.example>")
            #expect(received.date == "Tue, 01 Dec 2026 15:27:19 +0000")
            #expect(received.messageID == mail.messageID)
            #expect(received.parts.map(\.contentType) == ["multipart/mixed", "multipart/related", "multipart/alternative",
                                                          "text/plain", "text/html", "image/png", "text/calendar"])
            let text = received.parts[3], image = received.parts[5], calendar = received.parts[6]
            #expect(String(decoding: text.payload, as: UTF8.self)
                    == "Hello Zoë,\r\nyour pass: https://gate.example/p/abc\r\n.\r\nA line with only a dot above.",
                    "a line of one dot survives libcurl's dot-stuffing")
            #expect(image.payload == testPNG)
            #expect(image.contentID == "<pass>")
            #expect(image.disposition == "inline")
            #expect(image.filename == "pass.png")
            #expect(calendar.method == "PUBLISH")
            #expect(calendar.disposition == "attachment")
            #expect(calendar.filename == "visit.ics")
            #expect(String(decoding: calendar.payload, as: UTF8.self).contains("METHOD:PUBLISH\r\nBEGIN:VEVENT\r\n"))
        }
    }

    @Test func deliversOverSMTPS() throws {
        try withSMTPSink(.smtps) { sink in
            try transport(sink).send(try built())
            _ = try sink.message(1)
            let commands = sink.commands()
            #expect(Array(commands.prefix(4)) == ["EHLO", "AUTH", "MAIL", "RCPT"], "\(sink.conversation())")
            #expect(!commands.contains("STARTTLS"))
        }
    }

    @Test func probeSaysEHLOStartsTLSAndAuthenticatesWithoutSending() throws {
        try withSMTPSink(.starttls) { sink in
            try transport(sink).probe()
            let commands = sink.commands()
            // The sink records each command before it answers, and probe() returned after AUTH's
            // answer and closed the connection (libcurl sends no QUIT for CONNECT_ONLY).
            #expect(commands == ["EHLO", "STARTTLS", "EHLO", "AUTH"], "\(sink.conversation())")
            #expect(sink.conversation().contains("S: 235 2.7.0 Authentication successful"))
            #expect(sink.messageFiles().isEmpty)

            let refused = try #require(throws: SMTPError.self) { try transport(sink, password: "wrong").probe() }
            #expect(refused.stage == .auth && refused.curlCode == 67, "\(refused)")
        }
    }

    @Test func aServerWithoutSTARTTLSIsRefusedBeforeAuthOrMail() throws {
        try withSMTPSink(.plain) { sink in
            let error = try #require(throws: SMTPError.self) { try transport(sink).send(try built()) }
            #expect(error.stage == .startTLS)
            #expect(error.curlCode == 64) // CURLE_USE_SSL_FAILED
            #expect(!error.isConnectionFailure)
            let commands = sink.commands()
            #expect(commands == ["EHLO"] || commands == ["EHLO", "QUIT"], "\(sink.conversation())")
            #expect(sink.messageFiles().isEmpty)
        }
    }

    @Test func aWrongPasswordNamesTheAuthStageAndNeverThePassword() throws {
        try withSMTPSink(.starttls) { sink in
            let password = "hunter2-wrong-password"
            let error = try #require(throws: SMTPError.self) { try transport(sink, password: password).send(try built()) }
            #expect(error.stage == .auth)
            #expect(error.curlCode == 67) // CURLE_LOGIN_DENIED
            let plain = Data("\0\(SMTPSink.user)\0\(password)".utf8).base64EncodedString()
            for text in ["\(error)", String(reflecting: error), error.detail, error.serverReply ?? ""] {
                #expect(!text.contains(password) && !text.contains(plain), "\(text)")
            }
            #expect(error.replyCode == 535, "\(String(describing: error.serverReply))")
            #expect(!sink.commands().contains("MAIL"))
            #expect("\(SMTPPassword(password))" == "[redacted]")
        }
    }

    @Test func aRefusedRecipientNamesTheRecipientStageAndTheServersReply() throws {
        try withSMTPSink(.starttls) { sink in
            let mail = try built(invitation(to: [MailAddress("zoe@visitor.example"), MailAddress("rejected@visitor.example")]))
            let error = try #require(throws: SMTPError.self) { try transport(sink).send(mail) }
            #expect(error.stage == .recipient, "\(error)")
            #expect(error.replyCode == 550, "\(error)")
            #expect(!sink.commands().contains("DATA"))
            #expect(sink.messageFiles().isEmpty)
        }
    }

    @Test func anUntrustedCertificateFailsTheTLSStage() throws {
        try withSMTPSink(.starttls) { sink in
            let error = try #require(throws: SMTPError.self) { try transport(sink, trustSinkCA: false).send(try built()) }
            #expect(error.stage == .tls, "\(error)")
            #expect(!sink.commands().contains("AUTH"))
        }
    }

    @Test func aSinkThatIsDownGivesAConnectionError() throws {
        try withSMTPSink(.starttls) { sink in
            sink.stop()
            let error = try #require(throws: SMTPError.self) { try transport(sink).send(try built()) }
            #expect(error.stage == .connect, "\(error)")
            #expect(error.isConnectionFailure)
        }
    }

    @Test func aURLWithCredentialsIsRefusedAndNeverShown() throws {
        let smtp = CurlSMTP(options: .init(url: "smtp://mailer:s3cret-in-url@127.0.0.1:1"))
        let error = try #require(throws: SMTPError.self) { try smtp.probe() }
        #expect(error.url == "smtp://127.0.0.1:1")
        #expect(!"\(error)".contains("s3cret-in-url"))
    }

    @Test func envelopeAddressesThatCouldInjectCommandsAreRefusedBeforeLibcurl() throws {
        let smtp = CurlSMTP(options: .init(url: "smtp://127.0.0.1:1"))
        let error = try #require(throws: SMTPError.self) {
            try smtp.send(from: "a@b.example", to: ["x@y.example>\r\nRCPT TO:<z@w.example"], message: [])
        }
        #expect(error.stage == .recipient)
        #expect(error.curlCode == 0)
    }
}
