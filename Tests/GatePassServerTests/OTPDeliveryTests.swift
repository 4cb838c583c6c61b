import Foundation
import Testing

/// Issue 9 item 7: the OTP delivery program's failures are logged and never crash or stall the server.
@Suite struct OTPDeliveryTests {
    private func script(_ body: String) throws -> (path: String, folder: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gatepass-delivery-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/deliver.sh"
        try ("#!/bin/sh\n" + body + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        return (path, folder)
    }

    /// Waits (bounded, only to catch a hang) until a log line contains `text`.
    private func waitForLog(_ server: TestServer, _ text: String) -> Bool {
        server.log.changes.wait { server.log.all.contains(where: { $0.contains(text) }) }
    }

    private func sendCodes(_ server: TestServer, users: Int) throws {
        for index in 0..<users {
            let email = "user\(index)@acme.test"
            try server.addUser(email, role: .approver)
            #expect(try server.post("/api/auth/send-otp", ["email": email]).status == 202)
        }
    }

    @Test func aProgramThatExitsNonZeroIsLogged() throws {
        let (path, folder) = try script("cat >/dev/null; exit 3")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try withServer(devMode: false, configure: { $0.otpDeliveryCommand = path }) { server in
            try sendCodes(server, users: 1)
            #expect(waitForLog(server, "exited with status 3"))
            #expect(try server.get("/api/healthz").status == 200)
        }
    }

    @Test func aProgramThatClosesItsInputAtOnceNeverCrashesTheServer() throws {
        // Closes standard input before the code can be written, then exits: the write fails
        // with EPIPE (SIGPIPE is ignored), or lands in the pipe's buffer — never a crash.
        let (path, folder) = try script("exec 0<&-\nexit 0")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try withServer(devMode: false, configure: { $0.otpDeliveryCommand = path }) { server in
            try sendCodes(server, users: 5)
            for _ in 0..<5 { #expect(try server.get("/api/healthz").status == 200) }
        }
    }

    @Test func aProgramThatHangsIsStoppedAndNeverStallsTheServer() throws {
        let (path, folder) = try script("sleep 600")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try withServer(devMode: false, configure: {
            $0.otpDeliveryCommand = path
            $0.otpDeliveryTimeoutSeconds = 1
        }) { server in
            // Far more hanging programs than the system's worker threads would survive if each held one.
            try sendCodes(server, users: 80)
            #expect(try server.get("/api/healthz").status == 200)
            #expect(try server.post("/api/auth/send-otp", ["email": "nobody@acme.test"]).status == 202)
            #expect(waitForLog(server, "still running after its time limit; stopping it"))
            #expect(waitForLog(server, "was ended by signal"))
            for line in server.log.all { #expect(!line.contains("@acme.test"), "an email is in: \(line)") }
        }
    }

    @Test func aProgramThatCannotRunIsLogged() throws {
        try withServer(devMode: false, configure: { $0.otpDeliveryCommand = "/nonexistent/deliver" }) { server in
            try sendCodes(server, users: 1)
            #expect(waitForLog(server, "cannot run /nonexistent/deliver"))
            #expect(try server.get("/api/healthz").status == 200)
        }
    }
}
