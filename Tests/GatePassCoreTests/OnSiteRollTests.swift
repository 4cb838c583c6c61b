import Foundation
import Testing
@testable import GatePassCore

/// The evacuation roll a device can give: the server's last roll with the device's own changes.
@Suite struct OnSiteRollTests {
    static let taken = Date(timeIntervalSince1970: 1_796_000_000)

    static func inside(_ shortId: String, _ name: String, status: VisitorStatus = .checkedIn) -> Visitor {
        var visitor = Fixture.visitor(status: status, requiresApproval: false)
        visitor.shortId = ShortID(shortId)!
        visitor.id = "id-" + shortId
        visitor.name = name
        return visitor
    }

    static func change(_ shortId: String, inside: Bool, _ seconds: TimeInterval, visitor: Visitor? = nil) -> OnSiteRoll.LocalChange {
        OnSiteRoll.LocalChange(shortId: ShortID(shortId)!, visitor: visitor, inside: inside, at: taken.addingTimeInterval(seconds))
    }

    @Test func theDevicesAdmissionsAndCheckOutsAreLaidOverTheServersRoll() {
        let server = [Self.inside("AAAAAAAA", "zoe"), Self.inside("BBBBBBBB", "Ana"), Self.inside("CCCCCCCC", "Out", status: .checkedOut)]
        let roll = OnSiteRoll.combine(server: server, serverRollAt: Self.taken, changes: [
            Self.change("AAAAAAAA", inside: false, 10),                                              // checked out here
            Self.change("DDDDDDDD", inside: true, 20, visitor: Self.inside("DDDDDDDD", "Bob")),      // admitted here
            Self.change("EEEEEEEE", inside: true, 30),                                               // by signature
            Self.change("BBBBBBBB", inside: true, 40, visitor: Self.inside("BBBBBBBB", "Ana")),      // already listed
            Self.change("FFFFFFFF", inside: false, 50),                                              // not listed: nothing
        ])
        #expect(roll.entries.map(\.shortId.rawValue) == ["BBBBBBBB", "DDDDDDDD", "EEEEEEEE"], "by name, unnamed last")
        #expect(roll.entries.map(\.name) == ["Ana", "Bob", "EEEEEEEE"])
        #expect(roll.entries.map(\.admittedHere) == [false, true, true])
        #expect(roll.entries[1].inSince == Self.taken.addingTimeInterval(20))
        #expect(roll.admittedHere == 2 && roll.checkedOutHere == 1 && roll.serverRollAt == Self.taken)
    }

    @Test func thePassesLatestChangeWinsWhateverTheOrderTheyAreRead() {
        let changes = [Self.change("AAAAAAAA", inside: true, 30), Self.change("AAAAAAAA", inside: false, 10)]
        for order in [changes, changes.reversed()] {
            let roll = OnSiteRoll.combine(server: [], serverRollAt: nil, changes: order)
            #expect(roll.entries.map(\.shortId.rawValue) == ["AAAAAAAA"] && roll.admittedHere == 1)
        }
        let out = OnSiteRoll.combine(server: [Self.inside("AAAAAAAA", "A")], serverRollAt: nil,
                                     changes: [Self.change("AAAAAAAA", inside: true, 10), Self.change("AAAAAAAA", inside: false, 20)])
        #expect(out.entries.isEmpty && out.checkedOutHere == 1)
    }

    @Test func aServerRollListingAPassTwiceCountsItOnce() {
        let roll = OnSiteRoll.combine(server: [Self.inside("AAAAAAAA", "A"), Self.inside("AAAAAAAA", "A")], serverRollAt: nil, changes: [])
        #expect(roll.entries.count == 1)
    }
}
