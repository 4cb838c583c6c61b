import Testing
@testable import GatePassScanner

@Suite struct FrameTests {
    @Test func errorsSayWhatAndWhere() {
        #expect(ScannerError.unreadable(path: "/x.png", reason: "no such file").description == "cannot read /x.png: no such file")
        #expect(ScannerError.device(path: "/dev/video0", reason: "ENODEV", lost: true).description == "camera /dev/video0 lost: ENODEV")
    }
}
