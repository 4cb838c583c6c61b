import Foundation
import GatePassCore

/// api.md "Blocklist" at registration: a visitor who matches is refused with
/// `BLOCKLIST_MATCH` until the request confirms it, and is never mailed an invitation.
extension GatePassApplication {
    /// The blocklist entry `visitor` matches at `now`, if any.
    func blocklistMatch(_ visitor: Visitor, organizationId: String, now: Date, _ tx: any Transaction) throws -> BlocklistEntry? {
        Blocklist.firstMatch(try tx.blocklist.candidates(for: visitor, organizationId: organizationId, now: now),
                             for: visitor, at: now)
    }

    /// Throws `BLOCKLIST_MATCH` when registering `visitor` (new, or edited from `old`) is
    /// judged (`Blocklist.judgesRegistration`), it matches, and the request did not confirm it.
    /// The entry's id goes to OWNER/ADMIN only; its reason to nobody.
    func refuseUnconfirmedBlocklistMatch(_ visitor: Visitor, from old: Visitor?, confirmed: Bool, organizationId: String,
                                         _ call: Call, _ tx: any Transaction) throws {
        guard !confirmed, Blocklist.judgesRegistration(from: old, to: visitor),
              let entry = try blocklistMatch(visitor, organizationId: organizationId, now: call.now, tx)
        else { return }
        throw APIError.blocklistMatch(
            "this visitor matches the blocklist; nothing was saved: send \"confirmBlocked\": true to register them anyway",
            entryId: call.caller.user.role.managesOrganization ? entry.id : nil)
    }

    /// Refuses an invitation to a visitor who matches the blocklist, whatever the request says.
    func refuseInvitationIfBlocked(_ visitor: Visitor, organizationId: String, now: Date, role: Role,
                                   _ tx: any Transaction) throws {
        guard let entry = try blocklistMatch(visitor, organizationId: organizationId, now: now, tx) else { return }
        throw APIError.blocklistMatch("this visitor matches the blocklist: no invitation is mailed to a blocked visitor",
                                      entryId: role.managesOrganization ? entry.id : nil)
    }
}
