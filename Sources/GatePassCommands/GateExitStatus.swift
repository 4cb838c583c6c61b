import Foundation
import GatePassClient
import GatePassCore

/// How the gate commands (`checkin`, `walk-in`, `checkout`) end: 0 when the visitor may go on
/// (checked in, already inside, waiting for an approver, or queued for a server that is away),
/// 3 for a refusal the gate decided (`ScanResult.isDecidedRefusal`), 1 for errors (an unknown
/// pass, a text that is not a pass, a forgery, no server), 2 for usage.
enum GateExitStatus {
    static let refusal: Int32 = 3

    static func of(_ result: ScanResult) -> Int32 { result.isDecidedRefusal ? refusal : 0 }

    static let checkInNote = "Exit status: 0 CHECKED_IN, ALREADY_CHECKED_IN, AWAITING_APPROVAL or queued; 3 a refusal decided at the gate (BLOCKED, CANCELLED, REJECTED, CHECKED_OUT, EXPIRED, NOT_YET_VALID, APPROVAL_REQUIRED); 1 an unknown pass, a text that is not a pass, a forged signature or another error; 2 a usage error."
    static let walkInNote = "Exit status: 0 AWAITING_APPROVAL or queued; 3 BLOCKED; 1 an error; 2 a usage error."
    static let checkOutNote = "Exit status: 0 CHECKED_OUT or queued; 1 NOT_CHECKED_IN (the visitor is not inside) or another error; 2 a usage error."

    /// What `gatepass checkin` says of a check-in the server did not answer, once judged here
    /// (`ClientCore.judgeUnansweredCheckIn`), and the status it exits with.
    static func reportUnanswered(_ judged: ClientCore.UnansweredCheckIn, entry: OutboxEntry, reason: ClientError, asJSON: Bool,
                                 _ context: CommandContext) throws -> Int32 {
        let later = "it will be sent when the server is back (gatepass outbox drain)"
        switch judged {
        case .queuedForTheServer, .queuedWithoutKeys:
            var note = "queued as outbox entry \(entry.id): \(reason); \(later)"
            if judged == .queuedWithoutKeys {
                note += "; its signature was not checked: this device has no pass keys (log in while the server is reachable)"
            }
            if asJSON {
                context.terminal.out(ClientCommands.json(["queued": "true", "entry": String(entry.id), "reason": reason.description]))
            } else {
                context.terminal.out(visible: note)
            }
            return 0
        case .refused(let decision):
            let what = decision.shortId == nil ? "not a Gate Pass code" : "signature does not check out"
            let pass = decision.shortId.map { " (\($0.rawValue))" } ?? ""
            throw CommandFailure("refused: \(what)\(pass); nothing was queued (the server is unreachable: \(reason))")
        case .decided(let decision):
            let who = decision.visitor.map { "\($0.name) (\($0.shortId.rawValue))" } ?? decision.shortId?.rawValue ?? ""
            let basis = decision.basis == .signature ? "by signature" : "from the pass cache"
            let verdict = decision.admits ? "accepted offline \(basis)"
                : "refused offline \(basis): \(GateDecision.presentation(of: decision.result).reason)"
            if asJSON {
                context.terminal.out(ClientCommands.json([
                    "queued": "true", "entry": String(entry.id), "reason": reason.description,
                    "offlineDecision": decision.result.rawValue, "offlineBasis": decision.basis.rawValue,
                ]))
            } else {
                context.terminal.out(visible: "\(decision.result.rawValue)  \(who): \(verdict); queued as outbox entry \(entry.id), \(later)")
            }
            if decision.admits { return 0 }
            return decision.result.isDecidedRefusal ? refusal : 1
        }
    }
}
