import Foundation
import GatePassCore

protocol PushRepository {
}
