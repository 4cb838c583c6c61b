import Foundation
import GatePassCore
import SQLite

struct SQLiteOTPRepository: OTPRepository {
    let db: Connection
}
