import Foundation
import GatePassCore

protocol VisitorRepository {
}
