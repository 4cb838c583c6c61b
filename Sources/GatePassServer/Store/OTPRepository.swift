import Foundation
import GatePassCore

protocol OTPRepository {
}
