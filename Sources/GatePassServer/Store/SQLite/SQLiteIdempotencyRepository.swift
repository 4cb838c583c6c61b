import Foundation
import GatePassCore
import SQLite

struct SQLiteIdempotencyRepository: IdempotencyRepository {
    let db: Connection
}
