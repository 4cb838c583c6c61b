import Foundation
import GatePassCore
import SQLite

struct SQLiteEventRepository: EventRepository {
    let db: Connection
}
