import SQLite

/// Keyset pagination, the one way every list pages: rows in descending (time, seq) order,
/// the next page starting after the cursor's (time, seq). No OFFSET, so a page costs the
/// same however deep it is and rows inserted meanwhile neither repeat nor vanish.
/// A list ordered by a unique increasing id alone (events, deliveries) pages on the
/// cursor's `seq` only.
struct KeysetOrder {
    /// The SQL expression of the list's time (a column, or an expression such as a COALESCE);
    /// nil when `seq` alone orders the list.
    var time: String?
    var seq: String = "seq"

    /// Ordered by `seq` alone.
    static func bySequence(_ seq: String) -> KeysetOrder { KeysetOrder(time: nil, seq: seq) }

    /// Appends the cursor condition (when there is a cursor), the order and the limit.
    func appendPage(after cursor: ListCursor?, limit: Int, to sql: inout String, _ arguments: inout [any SQLBindable]) {
        if let time {
            if let cursor {
                sql += " AND (\(time) < ? OR (\(time) = ? AND \(seq) < ?))"
                arguments += [cursor.time, cursor.time, cursor.seq]
            }
            sql += " ORDER BY \(time) DESC, \(seq) DESC LIMIT ?"
        } else {
            if let cursor {
                sql += " AND \(seq) < ?"
                arguments.append(cursor.seq)
            }
            sql += " ORDER BY \(seq) DESC LIMIT ?"
        }
        arguments.append(limit)
    }
}
