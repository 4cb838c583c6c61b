import Foundation
import GatePassCore
import Testing
@testable import GatePassMail

@Suite struct MIMEBuilderTests {
    func build(_ message: MailMessage = invitation()) throws -> (mail: OutgoingMail, text: String) {
        var random = SplitMix64(seed: 42)
        let mail = try MIMEBuilder.build(message, date: testDate, random: &random)
        return (mail, String(decoding: mail.bytes, as: UTF8.self))
    }

    /// The header block, unfolded: one entry per header field.
    func headerFields(_ text: String) -> [String] {
        let block = text.components(separatedBy: "\r\n\r\n")[0]
        var fields: [String] = []
        for line in block.components(separatedBy: "\r\n") {
            if line.hasPrefix(" ") || line.hasPrefix("\t") { fields[fields.count - 1] += line } else { fields.append(line) }
        }
        return fields
    }

    @Test func dateAndMessageIDComeFromTheInjectedClockAndRandom() throws {
        let (first, text) = try build()
        let (second, _) = try build()
        #expect(first == second)
        #expect(text.hasPrefix("Date: Tue, 01 Dec 2026 15:27:19 +0000\r\nMessage-ID: <"))
        #expect(first.messageID.hasSuffix("@site.example>"))
        #expect(first.envelopeFrom == "gate@site.example")
        #expect(first.recipients == ["zoe@visitor.example"])
    }

    @Test func hostileHeaderTextNeverStartsAHeader() throws {
        let (mail, text) = try build()
        #expect(mail.bytes.allSatisfy { $0 < 0x80 }, "7-bit ASCII")
        let names = headerFields(text).map { String($0.prefix { $0 != ":" }) }
        #expect(names == ["Date", "Message-ID", "From", "To", "Subject", "MIME-Version", "Content-Type"])
        #expect(!text.lowercased().contains("bcc:"))
        #expect(!text.contains("X-Injected"))
        // Every CR is part of a CRLF, every LF follows a CR.
        let bytes = mail.bytes
        for index in bytes.indices where bytes[index] == 0x0A { #expect(index > 0 && bytes[index - 1] == 0x0D) }
        for index in bytes.indices where bytes[index] == 0x0D { #expect(index + 1 < bytes.count && bytes[index + 1] == 0x0A) }
    }

    @Test func headerLinesAreFoldedAt78AndBodyLinesWrappedAt76() throws {
        let big = MailPart(contentType: "application/octet-stream", filename: "blob.bin", data: (0..<1000).map { UInt8($0 % 251) })
        var message = invitation()
        message.attachments.append(big)
        message.subject = String(repeating: "word ", count: 40) + "end"
        let (_, text) = try build(message)
        let (header, body) = (text.components(separatedBy: "\r\n\r\n")[0], text)
        for line in header.components(separatedBy: "\r\n") { #expect(line.count <= 78, "\(line)") }
        for line in body.components(separatedBy: "\r\n") { #expect(line.count <= 78, "\(line)") }
        let subject = headerFields(text).first { $0.hasPrefix("Subject:") }!
        #expect(subject == "Subject: " + message.subject, "plain ASCII words are folded, not encoded")
    }

    @Test func encodedWordsDecodeToTheSanitizedText() throws {
        let words = MIMEBuilder.encodedWords(MIMEBuilder.sanitized(hostileSubject))
        #expect(words.count > 1)
        var decoded: [UInt8] = []
        for word in words {
            #expect(word.count <= 75)
            #expect(word.hasPrefix("=?utf-8?B?") && word.hasSuffix("?="))
            let chunk = Array(Data(base64Encoded: String(word.dropFirst(10).dropLast(2)))!)
            #expect(String(validating: chunk, as: UTF8.self) != nil, "each word holds whole characters")
            decoded += chunk
        }
        #expect(String(decoding: decoded, as: UTF8.self)
                == "Your pass for Zoë Bcc: attacker@evil.example X-Injected: 1 — Besuch am Tor 3 (Gebäude Süd), bitte Ausweis mitbringen")
    }

    @Test func displayNamesStayPlainOnlyWhenTheyAreAtoms() {
        #expect(MIMEBuilder.addressHeader("To", [MailAddress("a@b.example", displayName: "Ada Lovelace")])
                == "To: Ada Lovelace <a@b.example>")
        let quoted = MIMEBuilder.addressHeader("To", [MailAddress("a@b.example", displayName: "Ada \"<x@y>\", Lovelace")])
        #expect(quoted.hasPrefix("To: =?utf-8?B?"))
        #expect(!quoted.contains("x@y"))
        #expect(MIMEBuilder.unstructuredHeader("Subject", "=?utf-8?B?Zm9v?=").hasPrefix("Subject: =?utf-8?B?PT91"),
                "text that looks like an encoded-word is encoded itself")
    }

    @Test func addressesThatCouldBreakAHeaderOrACommandAreRefused() {
        var random = SplitMix64(seed: 42)
        for bad in ["zoe@visitor.example\r\nRCPT TO:<x@y>", "zoe visitor@example", "<zoe@example>", "zoe", "a@b,c@d", "@example"] {
            let message = invitation(to: [MailAddress(bad)])
            #expect(throws: MailBuildError.invalidAddress(bad)) { try MIMEBuilder.build(message, date: testDate, random: &random) }
        }
        #expect(throws: MailBuildError.noRecipient) { try MIMEBuilder.build(invitation(to: []), date: testDate, random: &random) }
    }

    @Test func structureIsMixedOverRelatedOverAlternative() throws {
        let (_, text) = try build()
        let types = text.components(separatedBy: "\r\n").filter { $0.hasPrefix("Content-Type:") }
            .map { String($0.dropFirst(14).prefix { $0 != ";" }) }
        #expect(types == ["multipart/mixed", "multipart/related", "multipart/alternative", "text/plain", "text/html",
                          "image/png", "text/calendar"])
        #expect(text.contains("Content-ID: <pass>\r\nContent-Disposition: inline;\r\n filename=\"pass.png\""))
        #expect(text.contains("Content-Type: text/calendar; charset=utf-8; method=PUBLISH;\r\n name=\"visit.ics\""))
        #expect(MIMEBuilder.safeFilename("Pass für Zoë\r\n.png") == "Pass_f__r_Zo____.png")
    }

    @Test func eachLevelOfStructureIsThereOnlyWhenItHasSomethingToAdd() throws {
        func types(_ message: MailMessage) throws -> [String] {
            try build(message).text.components(separatedBy: "\r\n").filter { $0.hasPrefix("Content-Type:") }
                .map { String($0.dropFirst(14).prefix { $0 != ";" }) }
        }
        let from = MailAddress("gate@site.example")
        let to = [MailAddress("zoe@visitor.example")]
        #expect(try types(MailMessage(from: from, to: to, subject: "Your code", text: "123456")) == ["text/plain"])
        #expect(try types(MailMessage(from: from, to: to, subject: "Hi", text: "t", html: "<p>h</p>"))
                == ["multipart/alternative", "text/plain", "text/html"])
        #expect(try types(MailMessage(from: from, to: to, subject: "Hi", text: "t",
                                      attachments: [.calendarEvent(calendarText)]))
                == ["multipart/mixed", "text/plain", "text/calendar"])
    }
}
