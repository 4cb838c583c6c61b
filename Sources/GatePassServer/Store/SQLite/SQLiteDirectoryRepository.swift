import Foundation
import GatePassCore
import SQLite

struct SQLiteDirectoryRepository: DirectoryRepository {
    let db: Connection
}
