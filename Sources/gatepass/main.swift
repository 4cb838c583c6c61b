import Foundation
import GatePassCommands

exit(GatePassCLI.main(CommandLine.arguments))
