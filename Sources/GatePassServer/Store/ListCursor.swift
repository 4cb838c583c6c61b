/// A keyset position in a list ordered by (time DESC, seq DESC): the last row of a page,
/// after which the next page starts (see Store/SQLite/KeysetPage.swift). Times are Unix
/// milliseconds; `seq` breaks ties (lists ordered by an id alone use only `seq`).
struct ListCursor: Equatable, Sendable {
    var time: Int64
    var seq: Int64

    init(time: Int64, seq: Int64) {
        self.time = time
        self.seq = seq
    }
}
