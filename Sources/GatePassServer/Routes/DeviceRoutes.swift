import Foundation
import GatePassAPI
import GatePassCore
import HTTPServer
import SQLite

extension GatePassApplication {
    /// The devices controller: push tokens of managers' and approvers' devices.
    static let deviceRoutes: [Route] = [
        .write(.visitorsDeviceRegister) { app, call, tx in try app.registerDevice(call, tx.connection) },
        .write(.visitorsDeviceUnregister) { app, call, tx in try app.unregisterDevice(call, tx.connection) },
        .write(.approverDeviceRegister) { app, call, tx in try app.registerDevice(call, tx.connection) },
        .write(.approverDeviceUnregister) { app, call, tx in try app.unregisterDevice(call, tx.connection) },
    ]

    struct RegisterDeviceBody: Decodable { var token: String; var platform: String }
    struct UnregisterDeviceBody: Decodable { var token: String }

    private func validatedDeviceToken(_ raw: String) throws(APIError) -> String {
        guard (1...512).contains(raw.utf8.count), raw.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw .badRequest("token must be 1 to 512 printable ASCII characters without spaces")
        }
        return raw
    }

    /// Upserts on the unique token: the same token registered again is re-bound to the caller
    /// when its current user is of the caller's organization; a token of another organization
    /// is 409 and stays where it is (api.md), so no one can take over another tenant's device.
    func registerDevice(_ call: Call, _ db: Connection) throws -> HTTPResponse {
        let body = try JSONBody.decode(RegisterDeviceBody.self, from: call.request.body)
        let token = try validatedDeviceToken(body.token)
        guard Device.platforms.contains(body.platform) else {
            throw APIError.badRequest("platform must be one of \(Device.platforms.sorted().joined(separator: ", "))")
        }
        let currentOrganization = try db.queryFirst("""
            SELECT u.organization_id FROM devices d JOIN users u ON u.id = d.user_id WHERE d.token = ?
            """, [token]) { try $0.string(0) }
        if let currentOrganization, currentOrganization != call.caller.organizationId {
            throw APIError.conflict("this device token is registered in another organization; make a new one")
        }
        try db.execute("""
            INSERT INTO devices (token, platform, user_id, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (token) DO UPDATE SET platform = excluded.platform, user_id = excluded.user_id,
                last_seen_at = excluded.last_seen_at
            """, [token, body.platform, call.caller.user.id, call.now.milliseconds, call.now.milliseconds])
        let device = try db.queryFirst("SELECT token, platform, user_id, created_at, last_seen_at FROM devices WHERE token = ?",
                                       [token]) { row in
            Device(token: try row.string(0), platform: try row.string(1), userId: try row.string(2),
                   createdAt: Timestamp(try row.date(3)), lastSeenAt: Timestamp(try row.date(4)))
        }
        return JSONBody.response(device!)
    }

    /// 204 whether or not the token existed or was someone else's; only the caller's own is removed.
    func unregisterDevice(_ call: Call, _ db: Connection) throws -> HTTPResponse {
        let body = try JSONBody.decode(UnregisterDeviceBody.self, from: call.request.body)
        let token = try validatedDeviceToken(body.token)
        try db.execute("DELETE FROM devices WHERE token = ? AND user_id = ?", [token, call.caller.user.id])
        return Self.noContent
    }
}
