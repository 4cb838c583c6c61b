import Foundation

/// One fuzzing target: a name for the command line and a function that takes one input.
///
/// A target traps (through `FuzzCheck.require`) when an input breaks a property that must
/// hold for every input; libFuzzer then saves that input. Errors the parser reports are
/// normal results, not failures.
struct FuzzTarget: Sendable {
    var name: String
    var summary: String
    var run: @Sendable (UnsafeRawBufferPointer) -> Void

    /// Every target, in the order `.ci/fuzz` runs them.
    static let all: [FuzzTarget] = [
        .qrPayload,
        .strictJSON,
        .requestBodies,
        .httpRequest,
        .serverSentEvents,
        .y4m,
        .pgm,
        .qrPlane,
        .rowDecoders,
    ]

    static func named(_ name: String) -> FuzzTarget? { all.first { $0.name == name } }

    /// The target named by the first command-line argument (main checked that there is one).
    /// libFuzzer calls back through a C function pointer, which cannot capture it.
    static let selected: FuzzTarget = named(CommandLine.arguments[1])!
}

enum FuzzCheck {
    /// Traps with `message` (so libFuzzer keeps the input) when `condition` is false.
    static func require(_ condition: Bool, _ message: @autoclosure () -> String,
                        file: StaticString = #fileID, line: UInt = #line) {
        if !condition { fatalError("property broken: \(message())", file: file, line: line) }
    }
}
