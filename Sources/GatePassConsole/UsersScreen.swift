import Foundation
import GatePassCore

/// The organization's users (OWNER/ADMIN): role, scanning right, disabled, last login; add a
/// user, change one's name, role or scanning right, disable or enable one.
///
/// ```
/// Users · 4 · 1 disabled
/// Name            Email                 Role      Scan  State     Last login
/// Olivia Owner    owner@demo.gatepass   OWNER     yes   active    12-01 09:12      ← selected
/// Hana Host       host@demo.gatepass    HOST      no    disabled  never
/// n: add · e: edit · d: disable/enable · r: reload
/// ```
/// What is offered follows the server's rules (`UserRules`, the domain's judgement the server
/// applies): an ADMIN is offered no OWNER role and cannot edit an OWNER, nobody is offered a
/// change of their own role or disabled, and the last OWNER is not offered for disabling or
/// demotion. Whatever the server still refuses is said on the notice line.
public final class UsersScreen: ConsoleScreen {
    /// The form's fields, in the order shown (the edit form has no email: it cannot change).
    enum Field: Int, CaseIterable {
        case email, name, role, mayScan
    }

    /// What the open form does.
    enum FormPurpose: Equatable {
        case create
        case edit(UserSummary)
    }

    private let services: any GovernanceServices
    private let me: ConsoleUser
    private let clock: () -> Date
    private let fallbackZone: TimeZone

    public private(set) var site: Organization?
    public private(set) var users: [UserSummary] = []
    private var list = ListSelection()
    public var selection: Int { list.index }
    public private(set) var loadedAt: Date?
    public private(set) var errorLine: String?
    public private(set) var notice: VisitorsScreen.Notice?
    /// The user whose disabling (or enabling) waits for y/n.
    public private(set) var confirmingToggle: UserSummary?
    var form: FormFields?
    var formPurpose: FormPurpose?
    /// The roles the open form offers, in the order of its role choice.
    private(set) var offeredRoles: [Role] = []
    /// The last request sent and its key: sending the same again reuses the key.
    private var lastSent: (request: String, key: String)?

    /// - Parameter me: who is logged in (their role decides what is offered).
    public init(services: any GovernanceServices, me: ConsoleUser, clock: @escaping () -> Date = Date.init,
                fallbackZone: TimeZone = .current) {
        self.services = services
        self.me = me
        self.clock = clock
        self.fallbackZone = fallbackZone
    }

    public var title: String { "Users" }

    public var isCapturingText: Bool { form != nil || confirmingToggle != nil }

    public var isFormOpen: Bool { form != nil }

    public var siteTime: SiteClock { site.flatMap { SiteClock(zoneNamed: $0.timeZone) } ?? SiteClock(timeZone: fallbackZone) }

    public var selectedUser: UserSummary? { users.indices.contains(selection) ? users[selection] : nil }

    public var keyHelp: [(key: String, action: String)] {
        if form != nil { return FormFields.keyHelp }
        if confirmingToggle != nil { return [("y", "yes"), ("n, Esc", "no, nothing is sent")] }
        return [("Up, k / Down, j", "previous or next user"), ("PgUp, PgDn, Home, End", "move by pages, to the ends"),
                ("n", "add a user (the roles you may give)"), ("e", "change the selected user's name, role, scanning right"),
                ("d", "disable or enable the selected user (after y/n)"), ("r", "reload the list")]
    }

    /// The caller as the rules see them: their own row when listed, else what the session says.
    var myProfile: Profile {
        users.first { $0.profile.email.lowercased() == me.email.lowercased() }?.profile
            ?? Profile(id: "", email: me.email, name: me.name, role: me.role, organizationId: "", canScanCheckpoint: me.mayScan)
    }

    var activeOwners: Int { users.filter { $0.profile.role == .owner && !$0.disabled }.count }

    // MARK: - Loading

