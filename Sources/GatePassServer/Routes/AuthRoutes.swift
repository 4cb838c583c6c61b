import Foundation
import GatePassAPI
import GatePassCore
import HTTPServer

extension GatePassApplication {
    /// The auth controller: logging in and out.
    static let authRoutes: [Route] = [
        .write(.authSendOTP) { app, call, tx in try app.sendOTP(call, tx) },
        .write(.authVerifyOTP) { app, call, tx in try app.verifyOTP(call, tx) },
        .read(.authDevPeekOTP) { app, call, _ in try app.devPeekOTP(call) },
        .read(.authMe) { _, call, _ in JSONBody.response(call.caller.user) },
        .write(.authLogout) { app, call, tx in try app.logout(call, tx) },
    ]

    struct SendOTPBody: Decodable { var email: String }
    struct VerifyOTPBody: Decodable { var email: String; var otp: String }

    func sendOTP(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let body = try JSONBody.decode(SendOTPBody.self, from: call.request.body)
        let email = try Field.email(body.email, required: true)!
        // A disabled user is mailed no code: it is answered as an unknown email is.
        let user = try tx.directory.user(email: email).flatMap { try tx.directory.isDisabled(userId: $0.id) ? nil : $0 }
        let code = try otp.issue(email: email, known: user != nil, now: call.now, tx)
        if devMode, user != nil {
            logSink.log("dev: one-time code for \(email) is \(code)")
        }
        // A delivery program (an SMS gateway) takes the code instead of mail when it is set.
        // The mail's code leaves the queue once sent, or when the code expires unsent.
        if let user {
            if let command = configuration.otpDeliveryCommand {
                OTPDelivery.deliver(code: code, to: user.email, command: command,
                                    timeout: .seconds(configuration.otpDeliveryTimeoutSeconds), log: logSink)
            } else {
                try queueMail(.otp(code: code), to: user.email, organizationId: user.organizationId, call, tx,
                              giveUpAt: call.now.addingTimeInterval(TimeInterval(configuration.otpLifetimeSeconds)))
            }
        }
        return JSONBody.response(status: 202, ["sent": true])
    }

    func verifyOTP(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        let body = try JSONBody.decode(VerifyOTPBody.self, from: call.request.body)
        let email = try Field.email(body.email, required: true)!
        let code = body.otp.trimmingCharacters(in: .whitespaces)
        guard code.count == 6, code.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw APIError.badRequest("otp must be the 6 digits that were sent")
        }
        // An unknown email and a wrong code answer the same 401. It is returned, not thrown:
        // a throw rolls the transaction back, and the wrong try must stay counted.
        guard try otp.redeem(email: email, code: code, now: call.now, tx.otps), let user = try tx.directory.user(email: email),
              try !tx.directory.isDisabled(userId: user.id)
        else {
            return APIError.unauthorized("the code is wrong, expired or used up; ask for a new one").response
        }
        let claims = try Sessions.create(userId: user.id, kind: .login, parent: nil, checkpointId: nil, now: call.now,
                                         lifetime: configuration.tokenLifetimeSeconds, tx)
        try tx.directory.recordLogin(userId: user.id, at: call.now)
        // session.* entries name the user (the entity filter finds a person's logins).
        try audit(.sessionLogin, id: user.id, .none, call, organizationId: user.organizationId,
                  actor: AuditActor(kind: .user, id: user.id), tx)
        return JSONBody.response(LoginAnswer(role: user.role, token: signer.sign(claims),
                                               expiresAt: Timestamp(Date(timeIntervalSince1970: TimeInterval(claims.expiresAt))),
                                               profile: user))
    }

    func devPeekOTP(_ call: Call) throws -> HTTPResponse {
        guard otp.isDevMode else { throw APIError(code: .notFound, message: "no route GET for this path") }
        let email = try Field.email(call.request.query["email"], required: true)!
        guard let code = otp.peek(email: email) else { throw APIError.notFound("a live code for this email") }
        return JSONBody.response(["otp": code])
    }

    func logout(_ call: Call, _ tx: any Transaction) throws -> HTTPResponse {
        try Sessions.revoke(loginSession: call.caller.sessionId, now: call.now, tx)
        try audit(.sessionLogout, id: call.caller.user.id, .none, call, tx)
        call.effects.noteEndedSessions()
        return Self.noContent
    }

    /// The profile plus what this user may do, so a client can hide what it cannot use.
    func adminMe(_ call: Call) throws -> HTTPResponse {
        let user = call.caller.user
        let kind = user.principalKind
        let flags: [String: Bool] = [
            "canManageVisitors": Permissions.may(kind, .registerVisitor) == .allowed,
            "canDecideVisitors": Permissions.may(kind, .decideVisitor) == .allowed,
            "canScanCheckpoint": kind.mayScan,
            "canExportScanHistory": Permissions.may(kind, .exportScanHistory) == .allowed,
            "canManageCheckpoints": Permissions.may(kind, .createCheckpoint) == .allowed,
            "devMode": devMode,
        ]
        return JSONBody.response(AdminProfile(profile: user, flags: flags))
    }
}
