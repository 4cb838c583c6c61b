import Foundation
import GatePassAPI
import GatePassCore
import GatePassCrypto
import GatePassTestSupport
import Testing
@testable import GatePassServer

/// The pass as the server serves it: pass.svg drawn by librsvg and ImageMagick, pass.png, and
/// the pass page drawn by headless Chromium, each read back by zbar; and the pass page's
/// rules (who may open it, for how long, with which headers). Invitations go to `--dev`'s mail
/// folder, whose `.eml` files the tests read like a visitor's mailbox.
@Suite struct PassRouteTests {
    // MARK: - Every form decodes

    @Test(arguments: [SVGRenderer.librsvg, .imageMagick])
    func passSVGDrawnByARendererDecodes(renderer: SVGRenderer) throws {
        try withServer { server in
            let site = try server.makeMailSite()
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Ada Lovelace", "hostName": "Grace Hopper"])
            let shortId = try #require(visitor["shortId"] as? String)
            let answer = try server.get(Endpoint.visitorsPass.path(shortId), token: site.ownerToken)
            #expect(answer.status == 200)
            #expect(answer.headers["content-type"] == "image/svg+xml")
            try withTemporaryDirectory { folder in
                let svg = folder + "/pass.svg", png = folder + "/pass.png"
                try Data(answer.body).write(to: URL(fileURLWithPath: svg))
                try runRenderer(renderer.command(svg: svg, png: png))
                #expect(try isSignedPass(decodedTexts(atPath: png), shortId: shortId), "\(renderer)")
            }
        }
    }

    @Test func passPNGIsA6At300DpiAndDecodes() throws {
        try withServer { server in
            let site = try server.makeMailSite()
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Ada Lovelace"])
            let shortId = try #require(visitor["shortId"] as? String)
            let answer = try server.get(Endpoint.visitorsPassPNG.path(visitor["id"] as? String ?? ""), token: site.ownerToken)
            #expect(answer.status == 200)
            #expect(answer.headers["content-type"] == "image/png")
            #expect(answer.headers["cache-control"] == "private, max-age=300")
            #expect(answer.headers["content-disposition"] == "inline; filename=\"pass-\(shortId).png\"")
            let chunks = pngChunks(answer.body)
            let header = try #require(chunks.first { $0.type == "IHDR" })
            #expect(bigEndian32(header.data, 0) == 1240 && bigEndian32(header.data, 4) == 1748)
            let physical = try #require(chunks.first { $0.type == "pHYs" })
            #expect(bigEndian32(physical.data, 0) == 11811 && bigEndian32(physical.data, 4) == 11811 && physical.data[8] == 1)
            #expect(try isSignedPass(decodedTexts(greyImage(ofPNG: answer.body)), shortId: shortId))
        }
    }

    @Test func thePassPageDrawnByChromiumDecodes() throws {
        try withServer { server in
            let site = try server.makeMailSite()
            let (visitor, link) = try server.invitedVisitor(site, ["name": "Ada Lovelace", "hostName": "Grace Hopper"])
            try withTemporaryDirectory { folder in
                let png = folder + "/page.png"
                // Chromium asks this server for the page, with its headers (CSP included).
                try runRenderer(SVGRenderer.chromiumPage(link, png: png, profile: folder + "/profile"))
                #expect(try isSignedPass(decodedTexts(atPath: png), shortId: visitor["shortId"] as? String ?? ""))
            }
        }
    }

    // MARK: - The page's rules

