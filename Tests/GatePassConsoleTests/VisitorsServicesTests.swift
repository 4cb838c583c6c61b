import Foundation
import GatePassCore
import GatePassScanner
import QRCode
import Testing
@testable import GatePassClient
@testable import GatePassConsole
@testable import GatePassConsoleServices

/// The Visitors and On site services through the real client core over a scripted transport:
/// the requests they make, the cache offline, the files they write, the QR they draw.
@Suite struct VisitorsServicesTests {
    typealias Answer = @Sendable (HTTPRequest) throws(HTTPTransportError) -> HTTPResponse

    final class Requests: @unchecked Sendable {
        let log = Locked<[HTTPRequest]>([])
        var urls: [String] { log.withLock { $0.map(\.url) } }
        var last: HTTPRequest? { log.withLock { $0.last } }
    }

    /// Services over a fresh state folder (an owner logged in), writing files into a fresh folder.
    func withServices(_ answer: @escaping Answer,
                      _ body: (ClientCoreServices, Requests, String) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("console-visitors-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder + "/work", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let requests = Requests()
        let transport = HistoryScreenTests.RoutedTransport { request throws(HTTPTransportError) in
            requests.log.withLock { $0.append(request) }
            return try answer(request)
        }
        let core = try ClientCore(directory: StateDirectory(path: folder + "/state"), transport: transport)
        try core.store.saveSession(Session(server: "http://gate.test", token: "login-token",
                                           expiresAt: Timestamp(Date().addingTimeInterval(3600)), user: HistoryScreenTests.owner,
                                           scanner: nil))
        let services = ClientCoreServices(core: core, transport: transport, defaultServer: nil,
                                          clock: FixedClock(date: Fixtures.now), workingDirectory: folder + "/work/")
        try body(services, requests, folder + "/work")
    }

    struct FixedClock: WallClock {
        let date: Date
        func now() -> Date { date }
    }

    static func json(_ value: some Encodable, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["content-type": "application/json"], body: Array(try! JSONEncoder().encode(value)))
    }

    static let offline: Answer = { request throws(HTTPTransportError) in
        throw .cannotConnect(url: request.url, detail: "connection refused")
    }

