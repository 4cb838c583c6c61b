import Foundation
import GatePassCore
import HTTPServer
import SQLiteStore

extension GatePassApplication {
    struct SendOTPBody: Decodable { var email: String }
    struct VerifyOTPBody: Decodable { var email: String; var otp: String }

    func sendOTP(_ call: Call, _ db: Connection) throws -> HTTPResponse {
        let body = try JSONBody.decode(SendOTPBody.self, from: call.request.body)
        let email = try Field.email(body.email, required: true)!
        let code = try otp.issue(email: email, now: call.now, db)
        let user = try Directory.user(email: email, db)
        if devMode {
            logSink.log("dev: one-time code for \(email) is \(code)")
        }
        if let user, let command = configuration.otpDeliveryCommand {
            OTPDelivery.deliver(code: code, to: user.email, command: command,
                                timeout: .seconds(configuration.otpDeliveryTimeoutSeconds), log: logSink)
        }
        return JSONBody.response(status: 202, ["sent": true])
    }

    func verifyOTP(_ call: Call, _ db: Connection) throws -> HTTPResponse {
        let body = try JSONBody.decode(VerifyOTPBody.self, from: call.request.body)
        let email = try Field.email(body.email, required: true)!
        let code = body.otp.trimmingCharacters(in: .whitespaces)
        guard code.count == 6, code.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw APIError.badRequest("otp must be the 6 digits that were sent")
        }
        // An unknown email and a wrong code answer the same 401. It is returned, not thrown:
        // a throw rolls the transaction back, and the wrong try must stay counted.
        guard try otp.redeem(email: email, code: code, now: call.now, db), let user = try Directory.user(email: email, db) else {
            return APIError.unauthorized("the code is wrong, expired or used up; ask for a new one").response
        }
        let claims = try Sessions.create(userId: user.id, kind: .login, parent: nil, checkpointId: nil, now: call.now,
                                         lifetime: configuration.tokenLifetimeSeconds, db)
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

    func logout(_ call: Call, _ db: Connection) throws -> HTTPResponse {
        try Sessions.revoke(loginSession: call.caller.sessionId, now: call.now, db)
        return Self.noContent
    }

    /// The profile plus what this user may do, so a client can hide what it cannot use.
    func adminMe(_ call: Call) throws -> HTTPResponse {
        let user = call.caller.user
        let kind = user.principalKind
        let flags: [String: Bool] = [
            "canManageVisitors": Permissions.access(kind, to: .visitorsCreate) == .allowed,
            "canDecideVisitors": Permissions.access(kind, to: .visitorsApprove) == .allowed,
            "canScanCheckpoint": kind.mayScan,
            "canExportScanHistory": Permissions.access(kind, to: .adminHistoryCSV) == .allowed,
            "canManageCheckpoints": Permissions.access(kind, to: .checkpointsCreate) == .allowed,
            "devMode": devMode,
        ]
        return JSONBody.response(AdminProfile(profile: user, flags: flags))
    }
}

/// Hands a code to the configured delivery program (email as argument, code on stdin),
/// off the request thread so delivery time never shows in the answer's timing.
///
/// Nothing the program does can crash or stall the server: the code (a few bytes, well
/// under a pipe's buffer) is written without waiting for the program to read it, a program
/// that exits before reading only makes that write fail (SIGPIPE is ignored by the server,
/// see `GatePassServer`), and no thread waits for the program: its exit is reported by a
/// termination handler, and one still running after `timeout` is terminated, then killed.
/// Every failure is one log line naming the program and what happened — never the code.
enum OTPDelivery {
    static func deliver(code: String, to email: String, command: String, timeout: Duration, log: any LogSink) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command)
        process.arguments = [email]
        let input = Pipe()
        process.standardInput = input
        process.terminationHandler = { finished in
            switch (finished.terminationReason, finished.terminationStatus) {
            case (.exit, 0): break
            case (.exit, let status): log.log("otp delivery: \(command) exited with status \(status)")
            case (.uncaughtSignal, let signal): log.log("otp delivery: \(command) was ended by signal \(signal)")
            @unknown default: log.log("otp delivery: \(command) ended abnormally")
            }
        }
        do {
            try process.run()
        } catch {
            log.log("otp delivery: cannot run \(command): \(error.localizedDescription)")
            return
        }
        do {
            try input.fileHandleForWriting.write(contentsOf: Data((code + "\n").utf8))
        } catch {
            log.log("otp delivery: \(command) did not take the code on its standard input (it closed it)")
        }
        try? input.fileHandleForWriting.close()
        let seconds = Double(timeout.components.seconds)
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + seconds) {
            guard process.isRunning else { return }
            log.log("otp delivery: \(command) still running after \(Int(seconds)) s; stopping it")
            process.terminate()
            DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + 1) {
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            }
        }
    }
}
