import CurlHTTP
import Foundation
import GatePassCore
import GatePassMail
import Synchronization

/// Sends the mail queue, off every request thread: one worker thread wakes when a commit
/// queued mail (`wake()`), when the soonest retry is due, and at least once a minute.
///
/// Each attempt is composed from the database as it is then, built, and handed to the
/// transport. Sent: the row keeps only its log columns (the payload, and with it any login
/// code or pass token, is erased). A refusal for good (a 5xx reply to the sender, a
/// recipient or the data; an address no mail can carry; a visitor that is gone) gives up at
/// once; anything else (connection, TLS, authentication, a 4xx) is retried after 1, 2, 4 …
/// minutes, at most an hour apart, until the mail's time runs out (24 h; a login code's own
/// expiry). Each failure is one log line with the mail's id and kind and the transport's
/// error — never the recipient, the code or the body.
final class MailWorker: Sendable {
    let store: ServerDatabase
    let settings: MailSettings
    let composer: MailComposer
    let clock: any WallClock
    let log: any LogSink
    /// Signalled after each mail's status changes (what tests wait on).
    let changes = ChangeSignal()
    private let wakeUps = DispatchSemaphore(value: 0)
    private let running = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    /// One delivery pass at a time (the thread's, or a test's). A bare NSLock: `Locked<Void>`
    /// holds a zero-sized value, whose accesses ThreadSanitizer mistook for a race.
    private let passLock = NSLock()
    private let unreadableValues = UnreadableValueLog()
    /// Longest sleep between passes when nothing is due.
    static let idleWake: TimeInterval = 60

    init(store: ServerDatabase, settings: MailSettings, composer: MailComposer, clock: any WallClock, log: any LogSink) {
        self.store = store
        self.settings = settings
        self.composer = composer
        self.clock = clock
        self.log = log
    }

    func start() {
        guard settings.isEnabled, !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let thread = Thread { [self] in
            while running.load(ordering: .acquiring) {
                deliverDue()
                _ = wakeUps.wait(timeout: .now() + .milliseconds(Int(sleepSeconds() * 1000)))
            }
            finished.signal()
        }
        thread.name = "gatepass-mail"
        thread.start()
    }

