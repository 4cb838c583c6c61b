import Foundation
import GatePassCore

protocol ScanRepository {
}
