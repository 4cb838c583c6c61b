import Foundation
import GatePassCore

protocol CheckpointRepository {
}
