import Foundation
import GatePassCore
import GatePassCrypto
import GatePassMail
import GatePassPass
import QRCode

/// Turns a queued mail into the message that goes out, from what the database says when it
/// is sent. Every outside value is cleaned for its place: header text is encoded by the MIME
/// builder, HTML is escaped, calendar text is escaped the iCalendar way.
struct MailComposer: Sendable {
    let settings: MailSettings
    let passes: PassRenderer
    /// The server's `timeZone` (an organization's own zone wins), with its configured name.
    let serverTimeZone: TimeZone
    let serverTimeZoneName: String
    /// Keys the stored hash of pass page tokens (a copy of the database opens no pass page).
    let passTokenKey: [UInt8]

    /// Why a mail cannot be composed: it is given up (the visitor is gone, or not this mail's
    /// subject any more), not retried.
    struct Unsendable: Error, CustomStringConvertible {
        var description: String
    }

    func message(for mail: QueuedMail, _ tx: any Transaction) throws -> MailMessage {
        let to = [MailAddress(mail.recipient)]
        guard let content = mail.content else { throw Unsendable(description: "its payload is not one this version understands") }
        switch content {
        case .otp(let code):
            return MailMessage(from: settings.from, to: to, subject: "Your Gate Pass login code",
                               text: """
                               Your login code is \(code).

                               It works once, for 10 minutes. If you did not ask for it, ignore this mail: \
                               nobody can log in without the code.
                               """)
        case .test:
            return MailMessage(from: settings.from, to: to, subject: "Gate Pass test mail",
                               text: "This is a test mail from Gate Pass at \(settings.publicBaseURL.withLock { $0 }). Mail works.")
        case .invitation(let visitorId, let passToken):
            let (visitor, site) = try subject(visitorId, mail, tx)
            // Composed when sent, perhaps hours later (a relay that was down): a visit called off
            // since, or a newer invitation that ended this one's page, would make the link a 404.
            guard ![.cancelled, .checkedOut, .rejected].contains(visitor.status) else {
                throw Unsendable(description: "the visitor is \(visitor.status.rawValue) now")
            }
            guard try tx.visitors.find(passTokenHash: passTokenHash(passToken))?.visitor.id == visitorId else {
                throw Unsendable(description: "a newer invitation replaced it (its pass page has ended)")
            }
            return try invitation(visitor, site: site, passURL: passURL(passToken), to: to)
        case .arrival(let visitorId):
            let (visitor, site) = try subject(visitorId, mail, tx)
            var gate = ""
            if let checkpointId = visitor.checkpointId,
               let checkpoint = try tx.checkpoints.find(id: checkpointId, organizationId: site.organizationId) {
                gate = " at \(checkpoint.name)"
            }
            let time = visitor.checkedInAt.map { " on \(site.clock.stamped($0))" } ?? ""
            let company = visitor.company.map { " from \($0)" } ?? ""
            return MailMessage(from: settings.from, to: to, subject: "Your visitor \(visitor.name) has arrived",
                               text: """
                               \(visitor.name)\(company) checked in\(gate)\(time).

                               Pass \(visitor.shortId.rawValue), \(site.name).
                               """)
        case .approval(let visitorId):
            let (visitor, site) = try subject(visitorId, mail, tx)
            let company = visitor.company.map { " from \($0)" } ?? ""
            let purpose = visitor.purpose.map { "\nPurpose: \($0)" } ?? ""
            return MailMessage(from: settings.from, to: to, subject: "A visitor waits for your approval: \(visitor.name)",
                               text: """
                               \(visitor.name)\(company) is waiting at \(site.name) for your decision.\(purpose)

                               Approve or reject in the Gate Pass console (Approvals tab).
                               """)
        }
    }

    func passURL(_ token: String) -> String { settings.publicBaseURL.withLock { $0 } + "/p/" + token }

    /// What the visitors table stores of a pass page token: its HMAC under `passTokenKey`.
    func passTokenHash(_ token: String) -> [UInt8] { HMACSHA256.authenticate(key: passTokenKey, message: token) }

    private func subject(_ visitorId: String, _ mail: QueuedMail, _ tx: any Transaction) throws -> (Visitor, SiteProfile) {
        guard let record = try tx.visitors.find(id: visitorId) else { throw Unsendable(description: "the visitor no longer exists") }
        return (record.visitor, try site(record.organizationId, tx))
    }

    func site(_ organizationId: String, _ tx: any Transaction) throws -> SiteProfile {
        guard let organization = try tx.directory.organization(id: organizationId) else {
            throw Unsendable(description: "the organization no longer exists")
        }
        if let name = organization.timeZone {
            // A stored zone this build does not know is an error, never the server's by default.
            guard let zone = TimeZone(identifier: name) else {
                throw APIError.internal("organization \(organization.id) has the unknown time zone \(name)")
            }
            return SiteProfile(organizationId: organization.id, name: organization.name, timeZone: zone, timeZoneName: name)
        }
        return SiteProfile(organizationId: organization.id, name: organization.name, timeZone: serverTimeZone,
                    timeZoneName: serverTimeZoneName)
    }