    @Test func thePageAnswersWithItsHeadersAndAPolicyThatAllowsItsOwnStyle() throws {
        try withServer { server in
            let site = try server.makeMailSite()
            let (_, link) = try server.invitedVisitor(site, ["name": "Ada Lovelace"])
            let page = try server.get(passPath(link))
            #expect(page.status == 200)
            #expect(page.headers["content-type"] == "text/html; charset=utf-8")
            #expect(page.headers["cache-control"] == "no-store")
            #expect(page.headers["referrer-policy"] == "no-referrer")
            #expect(page.headers["x-robots-tag"]?.contains("noindex") == true)
            #expect(page.headers["x-content-type-options"] == "nosniff")
            let policy = try #require(page.headers["content-security-policy"])
            #expect(policy.hasPrefix("default-src 'none';"))
            #expect(policy.contains("frame-ancestors 'none'") && policy.contains("form-action 'none'"))
            #expect(!policy.contains("unsafe-inline") && !policy.contains("script-src"))
            // The one style sheet the page has is the one the policy's hash allows.
            let html = page.text
            let styleStart = try #require(html.range(of: "<style>")), styleEnd = try #require(html.range(of: "</style>"))
            let style = String(html[styleStart.upperBound..<styleEnd.lowerBound])
            let hash = Data(SHA256.hash(Array(style.utf8))).base64EncodedString()
            #expect(policy.contains("style-src 'sha256-\(hash)'"), "\(policy)")
            #expect(html.components(separatedBy: "<style").count == 2)
            #expect(!html.contains("<script") && !html.contains("src=\"http") && !html.contains("href=\"http"))
        }
    }

    @Test func unknownCancelledExpiredCheckedOutAndRejectedPassesGetTheSameNotFoundPage() throws {
        try withServer { server in
            let site = try server.makeMailSite()
            let unknown = try server.get("/p/" + Base64URL.encode(try SecureRandom.bytes(32)))
            #expect(unknown.status == 404)
            #expect(unknown.headers["cache-control"] == "no-store" && unknown.headers["x-robots-tag"]?.contains("noindex") == true)
            #expect(unknown.text.contains("Pass not found"))
            func expectGone(_ link: String, _ why: String) throws {
                let answer = try server.get(passPath(link))
                #expect(answer.status == 404, "\(why)")
                #expect(answer.body == unknown.body, "\(why): the same page as an unknown token")
                #expect(answer.headers["content-security-policy"] == unknown.headers["content-security-policy"])
            }

            let (cancelled, cancelledLink) = try server.invitedVisitor(site, ["name": "Cancelled"])
            #expect(try server.get(passPath(cancelledLink)).status == 200)
            #expect(try server.post(Endpoint.visitorsCancel.path(cancelled["id"] as? String ?? ""), token: site.ownerToken).status == 200)
            try expectGone(cancelledLink, "cancelled")

            let (left, leftLink) = try server.invitedVisitor(site, ["name": "Checked Out"])
            #expect(try server.checkIn(site.scanner, left["shortId"] as? String ?? "").status == 200)
            #expect(try server.get(passPath(leftLink)).status == 200, "on site, the page still works")
            #expect(try server.post(Endpoint.visitorsCheckOut.path(left["id"] as? String ?? ""), token: site.ownerToken).status == 200)
            try expectGone(leftLink, "checked out")

            let (refused, refusedLink) = try server.invitedVisitor(site, ["name": "Refused", "requiresApproval": true])
            _ = try server.checkIn(site.scanner, refused["shortId"] as? String ?? "", ["confirmApprovalRequest": true])
            #expect(try server.post(Endpoint.visitorsReject.path(refused["id"] as? String ?? ""), token: site.ownerToken).status == 200)
            try expectGone(refusedLink, "rejected")

            // Today's pass ends at 23:59:59 (UTC here); the clock is at 12:00.
            let (_, todayLink) = try server.invitedVisitor(site, ["name": "Today"])
            server.clock.advance(by: 11 * 3600 + 59 * 60 + 59)
            #expect(try server.get(passPath(todayLink)).status == 200, "the last second of the window")
            server.clock.advance(by: 1)
            try expectGone(todayLink, "expired")
        }
    }

