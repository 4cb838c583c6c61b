import Foundation
import GatePassCore
import GatePassTestSupport
import Testing
@testable import GatePassServer

/// The address visitors reach the server at (a reverse proxy's): pass links in mail start with it.
let mailBaseURL = "https://gate.example.test"

/// A server whose mail goes to `sink` over SMTP: the sink's URL and CA, AUTH with a password
/// file, a sender and a public address. The sink may be stopped (a relay that is down).
func withMailServer<T>(_ sink: SMTPSink, devMode: Bool = true, password: String = SMTPSink.password,
                       configure: (inout ServerConfiguration) -> Void = { _ in },
                       _ body: (TestServer) throws -> T) throws -> T {
    let passwordFile = sink.folder + "/smtp-password-\(UUID().uuidString)"
    // An editor leaves a line end after the password; the server drops it.
    try Data((password + "\n").utf8).write(to: URL(fileURLWithPath: passwordFile))
    return try withServer(devMode: devMode, configure: { configuration in
        configuration.smtpURL = sink.url
        configuration.smtpCAFile = sink.caFile
        configuration.smtpUsername = SMTPSink.user
        configuration.smtpPasswordFile = passwordFile
        configuration.mailFrom = "Gate Pass <gate@acme.test>"
        configuration.publicBaseURL = mailBaseURL + "/"
        configure(&configuration)
    }, body)
}

/// One organization's users with tokens made straight in the session table, so that no login
/// code is mailed: the sink then holds only the mails a test causes.
struct MailSite {
    var owner: Profile
    var ownerToken: String
    var approver: Profile
    var desk: Profile
    var approverToken: String
    /// The owner's scanner token at "Main gate".
    var scanner: String
    var mainGate: String
}

extension TestServer {
    var mailWorker: MailWorker { server.application.mailWorker }

    /// A login token for `user` without the OTP routes (and so without a login-code mail).
    func directLogin(_ user: Profile) throws -> String {
        let userId = user.id, now = clock.now()
        let claims = try store.write { tx in
            try Sessions.create(userId: userId, kind: .login, parent: nil, checkpointId: nil, now: now, lifetime: 43_200, tx)
        }
        return server.application.signer.sign(claims)
    }

    func makeMailSite(_ organization: String = "Acme", domain: String = "acme.test") throws -> MailSite {
        let owner = try addUser("owner@\(domain)", role: .owner, organization: organization, name: "Olga Owner")
        let approver = try addUser("approver@\(domain)", role: .approver, organization: organization, canScan: true,
                                   name: "Ana Approver")
        let desk = try addUser("desk@\(domain)", role: .approver, organization: organization, name: "Dan Desk")
        let ownerToken = try directLogin(owner)
        let scanner = try scannerTokenAnswer(ownerToken)
        return MailSite(owner: owner, ownerToken: ownerToken, approver: approver, desk: desk,
                        approverToken: try directLogin(approver),
                        scanner: scanner["scannerToken"] as? String ?? "",
                        mainGate: (scanner["checkpoint"] as? [String: Any])?["id"] as? String ?? "")
    }

    /// Every mail of the queue and log, newest first, login codes included.
    func mailLog() throws -> [MailSummary] {
        try store.read { tx in try tx.mail.list(organizationId: nil, after: nil, limit: 1000).map(\.mail) }
    }

    /// Waits (on the worker's signal) until the log holds a mail that `predicate` accepts.
    @discardableResult
    func waitForMail(_ what: String, where predicate: (MailSummary) -> Bool) throws -> MailSummary {
        var found: MailSummary?
        try waitForMailLog(what) { log in
            found = log.first(where: predicate)
            return found != nil
        }
        return found!
    }

    /// Waits (on the worker's signal) until `condition` holds for the whole log.
    func waitForMailLog(_ what: String, until condition: ([MailSummary]) -> Bool) throws {
        guard try mailWorker.changes.wait(until: { condition(try mailLog()) }) else {
            throw TestFailure("no \(what); the log: \(try mailLog())")
        }
    }

    /// Waits until the mail of `kind` to `recipient` is sent (or throws, naming the log).
    @discardableResult
    func waitUntilSent(_ kind: MailKind, to recipient: String) throws -> MailSummary {
        let mail = try waitForMail("\(kind) to \(recipient) settled") { $0.kind == kind && $0.to == recipient && $0.status != .queued }
        guard mail.status == .sent else { throw TestFailure("the \(kind) mail to \(recipient) was not sent: \(mail)") }
        return mail
    }

    /// Every log line so far, joined (what a test searches for a secret).
    var logText: String { log.all.joined(separator: "\n") }
}

extension SMTPSink {
    /// The messages received for `recipient`, in order.
    func messages(to recipient: String) throws -> [ReceivedMessage] {
        try messages().filter { $0.recipients == [recipient] }
    }

    /// The one message received for `recipient` (throws when there is none or more than one).
    func onlyMessage(to recipient: String) throws -> ReceivedMessage {
        let found = try messages(to: recipient)
        guard found.count == 1 else { throw SinkFailure("\(found.count) messages to \(recipient), not one: \(found.map(\.subject))") }
        return found[0]
    }
}

/// An `otpDeliveryCommand` that writes each code to `<folder>/<email>.code`, whole (by a rename),
/// so a test can wait for the file and read the code; returns the program's path.
func codeDeliveryScript(in folder: String) throws -> String {
    let script = folder + "/deliver.sh"
    try "#!/bin/sh\ncat > \"\(folder)/$1.code.partial\" && mv \"\(folder)/$1.code.partial\" \"\(folder)/$1.code\"\n"
        .write(toFile: script, atomically: true, encoding: .utf8)
    chmod(script, 0o755)
    return script
}

/// The first pass page link in `text`: the public address, `/p/`, a 43-character token.
func passLink(in text: String, base: String = mailBaseURL) -> String? {
    let pattern = NSRegularExpression.escapedPattern(for: base) + "/p/[A-Za-z0-9_-]{43}"
    guard let expression = try? NSRegularExpression(pattern: pattern),
          let match = expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
          let range = Range(match.range, in: text) else { return nil }
    return String(text[range])
}

/// The path part of a pass link, as a request to this server carries it.
func passPath(_ link: String) -> String {
    link.range(of: "/p/").map { String(link[$0.lowerBound...]) } ?? link
}