    public func appear() -> ScreenAction {
        if site == nil { site = try? services.site().value }
        reload()
        return .redraw
    }

    public func reload() {
        let keep = selectedUser?.profile.id
        do {
            users = try services.organizationUsers().sorted { lhs, rhs in
                let left = Role.allCases.firstIndex(of: lhs.profile.role) ?? 0, right = Role.allCases.firstIndex(of: rhs.profile.role) ?? 0
                return (left, lhs.profile.name.lowercased(), lhs.profile.id) < (right, rhs.profile.name.lowercased(), rhs.profile.id)
            }
            loadedAt = clock()
            errorLine = nil
        } catch {
            errorLine = "Could not load the users. " + error.sentence
        }
        list.select(keep.flatMap { id in users.firstIndex { $0.profile.id == id } } ?? selection, count: users.count)
    }

    // MARK: - Keys

    public func handle(_ key: Key) -> ScreenAction {
        if form != nil { return handleForm(key) }
        if confirmingToggle != nil { return handleToggle(key) }
        if let moved = list.move(key, count: users.count) { return moved ? .redraw : .none }
        switch key {
        case .character("n"): return openCreate()
        case .character("e"): return openEdit()
        case .character("d"): return askToggle()
        case .character("r"):
            reload()
            return .redraw
        case .resize:
            return .redraw
        default:
            return .none
        }
    }

    /// The roles the caller may give, in api.md's order.
    var assignableRoles: [Role] { Role.allCases.filter(me.role.assignableRoles.contains) }

    private func openCreate() -> ScreenAction {
        offeredRoles = assignableRoles
        guard !offeredRoles.isEmpty else {
            notice = VisitorsScreen.Notice(.warning, "A \(me.role.rawValue) may not add users.")
            return .redraw
        }
        // The least powerful role first: the safe choice when Enter is pressed through the form.
        offeredRoles.reverse()
        form = FormFields([
            .init("Email", .text(limit: FieldRules.emailLength)),
            .init("Name", .text(limit: FieldRules.nameLength)),
            .init("Role", .choice(offeredRoles.map(\.rawValue))),
            .init("May scan", .choice(["no", "yes"])),
        ])
        formPurpose = .create
        lastSent = nil
        notice = nil
        return .redraw
    }

    private func openEdit() -> ScreenAction {
        guard let target = selectedUser else { return .none }
        do throws(UserRuleViolation) {
            try UserRules.checkUpdate(by: myProfile, of: target.profile, targetDisabled: target.disabled, changes: UserChanges(),
                                      activeOwners: activeOwners)
        } catch {
            notice = VisitorsScreen.Notice(.warning, "Not offered: \(error.description).")
            return .redraw
        }
        // Only the roles the rules would accept for this user: none but their own for oneself
        // and for the last OWNER.
        let isMe = target.profile.id == myProfile.id
        let lastOwner = target.profile.role == .owner && !target.disabled && activeOwners <= 1
        offeredRoles = isMe || lastOwner ? [target.profile.role] : assignableRoles
        let role = offeredRoles.firstIndex(of: target.profile.role) ?? 0
        // The email cannot change: shown as a choice of one.
        let fields: [FormFields.Field] = [
            .init("Email", .choice([target.profile.email])),
            .init("Name", .text(limit: FieldRules.nameLength), text: target.profile.name),
            .init("Role", .choice(offeredRoles.map(\.rawValue)), chosen: role),
            .init("May scan", .choice(["no", "yes"]), chosen: target.profile.canScanCheckpoint ? 1 : 0),
        ]
        form = FormFields(fields)
        form?.focus = Field.name.rawValue
        formPurpose = .edit(target)
        lastSent = nil
        notice = nil
        return .redraw
    }

