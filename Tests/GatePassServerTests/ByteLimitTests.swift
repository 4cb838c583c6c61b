import Foundation
import GatePassCore
import LoopbackHTTP
import Testing
@testable import GatePassServer

/// Every length limit counts characters and UTF-8 bytes, at most 4 per character (issue 9,
/// item 5): combining marks cannot stretch a field, other scripts keep their full length.
@Suite struct ByteLimitTests {
    /// One Character of 5 bytes: "e" and two combining acute accents.
    static let stacked = "e\u{301}\u{301}"
    /// One Character of 3 bytes.
    static let han = "李"

    struct Limit: Sendable, CustomStringConvertible {
        var field: String
        var characters: Int
        var description: String { "\(field) ≤ \(characters)" }
    }

    static let visitorFields = [Limit(field: "name", characters: 200), Limit(field: "company", characters: 200),
                                Limit(field: "purpose", characters: 500), Limit(field: "hostName", characters: 200)]

    /// The body of a route with `field` set to `value` (other required fields filled in).
    static func body(_ field: String, _ value: String) -> [String: Any] {
        var body: [String: Any] = ["name": "Ana Pop"]
        body[field] = value
        return body
    }

    @Test(arguments: visitorFields)
    func visitorAndWalkInFields(_ limit: Limit) throws {
        try withSite { server, site in
            let over = String(repeating: Self.stacked, count: limit.characters)
            #expect(over.count == limit.characters && over.utf8.count > 4 * limit.characters)
            for (path, token) in [("/api/visitors", site.ownerToken), ("/api/visitor-scanner/walk-in-arrived", site.scanner)] {
                let refused = try server.post(path, token: token, Self.body(limit.field, over))
                #expect(refused.isError(400, "BAD_REQUEST"), "\(path) \(limit)")
                #expect(refused.errorMessage.hasPrefix("\(limit.field) must be at most \(4 * limit.characters) bytes"),
                        "\(refused.errorMessage)")
                // Exactly at the byte limit still fits: 4 bytes × the limit.
                let atLimit = String(repeating: "e\u{301}\u{301}", count: limit.characters / 5 * 4)
                    + String(repeating: "e", count: 4 * limit.characters - limit.characters / 5 * 4 * 5)
                #expect(atLimit.utf8.count == 4 * limit.characters && atLimit.count <= limit.characters)
                #expect(try server.post(path, token: token, Self.body(limit.field, atLimit)).status == 201, "\(path) \(limit)")
                let han = String(repeating: Self.han, count: limit.characters)
                let accepted = try server.post(path, token: token, Self.body(limit.field, han))
                #expect(accepted.status == 201, "\(path) \(limit): \(accepted.text)")
                #expect(accepted.string(limit.field) ?? (accepted.json?["visitor"] as? [String: Any])?[limit.field] as? String == han)
                let tooMany = String(repeating: Self.han, count: limit.characters + 1)
                #expect(try server.post(path, token: token, Self.body(limit.field, tooMany)).isError(400, "BAD_REQUEST"))
            }
        }
    }

    @Test func emailPhoneNoteCheckpointAndSearch() throws {
        try withSite { server, site in
            // email: 254 characters; the local part 64.
            let stackedLocal = String(repeating: Self.stacked, count: 60) + "@example.com"
            #expect(stackedLocal.count <= 254)
            let email = try server.post("/api/visitors", token: site.ownerToken, Self.body("email", stackedLocal))
            #expect(email.isError(400, "BAD_REQUEST") && email.errorMessage.hasPrefix("email"), "\(email.errorMessage)")
            let hugeEmail = String(repeating: Self.stacked, count: 240) + "@x.test"
            let hugeAnswer = try server.post("/api/auth/send-otp", ["email": hugeEmail])
            #expect(hugeAnswer.isError(400, "BAD_REQUEST") && hugeAnswer.errorMessage.hasPrefix("email must be at most 1016 bytes"))
            let phone = try server.post("/api/visitors", token: site.ownerToken,
                                        Self.body("phone", String(repeating: "1\u{301}\u{301}", count: 32)))
            #expect(phone.isError(400, "BAD_REQUEST") && phone.errorMessage.hasPrefix("phone must be at most 128 bytes"))

            // note: 1000 characters on a rejection.
            let visitor = try server.createVisitor(site.ownerToken, ["requiresApproval": true])
            let id = visitor["id"] as! String
            #expect(try server.checkIn(site.scanner, visitor["shortId"] as! String, ["confirmApprovalRequest": true]).status == 200)
            let longNote = try server.post("/api/visitors/\(id)/reject-scan", token: site.ownerToken,
                                           ["note": String(repeating: Self.stacked, count: 1000)])
            #expect(longNote.isError(400, "BAD_REQUEST") && longNote.errorMessage.hasPrefix("note must be at most 4000 bytes"))
            let hanNote = String(repeating: Self.han, count: 1000)
            let rejected = try server.post("/api/visitors/\(id)/reject-scan", token: site.ownerToken, ["note": hanNote])
            #expect(rejected.status == 200, "\(rejected.text)")

            // checkpoint name: 100 characters.
            let checkpoint = try server.post("/api/checkpoints", token: site.ownerToken,
                                             ["name": String(repeating: Self.stacked, count: 100)])
            #expect(checkpoint.isError(400, "BAD_REQUEST") && checkpoint.errorMessage.hasPrefix("name must be at most 400 bytes"))
            #expect(try server.post("/api/checkpoints", token: site.ownerToken,
                                    ["name": String(repeating: Self.han, count: 100)]).status == 201)

            // search texts: 100 characters, in the query string and in the path.
            func encoded(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }
            let stackedSearch = encoded(String(repeating: Self.stacked, count: 100))
            let q = try server.get("/api/visitors?q=\(stackedSearch)", token: site.ownerToken)
            #expect(q.isError(400, "BAD_REQUEST") && q.errorMessage.hasPrefix("q must be at most 400 bytes"), "\(q.text)")
            let lookup = try server.get("/api/visitor-scanner/lookup/\(stackedSearch)", token: site.scanner)
            #expect(lookup.isError(400, "BAD_REQUEST") && lookup.errorMessage.hasPrefix("query must be at most 400 bytes"),
                    "\(lookup.text)")
            #expect(try server.get("/api/visitors?q=\(encoded(String(repeating: Self.han, count: 100)))",
                                   token: site.ownerToken).status == 200)
        }
    }

    @Test func scanTextIsLimitedInBytes() throws {
        try withSite { server, site in
            // api.md keeps at most 256 bytes of a scanned text; characters do not stretch it.
            let stacked = try server.checkIn(site.scanner, String(repeating: Self.stacked, count: 60))
            #expect(stacked.isError(400, "BAD_REQUEST") && stacked.errorMessage.contains("256"), "\(stacked.text)")
            let history = try server.history(site.ownerToken)
            #expect(history.first.map { ($0["raw"] as? String)?.utf8.count ?? 0 <= 256 } == true)
        }
    }

    @Test func bootstrappingUsersCountsBytesToo() throws {
        try withServer { server in
            #expect(throws: (any Error).self) {
                try server.addUser("ana@acme.test", role: .owner, name: String(repeating: Self.stacked, count: 200))
            }
            let user = try server.addUser("li@acme.test", role: .owner, name: String(repeating: Self.han, count: 200))
            #expect(user.name.count == 200)
        }
    }
}
