import Foundation
import GatePassCore

/// The console's one view of its link to the server. The status line and the More tab both
/// read it, so they can never disagree; whatever learns something writes it: every request's
/// outcome (the shell's transport: an answer, whatever its status, means the server is there;
/// no answer means it is not) and the event stream's state.
///
/// Thread-safe: written from the outbox and stream threads, read on the UI thread.
public final class ConsoleConnection: Sendable {
    /// What the person is told, with the times to say how old the data is.
    public struct State: Sendable, Equatable {
        public enum Link: Sendable, Equatable {
            /// The server answers and the event stream is connected: lists are current.
            case live
            /// The server answers, but no event stream: lists are as fresh as their last read.
            case online
            /// The last request got no answer: what shows is from before.
            case offline
        }

        public var link: Link
        /// When the server last answered anything; nil: not since the console started.
        public var lastAnswer: Date?
        /// Since when the event stream has not been connected; nil while it is.
        public var notLiveSince: Date?

        public init(link: Link, lastAnswer: Date? = nil, notLiveSince: Date? = nil) {
            self.link = link; self.lastAnswer = lastAnswer; self.notLiveSince = notLiveSince
        }

        /// A stream that reconnects within this time is not worth a word (the server pings
        /// every 15 s; a reconnect after a dropped connection starts after 1 s).
        public static let staleAfter: TimeInterval = 15

        /// The stream has been away long enough for the lists to be out of date.
        public func isStale(now: Date) -> Bool {
            guard link == .online, let notLiveSince else { return false }
            return now.timeIntervalSince(notLiveSince) >= Self.staleAfter
        }

        /// The status line's words: "live", "online", "online · not live for 40 s",
        /// "OFFLINE · no answer for 20 s".
        public func words(now: Date) -> String {
            switch link {
            case .live:
                return "live"
            case .online:
                guard isStale(now: now), let notLiveSince else { return "online" }
                return "online · not live for \(ConsoleFormat.age(since: notLiveSince, now: now))"
            case .offline:
                guard let lastAnswer else { return "OFFLINE · no answer since the console started" }
                return "OFFLINE · no answer for \(ConsoleFormat.age(since: lastAnswer, now: now))"
            }
        }

        /// The More tab's sentence: the same state, with what it means.
        public func sentence(now: Date) -> String {
            switch link {
            case .live:
                return "live: new requests and changes show as they happen"
            case .online:
                return isStale(now: now) ? words(now: now) + ": lists change only when read again (r, g)" : "online"
            case .offline:
                return "offline" + words(now: now).dropFirst("OFFLINE".count) + ": changes queue and are sent when it is back"
            }
        }
    }

    private struct Facts: Sendable {
        var reachable = true
        var streaming = false
        var lastAnswer: Date?
        var notLiveSince: Date?
    }

    private let facts: Locked<Facts>

    /// - Parameter start: when the console started (the stream is not connected yet).
    public init(start: Date) {
        facts = Locked(Facts(notLiveSince: start))
    }

    public var state: State {
        facts.withLock { facts in
            let link: State.Link = !facts.reachable ? .offline : facts.streaming ? .live : .online
            return State(link: link, lastAnswer: facts.lastAnswer, notLiveSince: facts.streaming ? nil : facts.notLiveSince)
        }
    }

    /// The server answered a request (any status).
    public func serverAnswered(at now: Date) {
        facts.withLock { $0.reachable = true; $0.lastAnswer = now }
    }

    /// A request got no answer: cannot connect, timed out, broken off.
    public func serverUnreachable(at now: Date) {
        facts.withLock { $0.reachable = false }
    }

    /// The event stream connected (the server answered it) or ended.
    public func streamChanged(connected: Bool, at now: Date) {
        facts.withLock { facts in
            if connected {
                facts.reachable = true
                facts.lastAnswer = now
                facts.notLiveSince = nil
            } else if facts.streaming || facts.notLiveSince == nil {
                // The live stream kept the data current up to the moment it broke off.
                if facts.streaming { facts.lastAnswer = now }
                facts.notLiveSince = now
            }
            facts.streaming = connected
        }
    }

    /// A new session (login or logout): nothing is known of its stream yet.
    public func restart(at now: Date) {
        facts.withLock { facts in
            facts.streaming = false
            facts.notLiveSince = now
        }
    }
}
