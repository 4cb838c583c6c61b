import GatePassAPI
import Testing
@testable import GatePassServer

/// The router over the served tables: literal segments win, parameters are captured,
/// another method is 405 with what the path answers, HEAD is served as GET, paths are exact.
@Suite struct RouterTests {
    let router = Router(routes: GatePassApplication.routes)

    func found(_ method: String, _ path: String) -> (Endpoint, [String: String])? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        guard case .found(let route, let parameters) = router.match(method: method, segments: segments) else { return nil }
        return (route.endpoint, parameters)
    }

    @Test func aLiteralSegmentWinsOverAParameter() {
        #expect(found("GET", "/api/visitors/admin-me")?.0 == .visitorsAdminMe)
        #expect(found("GET", "/api/visitors/abc")?.0 == .visitorsGet)
    }

    @Test func parametersAreCapturedByName() {
        let match = found("POST", "/api/approver/visitors/v-1/approve")
        #expect(match?.0 == .approverApprove)
        #expect(match?.1 == ["id": "v-1"])
        #expect(found("GET", "/api/visitor-scanner/lookup/ana pop")?.1 == ["query": "ana pop"])
    }

    @Test func anotherMethodIsNotAllowedWithTheMethodsThePathAnswers() {
        guard case .methodNotAllowed(let allowed) = router.match(method: "PUT", segments: ["api", "visitors"]) else {
            Issue.record("PUT /api/visitors was not 405")
            return
        }
        #expect(Set(allowed) == ["GET", "POST"])
    }

    @Test func headIsServedAsGet() {
        #expect(found("HEAD", "/api/healthz")?.0 == .healthz)
    }

    @Test func pathsAreExact() {
        #expect(found("GET", "/api/healthz/") == nil)
        #expect(found("GET", "/api//healthz") == nil)
        #expect(found("GET", "/api/nothing") == nil)
    }
}