    /// Ends the thread after the attempt it is making (bounded by the SMTP timeouts).
    func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        wakeUps.signal()
        finished.wait()
    }

    /// A commit queued mail: look now.
    func wake() { wakeUps.signal() }

    /// Checks the settings with a real session (connect, EHLO, STARTTLS, AUTH), off the
    /// caller's thread; the outcome is logged (and `report` told, for stderr).
    func probe(report: @escaping @Sendable (String) -> Void) {
        guard let transport = settings.transport else { return }
        let name = settings.transportName
        DispatchQueue.global(qos: .utility).async { [log] in
            do {
                try transport.probe()
                log.log("mail: \(name) works (probed at start)")
            } catch {
                let line = "mail: the mail settings do not work (\(name)): \(error); mail is queued and retried until they do"
                log.log(line)
                report(line)
            }
        }
    }

    private func sleepSeconds() -> TimeInterval {
        let next = (try? store.read { tx in try tx.mail.nextAttemptAt() }) ?? nil
        guard let next else { return Self.idleWake }
        return min(max(next.timeIntervalSince(clock.now()), 0.05), Self.idleWake)
    }

    /// One pass over what is due now; returns how many mails changed status or were retried.
    @discardableResult
    func deliverDue() -> Int {
        guard let transport = settings.transport else { return 0 }
        passLock.lock()
        defer { passLock.unlock() }
        var handled = 0
        // One server of those sharing the database sends at a time, so no mail goes twice.
        store.runExclusively(.mailDelivery) { handled = deliverDueHere(transport) }
        return handled
    }

    private func deliverDueHere(_ transport: any MailTransport) -> Int {
        let now = clock.now()
        var handled = 0
        do {
            // Nothing queued (the usual case): no write at all.
            guard try store.read({ tx in try tx.mail.nextAttemptAt() }) != nil else { return 0 }
            if try store.write({ tx in try tx.mail.expire(at: now) }) > 0 { changes.signal() }
            let due = try store.read { tx in try tx.mail.due(at: now, limit: 20) }
            for mail in due {
                attempt(mail, transport: transport, now: now)
                handled += 1
                changes.signal()
            }
        } catch {
            // A queued mail that cannot be read stops the queue at every run: that is logged once.
            if !unreadableValues.note(error, in: "mail delivery", to: log) {
                log.log("mail: the queue could not be read or updated: \(error)")
            }
        }
        return handled
    }

    private enum Outcome {
        case sent
        case retry(String)
        case giveUp(String)
    }

    private func attempt(_ mail: QueuedMail, transport: any MailTransport, now: Date) {
        let outcome: Outcome
        do {
            guard mail.content != nil else { throw MailComposer.Unsendable(description: "its payload is not one this version understands") }
            let message = try store.read { tx in try composer.message(for: mail, tx) }
            var random = SystemRandomNumberGenerator()
            var outgoing = try MIMEBuilder.build(message, date: now, random: &random)
            outgoing.label = "\(mail.kind.rawValue)-\(mail.recipient)"
            try transport.send(outgoing)
            if let folder = transport as? MailDirectoryTransport {
                log.log("dev: mail \(mail.id) (\(mail.kind.rawValue)) written to \(folder.path(for: outgoing))")
            }
            outcome = .sent
        } catch let error as MailComposer.Unsendable {
            outcome = .giveUp(error.description)
        } catch let error as MailBuildError {
            outcome = .giveUp(error.description)
        } catch let error as SMTPError {
            outcome = Self.isPermanent(error) ? .giveUp(error.description) : .retry(error.description)
        } catch {
            outcome = .retry("\(error)")
        }
        do {
            try store.write { tx in
                switch outcome {
                case .sent:
                    try tx.mail.markSent(id: mail.id, at: now)
                case .giveUp(let reason):
                    try tx.mail.markFailed(id: mail.id, error: reason, countsAsAttempt: true)
                case .retry(let reason):
                    let delay = Self.retryDelay(afterAttempts: mail.attempts + 1)
                    let next = now.addingTimeInterval(delay)
                    if next >= mail.giveUpAt {
                        try tx.mail.markFailed(id: mail.id, error: reason + "; not sent in time, given up", countsAsAttempt: true)
                    } else {
                        try tx.mail.markRetry(id: mail.id, error: reason, nextAttemptAt: next)
                    }
                }
            }
        } catch {
            log.log("mail \(mail.id): its status could not be saved: \(error)")
        }
        // A relay's reply may echo the address ("550 5.1.1 <a@b>: Recipient address rejected"):
        // the log line names the mail by id, never by its recipient.
        func shown(_ reason: String) -> String {
            reason.replacingOccurrences(of: mail.recipient, with: "(the recipient)", options: .caseInsensitive)
        }
        switch outcome {
        case .sent: break
        case .giveUp(let reason): log.log("mail \(mail.id) (\(mail.kind.rawValue)) given up: \(shown(reason))")
        case .retry(let reason):
            log.log("mail \(mail.id) (\(mail.kind.rawValue)) attempt \(mail.attempts + 1) failed, retrying: \(shown(reason))")
        }
    }

    /// 1, 2, 4 … minutes after each failed attempt, at most an hour.
    static func retryDelay(afterAttempts attempts: Int) -> TimeInterval {
        min(60 * pow(2, Double(max(attempts - 1, 0))), 3600)
    }

    /// A refusal that another try will not change: a 5xx reply to MAIL FROM, RCPT TO or DATA.
    /// Authentication and connection failures are the server's settings, fixed by an admin
    /// and then retried.
    static func isPermanent(_ error: SMTPError) -> Bool {
        guard let code = error.replyCode, (500..<600).contains(code) else { return false }
        return [.mailFrom, .recipient, .data].contains(error.stage)
    }
}