    @Test func aChangedWindowGivesANewShortIdAndEndsTheOldPage() throws {
        try withServer { server in
            let site = try server.makeMailSite()
            let (visitor, oldLink) = try server.invitedVisitor(site, ["name": "Ada Lovelace"])
            let id = try #require(visitor["id"] as? String), oldShortId = try #require(visitor["shortId"] as? String)

            // A change that keeps the window keeps the pass; the page shows the new text.
            let renamed = try server.client().send("PATCH", Endpoint.visitorsUpdate.path(id), token: site.ownerToken,
                                                   json: ["name": "Ada King"])
            #expect(renamed.status == 200 && renamed.string("shortId") == oldShortId, "\(renamed.text)")
            let stillOpen = try server.get(passPath(oldLink))
            #expect(stillOpen.status == 200 && stillOpen.text.contains("Ada King") && !stillOpen.text.contains("Lovelace"))

            let moved = try server.client().send("PATCH", Endpoint.visitorsUpdate.path(id), token: site.ownerToken,
                                                 json: ["validFrom": "2026-11-30T09:00:00Z", "validUntil": "2026-11-30T17:00:00Z"])
            #expect(moved.status == 200, "\(moved.text)")
            let newShortId = try #require(moved.string("shortId"))
            #expect(newShortId != oldShortId)
            #expect(try server.get(passPath(oldLink)).status == 404, "the old page ended")
            #expect(try server.checkIn(site.scanner, oldShortId).status == 404, "the old pass text ended")

            // The re-issued pass went out in a new invitation, with a new page.
            try server.waitForMailLog("the second invitation written") { log in
                log.filter { $0.kind == .invitation && $0.status == .sent }.count == 2
            }
            let newest = try #require(try server.mailLog().first { $0.kind == .invitation })
            let newLink = try server.devMailLink(newest.id)
            #expect(newLink != oldLink)
            let page = try server.get(passPath(newLink))
            #expect(page.status == 200)
            #expect(page.text.contains(newShortId.prefix(4) + "-" + newShortId.suffix(4)))
            #expect(!page.text.contains(oldShortId.prefix(4) + "-" + oldShortId.suffix(4)))
        }
    }

    @Test func aPageShowsItsOwnVisitorAndNoOneElsesData() throws {
        try withServer { server in
            let site = try server.makeMailSite()
            let (_, linkA) = try server.invitedVisitor(site, [
                "name": "Ada Lovelace", "email": "ada@visitor.test", "phone": "+40 721 000 111", "company": "Analytical Engines",
                "purpose": "Board meeting", "hostName": "Grace Hopper",
            ])
            let (_, linkB) = try server.invitedVisitor(site, [
                "name": "Bob Builder", "email": "bob@visitor.test", "phone": "+40 721 999 888", "company": "Builders Ltd",
                "purpose": "Repairs", "hostName": "Hedy Lamarr",
            ])
            let pageA = try server.get(passPath(linkA)).text, pageB = try server.get(passPath(linkB)).text
            #expect(pageA.contains("Ada Lovelace") && pageA.contains("Grace Hopper"))
            #expect(pageA.contains("29 Nov 2026 00:00\u{2013}23:59 (UTC)"), "the site's zone as configured")
            #expect(pageB.contains("Bob Builder"))
            for other in ["Bob", "bob@visitor.test", "999 888", "Builders", "Repairs", "Hedy"] {
                #expect(!pageA.contains(other), "\(other)")
            }
            // Even its own visitor's contact details stay off a page that travels by link.
            for own in ["ada@visitor.test", "721 000 111", "Board meeting", site.owner.email] {
                #expect(!pageA.contains(own), "\(own)")
            }
            // Nothing near the page opens another: no listing, no other path under /p/.
            for path in ["/p/", "/p", "/p/\(passPath(linkA).dropFirst(3))/x", "/p/\(passPath(linkB).dropFirst(3))%2F..%2F"] {
                let answer = try server.get(path)
                #expect(answer.status == 404, "\(path): \(answer.status)")
                #expect(!answer.text.contains("Ada") && !answer.text.contains("Bob"), "\(path)")
            }
        }
    }