    private func invitation(_ visitor: Visitor, site: SiteProfile, passURL: String, to: [MailAddress]) throws -> MailMessage {
        let validity = site.clock.window(from: visitor.validity.from, until: visitor.validity.until)
        let host = visitor.hostName.map { "\nYour host: \($0)" } ?? ""
        let text = """
        Hello \(visitor.name),

        you are expected at \(site.name): \(validity).\(host)

        Show the attached pass at the gate, or open it on your phone:
        \(passURL)

        If the code cannot be scanned, the guard types your pass number: \(Self.grouped(visitor.shortId.rawValue))
        """
        func h(_ value: String) -> String { XML.escape(value) }
        let hostHTML = visitor.hostName.map { "<p>Your host: \(h($0))</p>" } ?? ""
        let html = """
        <!DOCTYPE html><html><head><meta charset="utf-8"><title>\(h(site.name))</title></head><body>
        <p>Hello \(h(visitor.name)),</p>
        <p>you are expected at <b>\(h(site.name))</b>: \(h(validity)).</p>\(hostHTML)
        <p>Show this pass at the gate, or <a href="\(h(passURL))">open it on your phone</a>.</p>
        <p><img src="cid:pass" alt="Visitor pass \(h(visitor.shortId.rawValue))" width="413" height="583"></p>
        <p>If the code cannot be scanned, the guard types your pass number:
        <b style="font-family:monospace;font-size:1.4em">\(h(Self.grouped(visitor.shortId.rawValue)))</b></p>
        </body></html>
        """
        let png = try passes.png(visitor, site: site)
        let calendar = Self.calendarEntry(visitor, site: site, passURL: passURL, from: settings.from.address)
        return MailMessage(from: settings.from, to: to, subject: "Your visitor pass for \(site.name)", text: text, html: html,
                           inline: [InlinePart(contentID: "pass", part: .png(png, filename: "pass-\(visitor.shortId.rawValue).png"))],
                           attachments: [.calendarEvent(calendar)])
    }

    /// The short id in two groups of four, exactly as the pass prints it.
    static func grouped(_ shortId: String) -> String { PassLayout.grouped(shortId) }

    /// An iCalendar (RFC 5545) entry for the visit: times in UTC, text escaped, lines folded.
    static func calendarEntry(_ visitor: Visitor, site: SiteProfile, passURL: String, from organizer: String) -> String {
        func stamp(_ date: Date) -> String {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
            return formatter.string(from: date)
        }
        let lines = [
            "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Gate Pass//Visitor pass//EN", "METHOD:PUBLISH",
            "BEGIN:VEVENT",
            "UID:\(visitor.id)@gatepass",
            "DTSTAMP:\(stamp(visitor.createdAt))",
            // RFC 5546 §3.2.1: a PUBLISHed event names its organizer: the sender, mailFrom, an
            // address MailAddress.isValid accepted (no character a property value would escape).
            "ORGANIZER:mailto:\(organizer)",
            "DTSTART:\(stamp(visitor.validity.from))",
            // A window ending at :59 (the default day ends 23:59:59) ends the entry at the next minute.
            "DTEND:\(stamp(Int(visitor.validity.until.timeIntervalSince1970) % 60 == 59 ? visitor.validity.until.addingTimeInterval(1) : visitor.validity.until))",
            "SUMMARY:\(icsText("Visit to \(site.name)"))",
            "DESCRIPTION:\(icsText("Pass \(grouped(visitor.shortId.rawValue)). Your pass: \(passURL)"))",
            "URL:\(icsText(passURL))",
            "END:VEVENT", "END:VCALENDAR",
        ]
        return lines.map(fold).joined(separator: "\r\n") + "\r\n"
    }

    /// TEXT values: backslash, semicolon and comma escaped; control characters (new lines
    /// included) become spaces, so no value can start a property of its own.
    static func icsText(_ value: String) -> String {
        var out = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case ";": out += "\\;"
            case ",": out += "\\,"
            default:
                out.unicodeScalars.append(scalar.properties.generalCategory == .control ? " " : scalar)
            }
        }
        return out
    }

    /// Lines longer than 75 octets are folded (CRLF and a space), never inside a UTF-8 sequence.
    static func fold(_ line: String) -> String {
        var out = ""
        var octets = 0
        for scalar in line.unicodeScalars {
            let size = String(scalar).utf8.count
            if octets + size > 75 {
                out += "\r\n "
                octets = 1
            }
            out.unicodeScalars.append(scalar)
            octets += size
        }
        return out
    }
}
