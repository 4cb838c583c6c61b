import Foundation
import GatePassCore
import SQLite

struct SQLiteCheckpointRepository: CheckpointRepository {
    let db: Connection
}
