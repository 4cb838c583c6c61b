import Foundation

/// What a row of either wrapper reads by itself (the SQLite wrapper's `Row`, the PostgreSQL
/// wrapper's `PGRow`); the accessors built on these are written once, here, so both fail
/// closed the same way: a value that is missing or not understood is an error that names
/// the column and the SQL, never a default.
///
/// Code above the wrappers reads columns by name (`string(named:)`, `date(named:)`, …), so a
/// column added to or moved in a SELECT list cannot shift what another read means:
///
///     let expiresAt = try row.date(named: "expires_at")
///     let attempts = try row.int(named: "attempts", in: 0...1_000_000)
///
/// Names are the result's: a column's own name, or its alias (`AS name`) where two columns
/// would share one or the column is an expression. Each wrapper resolves them once per
/// statement, not per row.
public protocol SQLRow {
    associatedtype ReadFailure: Error
    func isNull(_ column: Int32) -> Bool
    func int64(_ column: Int32) throws(ReadFailure) -> Int64
    /// 0 or 1 (PostgreSQL's boolean type also as `f` or `t`); any other value is an error.
    func bool(_ column: Int32) throws(ReadFailure) -> Bool
    func string(_ column: Int32) throws(ReadFailure) -> String
    func blob(_ column: Int32) throws(ReadFailure) -> [UInt8]
    /// The error for `column`: names the column and the SQL, never a bound value.
    func unreadable(_ column: Int32, _ problem: String) -> ReadFailure
    /// The position of the one result column called `name`; nil when no column or more than
    /// one has that name.
    func columnIndex(named name: String) -> Int32?
    /// The error for a name `columnIndex(named:)` does not resolve: a bug in the SQL that
    /// reads it, reported as a failed read rather than a trap.
    func missingColumn(_ name: String) -> ReadFailure
}

/// The times the store keeps: integer milliseconds since 1970-01-01T00:00:00Z.
public enum StoredTime {
    /// 0000-01-01T00:00:00.000Z through 9999-12-31T23:59:59.999Z: every time RFC 3339 can
    /// write, so every time the API accepts reads back. A stored value outside it was not
    /// written by this code; turned into a `Date` it would reach arithmetic that traps.
    public static let range: ClosedRange<Int64> = -62_167_219_200_000...253_402_300_799_999

    /// The time `milliseconds` stands for; nil outside `range`.
    public static func date(milliseconds: Int64) -> Date? {
        guard range.contains(milliseconds) else { return nil }
        return Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}

extension SQLRow {
    public func int(_ column: Int32) throws(ReadFailure) -> Int {
        let value = try int64(column)
        guard let exact = Int(exactly: value) else { throw unreadable(column, "holds an integer out of range") }
        return exact
    }

    public func optionalString(_ column: Int32) throws(ReadFailure) -> String? {
        isNull(column) ? nil : try string(column)
    }

    public func optionalInt64(_ column: Int32) throws(ReadFailure) -> Int64? {
        isNull(column) ? nil : try int64(column)
    }

    public func optionalBlob(_ column: Int32) throws(ReadFailure) -> [UInt8]? {
        isNull(column) ? nil : try blob(column)
    }