    /// What is wrong with field `index` as typed (the server's field rules).
    func problem(_ index: Int, in form: FormFields) -> String? {
        do throws(FieldRuleViolation) {
            switch Field(rawValue: index) {
            case .email?:
                guard formPurpose == .create else { return nil }
                _ = try FieldRules.email(form.text(index), "email")
                if form.attempted && form.value(index) == nil { return "email is required" }
            case .name?:
                _ = try FieldRules.text(form.text(index), "name", maxLength: FieldRules.nameLength, required: form.attempted)
            default: break
            }
        } catch {
            return error.message
        }
        return nil
    }

    private func handleForm(_ key: Key) -> ScreenAction {
        guard var current = form, let purpose = formPurpose else { return .none }
        switch current.handle(key) {
        case .unchanged: return .none
        case .changed:
            form = current
            return .redraw
        case .close:
            form = nil
            formPurpose = nil
            notice = VisitorsScreen.Notice(.warning, "Nothing was sent.")
            return .redraw
        case .submit:
            current.attempted = true
            if let index = Field.allCases.map(\.rawValue).first(where: { problem($0, in: current) != nil }) {
                current.focus = index
                current.notice = VisitorsScreen.Notice(.error, "Not sent: \(problem(index, in: current) ?? "check the field").")
                form = current
                return .redraw
            }
            let role = offeredRoles[current.chosen(Field.role.rawValue)]
            let mayScan = current.chosen(Field.mayScan.rawValue) == 1
            do {
                switch purpose {
                case .create:
                    let user = NewUser(email: (current.value(Field.email.rawValue) ?? "").lowercased(),
                                       name: current.value(Field.name.rawValue) ?? "", role: role, canScanCheckpoint: mayScan)
                    let created = try services.createUser(user, idempotencyKey: idempotencyKey(for: "create \(user)"))
                    notice = VisitorsScreen.Notice(.ok, "Added \(created.profile.name) <\(created.profile.email)> as \(role.rawValue): they log in with a code sent to that address.")
                    finish(selecting: created.profile.id)
                case .edit(let target):
                    let name = current.value(Field.name.rawValue) ?? ""
                    let changes = UserChanges(name: name == target.profile.name ? nil : name,
                                              role: role == target.profile.role ? nil : role,
                                              canScanCheckpoint: mayScan == target.profile.canScanCheckpoint ? nil : mayScan)
                    guard changes != UserChanges() else {
                        form = nil
                        formPurpose = nil
                        notice = VisitorsScreen.Notice(.warning, "Nothing changed: nothing was sent.")
                        return .redraw
                    }
                    let updated = try services.updateUser(id: target.profile.id, changes,
                                                          idempotencyKey: idempotencyKey(for: "update \(target.profile.id) \(changes)"))
                    notice = VisitorsScreen.Notice(.ok, "Changed \(updated.profile.name): \(updated.profile.role.rawValue), scanning \(updated.profile.canScanCheckpoint ? "allowed" : "not allowed").")
                    finish(selecting: updated.profile.id)
                }
                return .redraw
            } catch {
                current.notice = VisitorsScreen.Notice(.error, "Not sent: \(error.sentence) The form is kept.")
                form = current
                return .alert
            }
        }
    }

    /// The idempotency key of `request`: the same again (after a timeout) reuses it.
    private func idempotencyKey(for request: String) -> String {
        if let lastSent, lastSent.request == request { return lastSent.key }
        let key = UUID().uuidString
        lastSent = (request, key)
        return key
    }

    private func finish(selecting id: String) {
        form = nil
        formPurpose = nil
        lastSent = nil
        reload()
        if let index = users.firstIndex(where: { $0.profile.id == id }) { list.select(index, count: users.count) }
    }

    // MARK: - Disable and enable

    private func askToggle() -> ScreenAction {
        guard let target = selectedUser else { return .none }
        do throws(UserRuleViolation) {
            try UserRules.checkUpdate(by: myProfile, of: target.profile, targetDisabled: target.disabled,
                                      changes: UserChanges(disabled: !target.disabled), activeOwners: activeOwners)
        } catch {
            notice = VisitorsScreen.Notice(.warning, "Not offered: \(error.description).")
            return .redraw
        }
        confirmingToggle = target
        notice = nil
        return .redraw
    }

