import Foundation
import GatePassCore

// The Scan screen's walk-in form: a visitor without a pass, registered for an approver to decide.

extension ScanScreen {
    /// The walk-in form while it is open.
    public struct WalkInForm: Sendable, Equatable {
        var inputs = WalkInRegistration.Field.allCases.map { TextInput(limit: $0.limit) }
        public internal(set) var focus: WalkInRegistration.Field = .name
        public internal(set) var notice: Notice?

        public func text(_ field: WalkInRegistration.Field) -> String { inputs[field.rawValue].text }

        var registration: WalkInRegistration {
            func optional(_ field: WalkInRegistration.Field) -> String? { text(field).isEmpty ? nil : text(field) }
            return WalkInRegistration(name: text(.name), phone: optional(.phone), email: optional(.email),
                                      company: optional(.company), purpose: optional(.purpose), hostName: optional(.hostName))
        }
    }

    func openWalkIn() -> ScreenAction {
        walkIn = WalkInForm()
        notice = nil
        return .redraw
    }

    func handleWalkIn(_ key: Key) -> ScreenAction {
        guard var form = walkIn else { return .none }
        let fields = WalkInRegistration.Field.allCases
        switch key {
        case .character(let character):
            let field = form.focus
            form.notice = Self.typingNotice(form.inputs[field.rawValue].insert(character), character: character,
                                            full: "\(field.label) takes at most \(field.limit) characters; the rest was not typed.")
        case .backspace, .delete:
            guard form.inputs[form.focus.rawValue].deleteBackward() else { return .none }
            form.notice = nil
        case .control("u"):
            form.inputs[form.focus.rawValue].text = ""
            form.notice = nil
        case .tab, .down:
            form.focus = fields[(form.focus.rawValue + 1) % fields.count]
        case .backTab, .up:
            form.focus = fields[(form.focus.rawValue + fields.count - 1) % fields.count]
        case .enter where form.focus != fields.last:
            form.focus = fields[form.focus.rawValue + 1]
        case .enter, .control("s"):
            return submitWalkIn(form)
        case .escape:
            walkIn = nil
            notice = .info("Walk-in cancelled: nothing was sent.")
            return .redraw
        default:
            return .none
        }
        walkIn = form
        return .redraw
    }

    private func submitWalkIn(_ form: WalkInForm) -> ScreenAction {
        var form = form
        let registration: WalkInRegistration
        do {
            registration = try form.registration.validated()
        } catch {
            // Everything typed stays; the field at fault gets the keyboard.
            form.focus = error.field
            form.notice = .error(error.message)
            walkIn = form
            return .redraw
        }
        switch services.walkIn(registration) {
        case .applied(let visitor):
            walkIn = nil
            notice = nil
            let code = visitor.shortId.rawValue
            // A walk-in the blocklist blocks is stored REJECTED at once (the server answered
            // BLOCKED); the gate says no more than the check-in would.
            if visitor.status == .rejected {
                return record(GateDecision(outcome: .denied, code: code, visitorName: visitor.name, visitorId: visitor.id,
                                           shortId: code, result: ScanResult.blocked.rawValue,
                                           reason: GateDecision.blockedReason), code: code)
            }
            return record(GateDecision(outcome: .approvalRequested, code: code, visitorName: visitor.name, visitorId: visitor.id,
                                       shortId: code, result: visitor.status.rawValue,
                                       reason: "walk-in registered; waiting for an approver"), code: code)
        case .queued:
            walkIn = nil
            notice = nil
            return record(GateDecision(outcome: .queuedOffline, code: registration.name, visitorName: registration.name,
                                       reason: "walk-in queued; it is sent when the server is back"),
                          code: registration.name)
        case .refused(let message):
            form.notice = .error("Not registered: \(message)")
            walkIn = form
            return .alert
        case .needsLogin(let message):
            walkIn = nil
            notice = nil
            return record(GateDecision(outcome: .queuedOffline, code: registration.name, visitorName: registration.name,
                                       reason: "your session has ended (\(message)); log in again — the walk-in stays queued until then"),
                          code: registration.name)
        }
    }
}
