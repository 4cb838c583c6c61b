import Foundation
import GatePassCore

extension ClientCore {
    /// The organization (`GET /api/organization`, any user), from the cache when the server
    /// does not answer: its zone is what every time a person reads is shown in, offline too.
    public func organization() throws(ClientError) -> Read<Organization> {
        try read("organization") { api, session throws(ClientError) in try api.organization(token: session.token) }
    }
}
