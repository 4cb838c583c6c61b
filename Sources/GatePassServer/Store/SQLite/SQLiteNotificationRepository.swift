import Foundation
import GatePassCore
import SQLite

struct SQLiteNotificationRepository: NotificationRepository {
    let db: Connection
}
