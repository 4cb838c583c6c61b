import Foundation
import GatePassCore

/// An organization's blocklist. Each entry is stored with its normalised keys
/// (`BlocklistKeys`), so finding the entries a visitor may match is an index probe per key
/// whatever the list's length; the domain judges what is found (`BlocklistEntry.matches`).
protocol BlocklistRepository {
    func insert(_ entry: BlocklistEntry, organizationId: String) throws
    /// The organization's entries, newest first, expired ones included (they are history).
    func list(organizationId: String, after cursor: ListCursor?, limit: Int) throws -> [(entry: BlocklistEntry, cursor: ListCursor)]
    /// Removes one entry of the organization and returns it; nil when it has none with that id.
    func remove(id: String, organizationId: String) throws -> BlocklistEntry?
    /// The entries not expired at `now` that share a key with `keys` (same folded name, same
    /// email, or same phone digits), oldest first. A superset of the matches: a name found
    /// here may still be narrowed out by the entry's company.
    func candidates(for keys: BlocklistKeys, organizationId: String, now: Date) throws -> [BlocklistEntry]
}

extension BlocklistRepository {
    /// The candidate entries for `visitor`'s keys; none are looked for when it has no key.
    func candidates(for visitor: Visitor, organizationId: String, now: Date) throws -> [BlocklistEntry] {
        let keys = BlocklistKeys(visitor)
        guard keys.name != nil || keys.email != nil || keys.phone != nil else { return [] }
        return try candidates(for: keys, organizationId: organizationId, now: now)
    }
}
