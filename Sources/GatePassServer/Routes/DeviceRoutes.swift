import Foundation
import GatePassAPI
import GatePassCore
import HTTPServer

extension GatePassApplication {
    /// The devices controller: push tokens of managers' and approvers' devices.
    static let deviceRoutes: [Route] = [
        .write(.visitorsDeviceRegister) { app, call, tx in try app.registerDevice(call, tx) },
        .write(.visitorsDeviceUnregister) { app, call, tx in try app.unregisterDevice(call, tx) },
        .write(.approverDeviceRegister) { app, call, tx in try app.registerDevice(call, tx) },
        .write(.approverDeviceUnregister) { app, call, tx in try app.unregisterDevice(call, tx) },
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
    func registerDevice(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let body = try JSONBody.decode(RegisterDeviceBody.self, from: call.request.body)
        let token = try validatedDeviceToken(body.token)
        guard Device.platforms.contains(body.platform) else {
            throw APIError.badRequest("platform must be one of \(Device.platforms.sorted().joined(separator: ", "))")
        }
        let currentOrganization = try tx.push.deviceOrganization(token: token)
        if let currentOrganization, currentOrganization != call.caller.organizationId {
            throw APIError.conflict("this device token is registered in another organization; make a new one")
        }
        try tx.push.registerDevice(token: token, platform: body.platform, userId: call.caller.user.id, now: call.now)
        let device = try tx.push.device(token: token)
        return JSONBody.response(device!)
    }

    /// 204 whether or not the token existed or was someone else's; only the caller's own is removed.
    func unregisterDevice(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let body = try JSONBody.decode(UnregisterDeviceBody.self, from: call.request.body)
        let token = try validatedDeviceToken(body.token)
        try tx.push.unregisterDevice(token: token, userId: call.caller.user.id)
        return Self.noContent
    }
}
