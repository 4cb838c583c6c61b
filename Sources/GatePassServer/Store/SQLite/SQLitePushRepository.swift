import Foundation
import GatePassCore
import SQLite

struct SQLitePushRepository: PushRepository {
    let db: Connection
}
