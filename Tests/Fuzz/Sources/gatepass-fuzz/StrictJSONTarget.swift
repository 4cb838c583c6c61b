import Foundation
@testable import GatePassServer

extension FuzzTarget {
    /// The strict syntax check every request body passes before Foundation's decoder sees it.
    static let strictJSON = FuzzTarget(name: "strict-json", summary: "StrictJSON.problem(in:), the check before every body decode") { input in
        let bytes = Array(input)
        guard let problem = StrictJSON.problem(in: bytes) else {
            // What the strict check lets through is JSON for Foundation too, so a body that
            // passes it never fails later with a vaguer "not valid JSON" — except a number
            // beyond Double's range (1e400), which RFC 8259 lets a parser refuse; the body is
            // then still a 400 that names the number.
            do {
                _ = try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
            } catch {
                let detail = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)"
                FuzzCheck.require(detail.hasSuffix("is not representable in Swift."),
                                  "StrictJSON accepts what JSONSerialization refuses: \(detail)")
            }
            return
        }
        // The explanation ends "at byte N" with N inside the body (or at its end).
        if let range = problem.range(of: " at byte ", options: .backwards), let offset = Int(problem[range.upperBound...]) {
            FuzzCheck.require((0...bytes.count).contains(offset), "\(problem) is outside the \(bytes.count)-byte body")
        } else {
            FuzzCheck.require(problem == "it is not UTF-8 text", "unexpected explanation \(problem)")
        }
    }
}
