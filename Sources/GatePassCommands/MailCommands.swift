import Foundation
import GatePassClient
import GatePassCore

/// `gatepass mail …`: the server's mail log and a test mail (OWNER/ADMIN).
enum MailCommands {
    static let members: [GatePassCLI.Subcommand] = [
        .init("list", "The mail log, newest first: what was queued, sent or given up, and why.", MailListCommand.self),
        .init("test", "Queue a test mail, to check the server's SMTP settings.", MailTestCommand.self),
    ]
}

struct MailListCommand: GatePassCommand {
    static let limit = PageOptions.limit(of: "mails")
    static let configuration = CommandConfiguration(
        name: "gatepass mail list",
        overview: "The server's mail log, newest first: login codes, invitations, arrival and approval notices, tests; queued, sent or failed, with the last error. Mail bodies are never shown.",
        options: [limit, OutputOptions.flag("Print the API's page: {\"items\": [{id, kind, to, status, attempts, lastError, createdAt, sentAt}], \"nextCursor\"}.")])

    var limit: Int
    var json: Bool
    init(parsing arguments: ParsedArguments) throws(UsageError) {
        limit = try arguments.value(Self.limit) ?? PageOptions.defaultLimit
        json = arguments.has(OutputOptions.json)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let core = try context.core()
        let page = try core.online { api, token throws(ClientError) in try api.mailLog(token: token, limit: limit) }
        if json {
            context.terminal.out(ClientCommands.json(page))
        } else if page.items.isEmpty {
            context.terminal.out("the mail log is empty")
        } else {
            let clock = try OfficeCommands.SiteZone(core).clock()
            for mail in page.items {
                var line = "\(clock.stamped(mail.createdAt))  \(mail.kind.rawValue)  \(mail.status.rawValue)  \(mail.to)  attempts \(mail.attempts)"
                if let sent = mail.sentAt { line += "  sent \(clock.short(sent, now: mail.createdAt))" }
                if let error = mail.lastError { line += "  last error: \(error)" }
                context.terminal.out(visible: line)
            }
            PageOptions.noteMore(page, of: "mails", on: context.terminal)
        }
        return 0
    }
}

struct MailTestCommand: GatePassCommand {
    static let to = VisitorFieldOptions.address("--to", required: true, help: "Where the test mail goes.")
    static let configuration = CommandConfiguration(
        name: "gatepass mail test",
        overview: "Queue a test mail through the server's mail settings; gatepass mail list then shows whether it was sent or why not.",
        options: [to, OutputOptions.flag("Print the server's answer: {\"queued\": true}.")])

    var to: String
    var json: Bool
    init(parsing arguments: ParsedArguments) throws(UsageError) {
        to = try arguments.required(Self.to)
        json = arguments.has(OutputOptions.json)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let answer = try context.core().online { api, token throws(ClientError) in
            try api.sendTestMail(token: token, to: to, idempotencyKey: OfficeCommands.idempotencyKey())
        }
        if json {
            context.terminal.out(ClientCommands.json(answer))
        } else {
            context.terminal.out(visible: "a test mail to \(to) is queued; see gatepass mail list for how it went")
        }
        return 0
    }
}
