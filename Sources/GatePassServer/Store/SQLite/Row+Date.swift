import Foundation
import SQLite

extension Row {
    func date(_ column: Int32) throws(SQLiteError) -> Date { Date(milliseconds: try int64(column)) }
    func optionalDate(_ column: Int32) throws(SQLiteError) -> Date? { isNull(column) ? nil : try date(column) }
}
