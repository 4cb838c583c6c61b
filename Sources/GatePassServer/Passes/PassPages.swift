import Foundation
import GatePassCore
import GatePassCrypto
import GatePassPass

/// Pass page tokens: 256 random bits, Base64URL (43 characters), stored only as an HMAC
/// under a key from the server secret, so neither guessing nor a copy of the database opens a page.
extension GatePassApplication {
    func passTokenHash(_ token: String) -> [UInt8] { composer.passTokenHash(token) }

    func newPassToken(for visitorId: String, _ tx: any Transaction) throws -> String {
        let token = Base64URL.encode(try SecureRandom.bytes(32))
        try tx.visitors.setPassToken(hash: passTokenHash(token), visitorId: visitorId)
        return token
    }

    /// The site (name, zone) of an organization, for passes and mail.
    func site(_ organizationId: String, _ tx: any Transaction) throws -> SiteProfile {
        do {
            return try composer.site(organizationId, tx)
        } catch let error as MailComposer.Unsendable {
            throw APIError.notFound(error.description)
        }
    }

    /// The headers of the pass page (api.md): nothing cached or indexed, no referrer, and a
    /// policy that lets the page load nothing but its own inline style.
    static let passPageHeaders: [(String, String)] = [
        ("Content-Type", "text/html; charset=utf-8"),
        ("Cache-Control", "no-store"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Robots-Tag", "noindex, nofollow"),
        ("X-Content-Type-Options", "nosniff"),
        ("X-Frame-Options", "DENY"),
        ("Content-Security-Policy",
         "default-src 'none'; style-src 'sha256-\(Data(SHA256.hash(Array(PassHTML.styleSheet.utf8))).base64EncodedString())'; "
            + "img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
    ]

    /// What an unknown, ended or cancelled pass page shows: the same for every reason, so
    /// the page tells nobody whether a token ever existed.
    static let passPageNotFound = """
    <!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex">\
    <title>Pass not found</title></head><body><h1>Pass not found</h1>\
    <p>This pass does not exist or is no longer valid. Ask your host for a new invitation.</p></body></html>
    """
}
