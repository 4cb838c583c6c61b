import Testing
@testable import GatePassCore

/// api.md "Users, checkpoints, scanner tokens": who may create and change whom, written out
/// by hand (not derived from `assignableRoles`).
@Suite("User rules")
struct UserRulesTests {
    /// creator → the roles it may create; every other role is refused.
    static let mayCreate: [Role: Set<Role>] = [
        .owner: [.owner, .admin, .approver, .host],
        .admin: [.admin, .approver, .host],
        .approver: [],
        .platformAdmin: [],
        .host: [],
    ]

    static func user(_ role: Role, id: String = "target") -> Profile {
        Profile(id: id, email: "\(id)@acme.test", name: id, role: role, organizationId: "acme", canScanCheckpoint: false)
    }

    @Test func theTableCoversEveryRole() {
        #expect(Set(Self.mayCreate.keys) == Set(Role.allCases))
    }

    @Test("Every creator × role", arguments: Role.allCases, Role.allCases)
    func creation(creator: Role, role: Role) {
        let allowed = Self.mayCreate[creator]!.contains(role)
        let violation: UserRuleViolation?
        do { try UserRules.checkCreation(by: creator, of: role); violation = nil } catch { violation = error }
        if allowed {
            #expect(violation == nil, "\(creator) creating \(role)")
        } else {
            guard case .forbidden(let message) = violation else {
                Issue.record("\(creator) creating \(role): \(String(describing: violation))"); return
            }
            #expect(message.contains(role.rawValue))
        }
    }

    func judge(_ caller: Profile, _ target: Profile, disabled: Bool = false, _ changes: UserChanges,
               owners: Int = 2) -> UserRuleViolation? {
        do {
            try UserRules.checkUpdate(by: caller, of: target, targetDisabled: disabled, changes: changes, activeOwners: owners)
            return nil
        } catch { return error }
    }

    /// Every caller × the target's role × the role given: allowed exactly when the caller may
    /// create both the target's role and the new one (an OWNER any role of its organization).
    @Test("Every caller × target role × new role", arguments: Role.allCases, Role.allCases)
    func roleChanges(caller: Role, targetRole: Role) {
        for newRole in Role.allCases {
            let verdict = judge(Self.user(caller, id: "caller"), Self.user(targetRole), UserChanges(role: newRole))
            let allowed = Self.mayCreate[caller]!.contains(targetRole)
                && (newRole == targetRole || Self.mayCreate[caller]!.contains(newRole))
            if allowed {
                #expect(verdict == nil, "\(caller): \(targetRole) → \(newRole)")
            } else if case .forbidden = verdict {
            } else {
                Issue.record("\(caller): \(targetRole) → \(newRole) gave \(String(describing: verdict))")
            }
        }
    }

    @Test func anAdminChangesNoOwnerAtAll() {
        let admin = Self.user(.admin, id: "admin")
        #expect(judge(admin, Self.user(.owner), UserChanges(name: "Renamed")) != nil)
        #expect(judge(admin, Self.user(.owner), UserChanges(disabled: true)) != nil)
        #expect(judge(admin, Self.user(.approver), UserChanges(name: "Renamed", canScanCheckpoint: true, disabled: true)) == nil)
    }

    @Test(arguments: [Role.owner, .admin])
    func nobodyChangesTheirOwnRoleOrDisabled(role: Role) {
        let me = Self.user(role, id: "me")
        let other: Role = role == .owner ? .admin : .approver
        #expect(judge(me, me, UserChanges(role: other)) == .forbidden("nobody changes their own role or disabled; ask another OWNER or ADMIN"))
        #expect(judge(me, me, UserChanges(disabled: true)) != nil)
        // What does not change is no change: their name, and the role or state they have.
        #expect(judge(me, me, UserChanges(name: "New Name", role: role, disabled: false)) == nil)
    }

    @Test func theLastOwnerIsNeitherDisabledNorDemoted() {
        let owner = Self.user(.owner, id: "owner")
        let last = Self.user(.owner)
        #expect(judge(owner, last, UserChanges(disabled: true), owners: 1) == .conflict("this is the organization's last OWNER: make another user OWNER first"))
        #expect(judge(owner, last, UserChanges(role: .admin), owners: 1) != nil)
        // The only owner stepping down learns why it cannot (409, before "not your own").
        if case .conflict = judge(owner, owner, UserChanges(role: .host), owners: 1) {} else { Issue.record("expected 409") }
        // With a second owner, or when nothing about ownership changes, it is allowed.
        #expect(judge(owner, last, UserChanges(disabled: true), owners: 2) == nil)
        #expect(judge(owner, last, UserChanges(name: "Still Owner", role: .owner, disabled: false), owners: 1) == nil)
        // A disabled owner is not counted and may be re-enabled or demoted.
        #expect(judge(owner, last, disabled: true, UserChanges(role: .admin), owners: 1) == nil)
        #expect(judge(owner, last, disabled: true, UserChanges(disabled: false), owners: 1) == nil)
    }

    @Test func canScanCheckpointIsTrueForOwnersAndAdminsWhateverIsStored() {
        for stored in [false, true] {
            #expect(Role.owner.canScanCheckpoint(stored: stored) && Role.admin.canScanCheckpoint(stored: stored))
            #expect(!Role.host.canScanCheckpoint(stored: stored) && !Role.platformAdmin.canScanCheckpoint(stored: stored))
            #expect(Role.approver.canScanCheckpoint(stored: stored) == stored)
        }
    }

    @Test func clockTimes() {
        for good in ["00:00", "23:59", "07:30", "12:00"] { #expect(OrganizationRules.isClockTime(good), "\(good)") }
        for bad in ["24:00", "7:30", "07:60", "07-30", "0730", " 07:30", "07:30 ", "٠٧:٣٠", "07:3O", "", "99:99", "+7:30"] {
            #expect(!OrganizationRules.isClockTime(bad), "\(bad)")
        }
    }
}
