import Foundation

/// The evacuation roll as one device knows it: the server's last roll (`GET
/// /api/visitor-scanner/on-site`) with what this device admitted and checked out since laid
/// over it, so a gate that lost the server still counts the people it let in and out.
///
/// Pure: the client core reads the stored roll and the device's changes and calls `combine`.
public struct OnSiteRoll: Sendable, Equatable {
    /// One person on site.
    public struct Entry: Sendable, Equatable {
        public var shortId: ShortID
        /// Nil for a pass this device admitted by its signature alone: the name is not known here.
        public var visitor: Visitor?
        /// When they came in, as far as this device knows.
        public var inSince: Date?
        /// True when this device admitted them after the server's roll was taken.
        public var admittedHere: Bool

        public init(shortId: ShortID, visitor: Visitor?, inSince: Date?, admittedHere: Bool) {
            self.shortId = shortId; self.visitor = visitor; self.inSince = inSince; self.admittedHere = admittedHere
        }

        /// The name a person reads: the visitor's, else the pass's short id.
        public var name: String { visitor?.name ?? shortId.rawValue }
    }

    /// A change this device made: an admission (online or offline) or a check-out.
    public struct LocalChange: Sendable, Equatable {
        public var shortId: ShortID
        public var visitor: Visitor?
        public var inside: Bool
        public var at: Date

        public init(shortId: ShortID, visitor: Visitor?, inside: Bool, at: Date) {
            self.shortId = shortId; self.visitor = visitor; self.inside = inside; self.at = at
        }
    }

    /// Everyone on site, by name; passes known by their short id only come last.
    public var entries: [Entry]
    /// When the server's part was fetched; nil when this device never had one.
    public var serverRollAt: Date?
    /// People this device admitted that the server's roll does not list.
    public var admittedHere: Int
    /// People the server's roll lists whom this device checked out since.
    public var checkedOutHere: Int

    public init(entries: [Entry], serverRollAt: Date?, admittedHere: Int, checkedOutHere: Int) {
        self.entries = entries; self.serverRollAt = serverRollAt; self.admittedHere = admittedHere
        self.checkedOutHere = checkedOutHere
    }

    /// The server's roll with `changes` laid over it, each short id's latest change winning.
    /// A change the roll already shows (an admission of someone listed, a check-out of someone
    /// not listed) changes nothing, so a change is safe to apply after the roll caught up.
    /// - Parameters:
    ///   - server: the server's roll (visitors not CHECKED_IN are left out).
    ///   - serverRollAt: when it was fetched.
    ///   - changes: this device's changes the server's roll may not show yet.
    public static func combine(server: [Visitor], serverRollAt: Date?, changes: [LocalChange]) -> OnSiteRoll {
        var latest: [ShortID: LocalChange] = [:]
        for change in changes where latest[change.shortId].map({ $0.at <= change.at }) ?? true {
            latest[change.shortId] = change
        }
        var entries: [Entry] = []
        var listed = Set<ShortID>()
        var checkedOut = 0
        for visitor in server where visitor.status == .checkedIn && !listed.contains(visitor.shortId) {
            listed.insert(visitor.shortId)
            if let change = latest[visitor.shortId], !change.inside {
                checkedOut += 1
                continue
            }
            entries.append(Entry(shortId: visitor.shortId, visitor: visitor, inSince: visitor.checkedInAt, admittedHere: false))
        }
        var admitted = 0
        for change in latest.values where change.inside && !listed.contains(change.shortId) {
            admitted += 1
            entries.append(Entry(shortId: change.shortId, visitor: change.visitor, inSince: change.at, admittedHere: true))
        }
        return OnSiteRoll(entries: ordered(entries), serverRollAt: serverRollAt, admittedHere: admitted, checkedOutHere: checkedOut)
    }

    /// By name; passes known by their short id only come last.
    public static func ordered(_ entries: [Entry]) -> [Entry] {
        entries.sorted { left, right in
            switch (left.visitor, right.visitor) {
            case (.some, .none): return true
            case (.none, .some): return false
            default: return (left.name.lowercased(), left.shortId.rawValue) < (right.name.lowercased(), right.shortId.rawValue)
            }
        }
    }
}
