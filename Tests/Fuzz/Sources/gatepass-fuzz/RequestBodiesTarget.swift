import GatePassCore
import HTTPServer
@testable import GatePassServer

extension FuzzTarget {
    /// Every request body the API decodes, with the field checks its route applies before it
    /// touches the database. The first byte picks the body type; the rest is the body.
    static let requestBodies = FuzzTarget(name: "request-bodies",
                                          summary: "JSONBody.decode of every request body type, and its field checks") { input in
        guard let selector = input.first else { return }
        let body = Array(input.dropFirst())
        let route = RequestBody.all[Int(selector) % RequestBody.all.count]
        do {
            try route.decodeAndCheck(body)
        } catch {
            // A body the API refuses is always the client's fault: 400 in the JSON error shape.
            let apiError = APIError.from(error)
            FuzzCheck.require(apiError.code == .badRequest, "\(route.name): \(error) answers \(apiError.code), not 400")
            FuzzCheck.require(!apiError.message.isEmpty, "\(route.name): an empty error message")
            FuzzCheck.require(StrictJSON.problem(in: apiError.response.body) == nil,
                              "\(route.name): the error answer is not JSON")
        }
    }
}

/// One request body type, decoded and checked as its route does (…Routes.swift).
struct RequestBody: Sendable {
    var name: String
    var decodeAndCheck: @Sendable ([UInt8]) throws -> Void

    typealias App = GatePassApplication

    static let all: [RequestBody] = [
        RequestBody(name: "send-otp") { body in
            let decoded = try JSONBody.decode(App.SendOTPBody.self, from: body)
            _ = try Field.email(decoded.email, required: true)
        },
        RequestBody(name: "verify-otp") { body in
            let decoded = try JSONBody.decode(App.VerifyOTPBody.self, from: body)
            _ = try Field.email(decoded.email, required: true)
        },
        RequestBody(name: "create-visitor") { body in
            let decoded = try JSONBody.decode(App.CreateVisitorBody.self, from: body)
            _ = try Field.requiredText(decoded.name, "name")
            _ = try Field.email(decoded.email)
            _ = try Field.phone(decoded.phone)
            _ = try Field.text(decoded.company, "company")
            _ = try Field.text(decoded.purpose, "purpose", maxLength: 500)
            _ = try Field.text(decoded.hostName, "hostName")
        },
        RequestBody(name: "decision-note") { body in
            let decoded = try JSONBody.decodeOptional(NoteBody.self, from: body)
            _ = try Field.text(decoded.note, "note", maxLength: 1000)
        },
        RequestBody(name: "scanner-token") { body in
            _ = try JSONBody.decodeOptional(App.ScannerTokenBody.self, from: body)
        },
        RequestBody(name: "check-in") { body in
            let decoded = try JSONBody.decode(App.CheckInBody.self, from: body)
            let raw = App.truncated(decoded.shortId, bytes: QRPayload.maximumRawBytes)
            FuzzCheck.require(raw.utf8.count <= QRPayload.maximumRawBytes, "the kept raw text is too long")
            FuzzCheck.require(decoded.shortId.hasPrefix(raw), "the kept raw text is not a prefix of the scan")
            _ = try QRPayload.shortID(from: decoded.shortId)
        },
        RequestBody(name: "check-out") { body in
            let decoded = try JSONBody.decode(App.CheckOutBody.self, from: body)
            _ = try QRPayload.shortID(from: decoded.shortId)
        },
        RequestBody(name: "walk-in") { body in
            let decoded = try JSONBody.decode(App.WalkInBody.self, from: body)
            _ = try Field.requiredText(decoded.name, "name")
            _ = try Field.phone(decoded.phone)
            _ = try Field.email(decoded.email)
            _ = try Field.text(decoded.company, "company")
            _ = try Field.text(decoded.purpose, "purpose", maxLength: 500)
            _ = try Field.text(decoded.hostName, "hostName")
        },
        RequestBody(name: "checkpoint") { body in
            let decoded = try JSONBody.decode(App.CheckpointBody.self, from: body)
            _ = try Field.requiredText(decoded.name, "name", maxLength: 100)
        },
        RequestBody(name: "register-device") { body in
            _ = try JSONBody.decode(App.RegisterDeviceBody.self, from: body)
        },
        RequestBody(name: "unregister-device") { body in
            _ = try JSONBody.decode(App.UnregisterDeviceBody.self, from: body)
        },
        RequestBody(name: "push-test") { body in
            _ = try JSONBody.decodeOptional(App.PushTestBody.self, from: body)
        },
    ]
}
