import Foundation
import GatePassCore

protocol EventRepository {
}
