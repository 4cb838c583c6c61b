import Foundation
import GatePassCore

protocol SessionRepository {
}
