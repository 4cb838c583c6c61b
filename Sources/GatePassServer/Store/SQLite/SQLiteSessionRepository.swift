import Foundation
import GatePassCore
import SQLite

struct SQLiteSessionRepository: SessionRepository {
    let db: Connection
}
