import CFuzzerDriver
import Foundation

// gatepass-fuzz <target> [libFuzzer options and corpus folders]
// gatepass-fuzz --list
//
// The first argument picks the target; the rest go to libFuzzer unchanged (with the program
// name in front, as libFuzzer expects), so `gatepass-fuzz sse -help=1` lists its options.

let arguments = CommandLine.arguments
if arguments.count == 2, arguments[1] == "--list" {
    // For .ci/fuzz: every target, one name a line.
    for target in FuzzTarget.all { print(target.name) }
    exit(0)
}
guard arguments.count >= 2, FuzzTarget.named(arguments[1]) != nil else {
    var usage = "usage: gatepass-fuzz <target> [libFuzzer options] [corpus folder …] | --list\ntargets:\n"
    for target in FuzzTarget.all { usage += "  \(target.name.padding(toLength: 16, withPad: " ", startingAt: 0)) \(target.summary)\n" }
    FileHandle.standardError.write(Data(usage.utf8))
    exit(2)
}

var driverArguments: [UnsafeMutablePointer<CChar>?] = ([arguments[0]] + arguments.dropFirst(2)).map { strdup($0) } + [nil]
var argumentCount = Int32(driverArguments.count - 1)
let status = driverArguments.withUnsafeMutableBufferPointer { buffer in
    var argumentVector = buffer.baseAddress
    return LLVMFuzzerRunDriver(&argumentCount, &argumentVector) { data, size in
        // libFuzzer may pass a null pointer for the empty input.
        FuzzTarget.selected.run(UnsafeRawBufferPointer(start: size == 0 ? nil : data, count: size))
        return 0
    }
}
exit(status)