    /// An integer within `range`; any other is an error naming the range.
    public func int64(_ column: Int32, in range: ClosedRange<Int64>) throws(ReadFailure) -> Int64 {
        let value = try int64(column)
        guard range.contains(value) else {
            throw unreadable(column, "holds \(value), outside \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    /// A time stored as milliseconds, within `StoredTime.range`.
    public func date(_ column: Int32) throws(ReadFailure) -> Date {
        let milliseconds = try int64(column)
        guard let date = StoredTime.date(milliseconds: milliseconds) else {
            throw unreadable(column, "holds \(milliseconds), which is not a time in years 0000 to 9999 (milliseconds since 1970)")
        }
        return date
    }

    public func optionalDate(_ column: Int32) throws(ReadFailure) -> Date? {
        isNull(column) ? nil : try date(column)
    }

    /// The text of `column` parsed by `parse`; a text it refuses (nil) is an error naming `what`.
    ///
    ///     let status = try row.parsed(11, as: "visitor status", VisitorStatus.init(rawValue:))
    public func parsed<T>(_ column: Int32, as what: String, _ parse: (String) -> T?) throws(ReadFailure) -> T {
        let text = try string(column)
        guard let value = parse(text) else {
            throw unreadable(column, "holds \(Self.excerpt(text)), which is not a known \(what)")
        }
        return value
    }

    public func optionalParsed<T>(_ column: Int32, as what: String, _ parse: (String) -> T?) throws(ReadFailure) -> T? {
        isNull(column) ? nil : try parsed(column, as: what, parse)
    }

    /// A short, escaped rendering of an unknown value for the log (these are codes such as
    /// statuses and roles, never secrets): control characters are shown, not written.
    public static func excerpt(_ text: String) -> String {
        let cut = text.unicodeScalars.count > 40 ? String(String.UnicodeScalarView(text.unicodeScalars.prefix(40))) + "…" : text
        return cut.debugDescription
    }
}

// MARK: - Reading by name

extension SQLRow {
    /// The position of the result column `name`, or the error of a name the SQL does not select.
    public func column(named name: String) throws(ReadFailure) -> Int32 {
        guard let column = columnIndex(named: name) else { throw missingColumn(name) }
        return column
    }

    public func isNull(named name: String) throws(ReadFailure) -> Bool { isNull(try column(named: name)) }

    public func string(named name: String) throws(ReadFailure) -> String { try string(column(named: name)) }

    public func optionalString(named name: String) throws(ReadFailure) -> String? {
        try optionalString(column(named: name))
    }

    public func blob(named name: String) throws(ReadFailure) -> [UInt8] { try blob(column(named: name)) }

    public func optionalBlob(named name: String) throws(ReadFailure) -> [UInt8]? { try optionalBlob(column(named: name)) }

    /// Any 64-bit integer: for ids, sequence numbers and keys whose every value is meaningful.
    /// A count, a status or a period has a range: read it with `int(named:in:)`.
    public func int64(named name: String) throws(ReadFailure) -> Int64 { try int64(column(named: name)) }

    public func optionalInt64(named name: String) throws(ReadFailure) -> Int64? { try optionalInt64(column(named: name)) }

    public func int64(named name: String, in range: ClosedRange<Int64>) throws(ReadFailure) -> Int64 {
        try int64(column(named: name), in: range)
    }

    /// An integer within `range` (a count, a number of days, an HTTP status).
    public func int(named name: String, in range: ClosedRange<Int>) throws(ReadFailure) -> Int {
        Int(try int64(column(named: name), in: Int64(range.lowerBound)...Int64(range.upperBound)))
    }

    /// NULL, or an integer within `range` (a setting that may be left to a default).
    public func optionalInt(named name: String, in range: ClosedRange<Int>) throws(ReadFailure) -> Int? {
        try isNull(named: name) ? nil : try int(named: name, in: range)
    }

    /// 0 or 1 (on PostgreSQL's boolean type also `f` or `t`); `2` is not "some kind of true".
    public func bool(named name: String) throws(ReadFailure) -> Bool { try bool(column(named: name)) }

    /// A time stored as milliseconds since 1970, within `StoredTime.range`.
    public func date(named name: String) throws(ReadFailure) -> Date { try date(column(named: name)) }

    public func optionalDate(named name: String) throws(ReadFailure) -> Date? { try optionalDate(column(named: name)) }

    /// A time's stored milliseconds, checked like `date(named:)` (for keyset cursors, which
    /// carry the stored value itself).
    public func milliseconds(named name: String) throws(ReadFailure) -> Int64 {
        try int64(column(named: name), in: StoredTime.range)
    }

    public func parsed<T>(named name: String, as what: String, _ parse: (String) -> T?) throws(ReadFailure) -> T {
        try parsed(column(named: name), as: what, parse)
    }

    public func optionalParsed<T>(named name: String, as what: String, _ parse: (String) -> T?) throws(ReadFailure) -> T? {
        try optionalParsed(column(named: name), as: what, parse)
    }
}

/// The name-to-position table of one statement's result, built once from the names the
/// database reports. A name two columns share resolves to neither: which one a read meant
/// cannot be known, so the SQL must alias one of them.
public struct ColumnNames: Sendable {
    private var positions: [String: Int32] = [:]

    public init(count: Int32, name: (Int32) -> String?) {
        for column in 0..<max(0, count) {
            guard let name = name(column) else { continue }
            positions[name] = positions[name] == nil ? column : -1
        }
    }

    public func index(of name: String) -> Int32? {
        guard let position = positions[name], position >= 0 else { return nil }
        return position
    }
}
