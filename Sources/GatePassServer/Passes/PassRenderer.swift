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
}

/// Draws a visitor's pass in its three forms (GatePassPass) from the visitor and the site.
/// The fonts are read once, at start: a missing font is a start error, not a failed request.
struct PassRenderer: Sendable {
    let fonts: PassFonts

    /// What the pass's QR code carries (api.md: `GP1:<shortId>`; GP2 comes with offline passes).
    static func qrText(_ visitor: Visitor) -> String { "GP1:\(visitor.shortId.rawValue)" }

    func layout(_ visitor: Visitor, site: SiteProfile) throws(PassError) -> PassLayout {
        let content = PassContent(siteName: site.name, visitorName: visitor.name, hostName: visitor.hostName ?? "",
                                  validity: visitor.validity.text(in: site.timeZone, zoneName: site.timeZoneName),
                                  shortId: visitor.shortId.rawValue, qrPayload: Self.qrText(visitor))
        return try PassLayout(content: content, fonts: fonts)
    }

    func svg(_ visitor: Visitor, site: SiteProfile) throws(PassError) -> String {
        PassSVG.document(try layout(visitor, site: site), fonts: fonts)
    }

    func png(_ visitor: Visitor, site: SiteProfile) throws(PassError) -> [UInt8] {
        try PassPNG.data(try layout(visitor, site: site), fonts: fonts)
    }

    func page(_ visitor: Visitor, site: SiteProfile) throws(PassError) -> String {
        PassHTML.page(try layout(visitor, site: site), fonts: fonts)
    }
}
