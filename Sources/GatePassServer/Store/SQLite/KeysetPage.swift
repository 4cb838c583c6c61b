import SQLite

/// Keyset pagination, the one way every list pages: rows in descending (time, seq) order,
/// the next page starting after the cursor's (time, seq). No OFFSET, so a page costs the
/// same however deep it is and rows inserted meanwhile neither repeat nor vanish.
struct KeysetOrder {
    /// The SQL expression of the list's time (a column, or an expression such as a COALESCE).
    var time: String
    var seq: String = "seq"

    /// Appends the cursor condition (when there is a cursor), the order and the limit.
    func appendPage(after cursor: ListCursor?, limit: Int, to sql: inout String, _ arguments: inout [any SQLBindable]) {
        if let cursor {
            sql += " AND (\(time) < ? OR (\(time) = ? AND \(seq) < ?))"
            arguments += [cursor.time, cursor.time, cursor.seq]
        }
        sql += " ORDER BY \(time) DESC, \(seq) DESC LIMIT ?"
        arguments.append(limit)
    }
}