    func mode(_ path: String) throws -> Int {
        try (FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test func theVisitorListAsksFromTheDayWithStatusAndSearchAndOfflineAnswersFromTheCache() throws {
        let online = Locked(true)
        try withServices({ request throws(HTTPTransportError) in
            guard online.withLock({ $0 }) else { throw .cannotConnect(url: request.url, detail: "connection refused") }
            return Self.json(Page(items: [Fixtures.listed(1)], nextCursor: "next"))
        }) { services, requests, _ in
            let query = VisitorListQuery(fromDay: "2025-06-16", status: .awaitingApproval, search: "ana & co")
            let read = try services.visitors(query)
            #expect(read.value.map(\.id) == ["v1"] && read.hasMore && !read.fromCache)
            #expect(requests.urls == ["http://gate.test/api/visitors?status=AWAITING_APPROVAL&q=ana%20%26%20co&from=2025-06-16&limit=500"])
            #expect(requests.last?.headers.contains { $0.name == "Authorization" && $0.value == "Bearer login-token" } == true)
            online.withLock { $0 = false }
            let cached = try services.visitors(query)
            #expect(cached.fromCache && cached.value.map(\.id) == ["v1"] && cached.hasMore && cached.updatedAt == Fixtures.now)
            #expect(throws: ConsoleError.offline("connection refused")) {
                try services.visitors(VisitorListQuery(fromDay: "2025-06-16"))
            }
        }
    }

    @Test func approversAreTheEnabledApproversByNameAndUserNamesNameWhoDecided() throws {
        func user(_ id: String, _ name: String, _ role: Role, disabled: Bool = false) -> UserSummary {
            UserSummary(profile: Profile(id: id, email: "\(id)@example.com", name: name, role: role, organizationId: "org-1",
                                         canScanCheckpoint: false), disabled: disabled, lastLoginAt: nil)
        }
        let users = [user("u1", "Ana Pop", .owner), user("u7", "Zoe Ene", .approver), user("u8", "Ion Vlad", .approver),
                     user("u9", "Gone", .approver, disabled: true), user("u3", "Admin", .admin)]
        try withServices({ _ in Self.json(Page(items: users, nextCursor: nil)) }) { services, requests, _ in
            let approvers = try services.approvers()
            #expect(approvers == [ApproverChoice(id: "u8", name: "Ion Vlad", email: "u8@example.com"),
                                  ApproverChoice(id: "u7", name: "Zoe Ene", email: "u7@example.com")])
            #expect(requests.urls == ["http://gate.test/api/users?limit=500"])
            #expect(services.userNames()["u9"] == "Gone" && services.userNames()["u1"] == "Ana Pop")
        }
        try withServices(Self.offline) { services, _, _ in
            #expect(services.userNames().isEmpty, "best effort: nothing known, nothing named")
            #expect(throws: ConsoleError.offline("connection refused")) { try services.approvers() }
        }
    }

    @Test func registeringSendsTheCreateBodyWithTheIdempotencyKeyAndARefusalIsTheServersMessage() throws {
        let refuse = Locked(false)
        try withServices({ request in
            if refuse.withLock({ $0 }) {
                return HTTPResponse(status: 400, headers: [:],
                                    body: Array(#"{"error":{"code":"BAD_REQUEST","message":"email must be an email address like ana@example.com"}}"#.utf8))
            }
            return Self.json(Fixtures.listed(5, name: "Ana Pop"), status: 201)
        }) { services, requests, _ in
            let registration = VisitorRegistration(
                name: "Ana Pop", email: "ana@example.com", hostEmail: "ion@example.com", approverId: "u7", requiresApproval: true,
                validFrom: Fixtures.instant("2025-06-16T06:00:00Z"), validUntil: Fixtures.instant("2025-06-16T14:30:00Z"), invite: true)
            #expect(try services.register(registration, idempotencyKey: "key-1").id == "v5")
            let request = try #require(requests.last)
            #expect(request.method == "POST" && request.url == "http://gate.test/api/visitors")
            #expect(request.headers.contains { $0.name == "Idempotency-Key" && $0.value == "key-1" })
            let body = try JSONSerialization.jsonObject(with: Data(request.body ?? [])) as? [String: Any]
            #expect(body?["name"] as? String == "Ana Pop")
            #expect(body?["hostEmail"] as? String == "ion@example.com")
            #expect(body?["approverId"] as? String == "u7")
            #expect(body?["requiresApproval"] as? Bool == true)
            #expect(body?["invite"] as? Bool == true)
            #expect(body?["validFrom"] as? String == "2025-06-16T06:00:00Z")
            #expect(body?["phone"] == nil, "absent values are not sent")
            refuse.withLock { $0 = true }
            #expect(throws: ConsoleError.refused("email must be an email address like ana@example.com")) {
                try services.register(registration, idempotencyKey: "key-2")
            }
            #expect(body?["confirmBlocked"] == nil, "sent only when confirmed")
        }
    }

    @Test func aBlocklistMatchIsItsOwnErrorAndAConfirmedRegistrationSaysSo() throws {
        try withServices({ request in
            let body = (try? JSONSerialization.jsonObject(with: Data(request.body ?? []))) as? [String: Any]
            if body?["confirmBlocked"] as? Bool == true { return Self.json(Fixtures.listed(5, name: "Ion Ionescu"), status: 201) }
            return HTTPResponse(status: 409, headers: [:], body: Array(
                #"{"error":{"code":"BLOCKLIST_MATCH","message":"this visitor matches the blocklist","blocked":true,"entryId":"e1"}}"#.utf8))
        }) { services, requests, _ in
            #expect(throws: ConsoleError.blocklistMatch("this visitor matches the blocklist")) {
                try services.register(VisitorRegistration(name: "Ion Ionescu"), idempotencyKey: "key-1")
            }
            let visitor = try services.register(VisitorRegistration(name: "Ion Ionescu", confirmBlocked: true), idempotencyKey: "key-2")
            #expect(visitor.id == "v5")
            let body = try JSONSerialization.jsonObject(with: Data(try #require(requests.last).body ?? [])) as? [String: Any]
            #expect(body?["confirmBlocked"] as? Bool == true)
        }
    }

    @Test func cancelCheckOutAndInviteCallTheirRoutes() throws {
        try withServices({ request in
            if request.url.hasSuffix("/invite") { return Self.json(InvitationAnswer(queued: true, passURL: "http://gate.test/p/abc"), status: 202) }
            return Self.json(Fixtures.listed(1, status: request.url.hasSuffix("/cancel") ? .cancelled : .checkedOut))
        }) { services, requests, _ in
            let cancelled = try services.cancelVisitor(id: "v1")
            let checkedOut = try services.checkOutVisitor(id: "v1")
            let page = try services.inviteVisitor(id: "v1")
            #expect(cancelled.status == .cancelled && checkedOut.status == .checkedOut)
            #expect(page == "http://gate.test/p/abc")
            #expect(requests.urls == ["http://gate.test/api/visitors/v1/cancel", "http://gate.test/api/visitors/v1/checkout",
                                      "http://gate.test/api/visitors/v1/invite"])
            #expect(requests.log.withLock { $0.allSatisfy { $0.method == "POST" } })
        }
    }

    @Test func thePassPNGIsSavedInTheWorkingFolderWithMode0600AndNeverOverAFile() throws {
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3]
        try withServices({ _ in HTTPResponse(status: 200, headers: ["content-type": "image/png"], body: png) }) { services, requests, work in
            let visitor = Fixtures.listed(1)
            let first = try services.savePassPNG(for: visitor)
            #expect(first == work + "/gatepass-pass-K7Q2M9XD.png")
            #expect(requests.urls == ["http://gate.test/api/visitors/v1/pass.png"])
            #expect(try mode(first) == 0o600)
            #expect(FileManager.default.contents(atPath: first).map { [UInt8]($0) } == png)
            let second = try services.savePassPNG(for: visitor)
            let secondMode = try mode(second)
            #expect(second == work + "/gatepass-pass-K7Q2M9XD-2.png" && secondMode == 0o600)
            #expect(FileManager.default.contents(atPath: first).map { [UInt8]($0) } == png, "the first is untouched")
        }
        try withServices({ _ in HTTPResponse(status: 200, headers: [:], body: Array("<svg/>".utf8)) }) { services, _, work in
            #expect(throws: ConsoleError.self) { try services.savePassPNG(for: Fixtures.listed(1)) }
            let files = try FileManager.default.contentsOfDirectory(atPath: work)
            #expect(files.isEmpty, "nothing written")
        }
    }

    @Test func theRollIsWrittenWithMode0600UnderANameWithTheTime() throws {
        try withServices(Self.offline) { services, _, work in
            let path = try services.saveOnSiteRoll("On site\nAna\n")
            #expect(path == work + "/gatepass-on-site-20250615-150640Z.txt")
            #expect(try mode(path) == 0o600)
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "On site\nAna\n")
            #expect(try services.saveOnSiteRoll("again") == work + "/gatepass-on-site-20250615-150640Z-2.txt")
        }
    }

    /// The one page walk behind the roll, the users and the governance lists: it stops after
    /// `onSitePageLimit` pages of a server that never ends (and says there is more), and at an
    /// empty page whatever its cursor says.
    @Test func thePageWalkEndsOnAServerThatNeverDoes() throws {
        let asked = Locked(0)
        let endless = try ClientCoreServices.followPages { cursor throws(ClientError) in
            let number = asked.withLock { $0 += 1; return $0 }
            return Page(items: [number], nextCursor: "after-\(number)")
        }
        #expect(endless.items == Array(1...ClientCoreServices.onSitePageLimit) && endless.hasMore)
        #expect(asked.withLock { $0 } == ClientCoreServices.onSitePageLimit)

        let emptied = try ClientCoreServices.followPages { cursor throws(ClientError) in
            cursor == nil ? Page(items: [1], nextCursor: "p2") : Page(items: [Int](), nextCursor: "p3")
        }
        #expect(emptied.items == [1] && !emptied.hasMore)
    }

    @Test func theRollFollowsEveryPageAndOfflineKeepsTheStreamsChanges() throws {
        let online = Locked(true)
        try withServices({ request throws(HTTPTransportError) in
            guard online.withLock({ $0 }) else { throw .cannotConnect(url: request.url, detail: "connection refused") }
            if request.url.contains("cursor=p2") { return Self.json(Page(items: [Fixtures.inside(2, name: "Bo")], nextCursor: nil)) }
            return Self.json(Page(items: [Fixtures.inside(1, name: "Al")], nextCursor: "p2"))
        }) { services, requests, _ in
            let read = try services.onSite()
            #expect(read.value.entries.compactMap(\.visitor?.id) == ["v1", "v2"] && !read.fromCache && !read.hasMore)
            #expect(requests.urls == ["http://gate.test/api/visitors?status=CHECKED_IN&limit=500",
                                      "http://gate.test/api/visitors?status=CHECKED_IN&limit=500&cursor=p2"])
            services.noteLiveOnSite(.arrived(Fixtures.inside(3, name: "Cy")))
            services.noteLiveOnSite(.left(visitorId: "v1"))
            online.withLock { $0 = false }
            let offline = try services.onSite()
            #expect(offline.fromCache && offline.value.entries.compactMap(\.visitor?.id) == ["v2", "v3"])
        }
    }

    /// The tab opened for the first time with the server away: the roll the pass cache's sync
    /// kept, with what this device admitted and checked out since, its age the server's part's.
    @Test func theRollOpenedFirstOfflineIsThePassCachesWithThisDevicesChanges() throws {
        try withServices({ request throws(HTTPTransportError) in
            throw .cannotConnect(url: request.url, detail: "connection refused")
        }) { services, _, _ in
            #expect(throws: ConsoleError.self, "nothing kept yet: the error, not an empty roll") { try services.onSite() }
            let taken = Fixtures.now.addingTimeInterval(-300)
            try services.core.saveOnSiteRoll([Fixtures.inside(1, name: "Al"), Fixtures.inside(2, name: "Bo"),
                                              Fixtures.inside(3, name: "Cy")], fetchedAt: taken)
            try services.core.noteOnSite(Fixtures.inside(2, name: "Bo"), inside: false, at: Fixtures.now.addingTimeInterval(-60))
            try services.core.noteOnSite(Fixtures.inside(4, name: "Di"), inside: true, at: Fixtures.now.addingTimeInterval(-30))
            let read = try services.onSite()
            #expect(read.fromCache && read.updatedAt == taken)
            #expect(read.value.entries.compactMap(\.visitor?.id) == ["v1", "v3", "v4"])
            #expect(read.value.admittedHere == 1 && read.value.checkedOutHere == 1)
        }
    }

    // MARK: - The pass code, scannable from the screen

    /// A GP2 text of `Fixtures.listed(1)`'s pass (the signature's bytes do not matter here:
    /// the console draws what the server drew, it does not judge it).
    static let signedText = SignedPassText(shortId: ShortID("K7Q2M9XD")!, validFrom: 1_796_083_200, validUntil: 1_796_169_599,
                                           keyId: "1", signature: Array(repeating: 0x5A, count: 64)).text

    /// A server that draws `text` in its pass PNG (scale 8, quiet zone 4).
    static func passPNG(_ text: String) -> Answer {
        let code = try! QRCode(text, errorCorrection: .quartile)
        let scale = 8, side = (code.width + 8) * scale
        var pixels = [UInt8](repeating: 255, count: side * side)
        for y in 0..<code.width {
            for x in 0..<code.width where code.modules[y * code.width + x] {
                for dy in 0..<scale { for dx in 0..<scale { pixels[((y + 4) * scale + dy) * side + (x + 4) * scale + dx] = 0 } }
            }
        }
        let png = try! GreyImage(width: side, height: side, pixels: pixels).pngData()
        return { request throws(HTTPTransportError) in
            guard request.url.hasSuffix("/pass.png") else { throw .cannotConnect(url: request.url, detail: "connection refused") }
            return HTTPResponse(status: 200, headers: ["content-type": "image/png"], body: png)
        }
    }

    @Test func thePassCodeIsTheServersSignedTextAtErrorCorrectionQ() throws {
        try withServices(Self.passPNG(Self.signedText)) { services, requests, _ in
            let code = try services.passCode(for: Fixtures.listed(1))
            #expect(code.text == Self.signedText)
            #expect(requests.log.withLock { $0.map(\.url) }.allSatisfy { $0.hasSuffix("/pass.png") })
            let quartile = try QRCode(Self.signedText, errorCorrection: .quartile)
            let medium = try QRCode(Self.signedText, errorCorrection: .medium)
            #expect(code.modules == quartile.modules && code.modules != medium.modules, "drawn at level Q, not M")
        }
    }

    @Test func aPassThatIsNotTheVisitorsSignedCodeIsAnErrorNotACode() throws {
        let otherVisitor = SignedPassText(shortId: ShortID("AB12CD34")!, validFrom: 1, validUntil: 2, keyId: "1",
                                          signature: Array(repeating: 0, count: 64)).text
        for text in ["GP1:K7Q2M9XD", otherVisitor, "hello"] {
            try withServices(Self.passPNG(text)) { services, _, _ in
                #expect(throws: ConsoleError.self) { try services.passCode(for: Fixtures.listed(1)) }
            }
        }
        try withServices(Self.offline) { services, _, _ in
            #expect(throws: ConsoleError.self) { try services.passCode(for: Fixtures.listed(1)) }
        }
    }

    /// The canvas as a terminal would show it with the code role black on white: each cell 8
    /// pixels wide and 16 high, a half block dark in its half.
    static func screenshot(_ canvas: Canvas) -> (width: Int, height: Int, pixels: [UInt8]) {
        let cellWidth = 8, cellHeight = 16
        let width = canvas.width * cellWidth, height = canvas.height * cellHeight
        var pixels = [UInt8](repeating: 255, count: width * height)
        for y in 0..<canvas.height {
            for x in 0..<canvas.width where canvas[x, y].style.role == .code {
                let (top, bottom): (Bool, Bool) = switch canvas[x, y].character {
                case "█": (true, true)
                case "▀": (true, false)
                case "▄": (false, true)
                default: (false, false)
                }
                for row in 0..<cellHeight where row < cellHeight / 2 ? top : bottom {
                    for column in 0..<cellWidth { pixels[(y * cellHeight + row) * width + x * cellWidth + column] = 0 }
                }
            }
        }
        return (width, height, pixels)
    }

    @Test func thePassDrawnInTheTerminalScansToThePassText() throws {
        try withServices(Self.passPNG(Self.signedText)) { services, _, _ in
            let visitor = Fixtures.listed(1)
            let management = services
            let detail = VisitorDetailScreen(visitor: visitor, services: FakeConsoleServices(), clock: { Fixtures.now },
                                             siteClock: SiteClock(zoneNamed: "UTC")!, management: management)
            _ = detail.handle(.character("p"))
            // A terminal that holds the signed code shows it; a classic 80×24 one shows the
            // unsigned form of the same pass, and says so.
            for (height, expected, warned) in [(34, Self.signedText, false), (22, "GP1:K7Q2M9XD", true)] {
                let canvas = Fixtures.render(detail, width: 80, height: height)
                #expect(!canvas.text.contains("too small"), "80×\(height)")
                #expect(canvas.text.contains("Unsigned form") == warned, "80×\(height)")
                let shot = Self.screenshot(canvas)
                let decoder = try QRDecoder()
                let decoded = try shot.pixels.withUnsafeBytes { bytes in
                    try decoder.decode(FrameView(width: shot.width, height: shot.height, luma: bytes, index: 0))
                }
                #expect(decoded.texts == [expected], "80×\(height)")
            }
        }
    }
}
