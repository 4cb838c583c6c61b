import GatePassAPI
import HTTPServer

extension GatePassApplication {
    static let noContent = HTTPResponse(status: 204)

    /// Every endpoint the server serves: the controllers' tables, each declared once in the
    /// file of its handlers. The router is built from this list alone.
    static let routes: [Route] = authRoutes + visitorRoutes + approverRoutes + scannerRoutes + eventRoutes
        + notificationRoutes + deviceRoutes + adminRoutes + siteRoutes + blocklistRoutes + auditRoutes + retentionRoutes + gateRoutes
}
