import Foundation
import GatePassCore
import GatePassPass

/// The site a pass or a mail speaks for: its name and the zone its times are shown in.
struct SiteProfile: Sendable, Equatable {
    var organizationId: String
    var name: String
    var timeZone: TimeZone
    /// The zone's name as configured (Foundation on Linux calls UTC "GMT").
    var timeZoneName: String

    var organization: Organization { Organization(id: organizationId, name: name, timeZone: timeZoneName) }

    /// The site's times as people read them, under the zone's configured name.
    var clock: SiteClock { SiteClock(zoneNamed: timeZoneName) ?? SiteClock(timeZone: timeZone) }
}

/// Draws a visitor's pass in its three forms (GatePassPass) from the visitor and the site.
/// The fonts are read once, at start: a missing font is a start error, not a failed request.
struct PassRenderer: Sendable {
    let fonts: PassFonts
    /// Signs each pass's GP2 text (api.md "Offline passes").
    let keyring: PassKeyring
    /// When a key an organization lacks is made (its `createdAt`).
    let clock: any WallClock

    /// What the pass's QR code carries: the GP2 text signed with the site's current key of the
    /// pass's purpose (all upper case, so libqrencode draws it in alphanumeric mode).
    func qrText(_ visitor: Visitor, site: SiteProfile) throws -> String {
        try keyring.signedText(for: visitor, organizationId: site.organizationId, now: clock.now()).text
    }

    func layout(_ visitor: Visitor, site: SiteProfile) throws -> PassLayout {
        let content = PassContent(siteName: site.name, visitorName: visitor.name, hostName: visitor.hostName ?? "",
                                  validity: site.clock.window(from: visitor.validity.from, until: visitor.validity.until),
                                  shortId: visitor.shortId.rawValue, qrPayload: try qrText(visitor, site: site))
        return try PassLayout(content: content, fonts: fonts)
    }

    func svg(_ visitor: Visitor, site: SiteProfile) throws -> String {
        PassSVG.document(try layout(visitor, site: site), fonts: fonts)
    }

    func png(_ visitor: Visitor, site: SiteProfile) throws -> [UInt8] {
        try PassPNG.data(try layout(visitor, site: site), fonts: fonts)
    }

    func page(_ visitor: Visitor, site: SiteProfile) throws -> String {
        PassHTML.page(try layout(visitor, site: site), fonts: fonts)
    }
}
