import Foundation
import GatePassCore

protocol DirectoryRepository {
}