    private func handleToggle(_ key: Key) -> ScreenAction {
        guard let target = confirmingToggle else { return .none }
        switch key {
        case .character("y"), .character("Y"):
            confirmingToggle = nil
            do {
                let updated = try services.updateUser(id: target.profile.id, UserChanges(disabled: !target.disabled),
                                                      idempotencyKey: UUID().uuidString)
                notice = VisitorsScreen.Notice(.ok, updated.disabled
                    ? "Disabled \(updated.profile.name): their sessions, scanner tokens and live streams ended."
                    : "Enabled \(updated.profile.name): they may log in again.")
                reload()
                return .redraw
            } catch {
                notice = VisitorsScreen.Notice(.error, "Not changed: \(error.sentence)")
                return .alert
            }
        case .character("n"), .character("N"), .escape:
            confirmingToggle = nil
            notice = VisitorsScreen.Notice(.warning, "Nothing was sent.")
            return .redraw
        case .resize:
            return .redraw
        default:
            return .none
        }
    }

    // MARK: - Drawing

    public func render(into canvas: inout Canvas, area: Area) {
        guard area.width > 0, area.height > 0 else { return }
        if let form {
            let title: String
            switch formPurpose {
            case .edit(let target)?: title = "Change \(target.profile.name) · scanning: OWNER and ADMIN always may"
            default: title = "New user · they log in with a code e-mailed to this address · scanning: OWNER and ADMIN always may"
            }
            form.render(into: &canvas, area: area, title: title, problem: { problem($0, in: form) })
            return
        }
        let now = clock()
        var footer: [(String, Canvas.Style)] = []
        if let notice { footer.append((notice.text, notice.kind.style)) }
        if let target = confirmingToggle {
            footer.append((target.disabled
                ? "Enable \(target.profile.name)? They may log in again. y/n"
                : "Disable \(target.profile.name)? Their sessions, scanner tokens and live streams end at once. y/n",
                Canvas.Style(.normal, bold: true)))
        } else {
            footer.append(("n: add · e: edit · d: disable/enable · r: reload", .dim))
        }
        var cursor = LineCursor(area: area, bottom: canvas.putFooter(footer, in: area))
        let disabled = users.filter(\.disabled).count
        cursor.line("Users · \(users.count)\(disabled > 0 ? " · \(disabled) disabled" : "") · you are \(me.role.rawValue)",
                    .title, on: &canvas)
        guard cursor.readState(loadedAt.map { ($0, false) }, error: errorLine, shown: "the list", now: now,
                               emptyText: users.isEmpty ? "No users." : nil, on: &canvas) else { return }
        let columns = Self.columns(width: area.width)
        cursor.line(columns.row(["Name", "Email", "Role", "Scan", "State", "Last login"]), Canvas.Style(.muted, bold: true),
                    on: &canvas)
        cursor.list(&list, count: users.count, on: &canvas) { index in
            let user = users[index]
            return (columns.row([user.profile.name, user.profile.email, user.profile.role.rawValue,
                                 user.profile.canScanCheckpoint ? "yes" : "no", user.disabled ? "disabled" : "active",
                                 user.lastLoginAt.map { siteTime.short($0, now: now) } ?? "never"]),
                    user.disabled ? .dim : .plain)
        }
    }

    /// Role 10, scan 5, state 9, last login 12 on the right; the rest name 45 %, email 55 %.
    static func columns(width: Int) -> TableColumns {
        let fixed = [10, 5, 9, 12]
        let rest = max(0, width - fixed.reduce(0, +))
        let name = rest * 45 / 100
        return TableColumns(widths: [name, rest - name] + fixed)
    }
}
