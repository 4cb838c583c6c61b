import Foundation
import GatePassCore

protocol NotificationRepository {
}