    @Test func tokensAreLongRandomAndUnrelatedToTheVisitor() throws {
        try withServer { server in
            let site = try server.makeMailSite()
            let visitor = try server.createVisitor(site.ownerToken, ["name": "Ada", "email": "ada@visitor.test"])
            let id = try #require(visitor["id"] as? String), shortId = try #require(visitor["shortId"] as? String)
            var tokens: Set<String> = []
            for _ in 0..<16 {
                let answer = try server.post(Endpoint.visitorsInvite.path(id), token: site.ownerToken)
                let link = try #require(answer.string("passURL"))
                let token = String(passPath(link).dropFirst(3))
                #expect(token.utf8.count == 43 && token.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
                #expect(Base64URL.decode(token)?.count == 32, "256 bits")
                #expect(!token.contains(shortId) && !token.contains(id.prefix(8)))
                tokens.insert(token)
            }
            #expect(tokens.count == 16)
            // Only the newest opens a page; the store keeps a keyed hash, not the token.
            let newest = try #require(try server.post(Endpoint.visitorsInvite.path(id), token: site.ownerToken).string("passURL"))
            for token in tokens { #expect(try server.get("/p/" + token).status == 404) }
            #expect(try server.get(passPath(newest)).status == 200)
            let dump = try Data(contentsOf: URL(fileURLWithPath: server.directory + "/gatepass.db"))
            #expect(dump.range(of: Data(passPath(newest).dropFirst(3).utf8)) == nil)
        }
    }

    /// One path segment after `/p/` that is not a token this server made: the same page as an
    /// unknown token, from the length and alphabet check alone (nothing is looked up).
    @Test(arguments: [
        String(repeating: "A", count: 42), String(repeating: "A", count: 44), String(repeating: "A", count: 2000),
        String(repeating: "!", count: 43), String(repeating: "+", count: 43), String(repeating: "A", count: 42) + "=",
        "..", "%2e%2e", "%2e%2e%2fapi%2fvisitors", "%00" + String(repeating: "A", count: 40),
        "%41" + String(repeating: "A", count: 42), "A%0D%0ASet-Cookie:x", String(repeating: "é", count: 43),
        String(repeating: "%C3%A9", count: 43), "%3Cscript%3E" + String(repeating: "A", count: 31),
    ])
    func malformedTokensGetTheNotFoundPage(token: String) throws {
        try withServer { server in
            let unknown = try server.get("/p/" + Base64URL.encode(try SecureRandom.bytes(32)))
            let answer = try server.get("/p/" + token)
            #expect(answer.status == 404, "\(token.prefix(60)): \(answer.status) \(answer.text.prefix(200))")
            #expect(answer.body == unknown.body, "\(token.prefix(60))")
            #expect(answer.headers["cache-control"] == "no-store" && answer.headers["set-cookie"] == nil)
        }
    }

    /// Paths that are no pass page at all (more segments, none, bytes that are not UTF-8) never
    /// reach the page's handler: the API's own 404 or 400, naming nothing.
    @Test(arguments: [
        "/p/" + String(repeating: "/", count: 42) + "A", "/p/?token=" + String(repeating: "A", count: 43), "/p/",
        "/p/%FF%FE" + String(repeating: "A", count: 37), "/p/A/../../api/visitors",
    ])
    func pathsThatAreNoPassPageGetAnErrorNamingNothing(path: String) throws {
        try withServer { server in
            let answer = try server.get(path)
            #expect(answer.isError(404, "NOT_FOUND") || answer.isError(400, "BAD_REQUEST"), "\(path): \(answer.status) \(answer.text)")
            #expect(!answer.text.contains("visitor\""), "\(answer.text)")
        }
    }
}

extension TestServer {
    /// Creates a visitor with an email and invites it; returns the visitor and its page's link.
    func invitedVisitor(_ site: MailSite, _ fields: [String: Any]) throws -> (visitor: [String: Any], link: String) {
        var body = fields
        body["email"] = body["email"] ?? "visitor\(UUID().uuidString.prefix(8))@visitor.test"
        let visitor = try createVisitor(site.ownerToken, body)
        let answer = try post(Endpoint.visitorsInvite.path(visitor["id"] as? String ?? ""), token: site.ownerToken)
        guard answer.status == 202, let link = answer.string("passURL") else {
            throw TestFailure("invite answered \(answer.status): \(answer.text)")
        }
        return (visitor, link)
    }

    /// The pass link in the `.eml` file that `--dev` wrote for mail `id` (as its log line names it).
    func devMailLink(_ id: String) throws -> String {
        let text = try devMailText(id, kind: "invitation")
        guard let link = passLink(in: text, base: server.baseURL) else { throw TestFailure("no pass link in \(text)") }
        return link
    }
}
