import GatePassCore

extension ScanResult {
    /// What a check-in refused without an answer body means: 404 is an unknown pass, any
    /// other refusal (400) a code that is not a pass.
    public init(refusalStatus status: Int) {
        self = status == 404 ? .notFound : .invalid
    }
}
