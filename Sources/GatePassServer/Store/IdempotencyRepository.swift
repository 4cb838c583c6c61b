import Foundation
import GatePassCore

protocol IdempotencyRepository {
}
