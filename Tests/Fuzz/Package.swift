// swift-tools-version:6.0
import PackageDescription

// The fuzzing package: one executable, `gatepass-fuzz <target> [libFuzzer options]`, over the
// main package's parsing layers. It is a package of its own because libFuzzer brings its own
// `main`, which clashes with the one SwiftPM links into executables built with
// `-sanitize=fuzzer`; here our `main` calls libFuzzer's `LLVMFuzzerRunDriver` instead, and
// `.ci/fuzz` links `libclang_rt.fuzzer_no_main`. Build and run it through `.ci/fuzz`.
// It is built in the debug configuration: the targets reach internal parsers with
// `@testable import`, which needs the main package's modules compiled for testing, as
// SwiftPM's debug builds are.
let package = Package(
    name: "GatePassFuzz",
    dependencies: [.package(name: "GatePass", path: "../..")],
    targets: [
        // Declares LLVMFuzzerRunDriver, which libclang_rt.fuzzer_no_main defines.
        .target(name: "CFuzzerDriver"),
        .executableTarget(name: "gatepass-fuzz",
                          dependencies: ["CFuzzerDriver", .product(name: "GatePassFuzzable", package: "GatePass")]),
    ],
    swiftLanguageModes: [.v6]
)
