import Foundation
import GatePassCore
import SQLite

struct SQLiteScanRepository: ScanRepository {
    let db: Connection
}
