import Foundation
import GatePassClient
import GatePassConsole
import GatePassCore

// The Scan tab's calls (`ScanServices`, declared in GatePassConsole) over the client core.


extension ClientCoreServices: ScanServices {
    public func passCacheSyncedAt() -> Date? { (try? core.passCacheSyncedAt()) ?? nil }

    public func stats() throws(ConsoleError) -> ConsoleRead<ScanStats> {
        do {
            let read = try core.stats()
            return ConsoleRead(value: read.value, updatedAt: read.updatedAt, fromCache: read.fromCache)
        } catch {
            throw Self.consoleError(error, retryAfter: nil)
        }
    }

    public func checkIn(code: String, confirmApprovalRequest: Bool) -> GateDecision {
        do {
            // While the outbox service knows the server is away, a scan is queued at once rather
            // than waiting out a connect timeout at the gate (the kiosk does the same).
            if knownOffline() {
                _ = try core.queueCheckIn(code: code, confirmApprovalRequest: confirmApprovalRequest)
                return .queued(code: code)
            }
            switch try core.checkIn(code: code, confirmApprovalRequest: confirmApprovalRequest) {
            case .applied(let response):
                do {
                    return GateDecision.from(try APIClient.decode(CheckInAnswer.self, from: response.body), code: code)
                } catch {
                    // Applied, but unreadable: do not claim an admission that cannot be shown.
                    return GateDecision(outcome: .denied, code: code,
                                        reason: "the check-in was sent, but the server's answer could not be read; look the visitor up to see where they stand")
                }
            case .queued:
                return .queued(code: code)
            case .refused(let status, _, let message):
                // 404 and 400 are the pass's fault (unknown, not a pass); anything else (403…)
                // is said in the server's words.
                if status == 404 || status == 400 { return .refused(ScanResult(refusalStatus: status), code: code) }
                return GateDecision(outcome: .denied, code: code, reason: "refused by the server: \(message)")
            case .needsLogin(_, let message):
                return Self.waitingForLogin(code: code, message: message)
            }
        } catch {
            if case .unauthorized(let message) = error { return Self.waitingForLogin(code: code, message: message) }
            return GateDecision(outcome: .denied, code: code,
                                reason: "not checked in: " + Self.consoleError(error, retryAfter: nil).sentence)
        }
    }

    /// A check-in kept in the outbox until the next login: it is queued, not refused.
    private static func waitingForLogin(code: String, message: String) -> GateDecision {
        GateDecision(outcome: .queuedOffline, code: code,
                     reason: "your session has ended (\(message)); log in again — the check-in stays queued until then")
    }

    public func lookup(_ query: String) throws(ConsoleError) -> [Visitor] {
        let trimmed = query.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw .refused("type a name, phone or email to look up") }
        // The lookup route takes the scanner token only; one that is missing (the login could
        // not get one) or about to end is fetched first. Offline this fails, and so will the lookup.
        _ = try? core.ensureScannerToken(now: clock.now())
        do {
            return try core.lookup(trimmed).items
        } catch {
            throw Self.consoleError(error, retryAfter: nil)
        }
    }

    public func walkIn(_ registration: WalkInRegistration) -> WalkInOutcome {
        let body = ClientCore.WalkIn(name: registration.name, phone: registration.phone, email: registration.email,
                                     company: registration.company, purpose: registration.purpose,
                                     hostName: registration.hostName)
        switch mutation({ () throws(ClientError) in try core.walkIn(body) },
                        unreadable: "the walk-in was sent, but the server's answer could not be read (%@); look the visitor up to see where they stand",
                        decode: { try APIClient.decode(WalkInAnswer.self, from: $0.body).visitor }) {
        case .applied(let visitor): return .applied(visitor)
        case .queued: return .queued
        case .refused(let message): return .refused(message)
        case .needsLogin(let message): return .needsLogin(message)
        }
    }
}
