import Foundation
import GatePassCore
import SQLite

struct SQLiteVisitorRepository: VisitorRepository {
    let db: Connection
}
