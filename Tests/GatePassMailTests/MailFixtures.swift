import Foundation
@testable import GatePassMail

/// A 1×1 PNG.
let testPNG = Array(Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")!)

/// 2026-12-01 15:27:19 UTC, a Tuesday.
let testDate = Date(timeIntervalSince1970: 1_796_138_839)

let hostileName = "Zoë Müller\r\nBcc: attacker@evil.example"
let hostileSubject = "Your pass for Zoë\r\nBcc: attacker@evil.example\nX-Injected: 1 — Besuch am Tor 3 (Gebäude Süd), bitte Ausweis mitbringen"

let calendarText = """
BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//Gate Pass//Mail test//EN
METHOD:PUBLISH
BEGIN:VEVENT
UID:visit-1@gatepass.test
DTSTAMP:20261201T152719Z
DTSTART:20261202T090000Z
DTEND:20261202T170000Z
SUMMARY:Visit
END:VEVENT
END:VCALENDAR
"""

func invitation(to recipients: [MailAddress] = [MailAddress("zoe@visitor.example", displayName: hostileName)]) -> MailMessage {
    MailMessage(
        from: MailAddress("gate@site.example", displayName: "Gate Pass"),
        to: recipients,
        subject: hostileSubject,
        text: "Hello Zoë,\nyour pass: https://gate.example/p/abc\n.\nA line with only a dot above.",
        html: "<p>Hello Zoë,</p><p><img src=\"cid:pass\" alt=\"pass\"></p>",
        inline: [InlinePart(contentID: "pass", part: .png(testPNG, filename: "pass.png"))],
        attachments: [.calendarEvent(calendarText, filename: "visit.ics")])
}
