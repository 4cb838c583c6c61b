/// What a row of either wrapper reads by itself (the SQLite wrapper's `Row`, the PostgreSQL
/// wrapper's `PGRow`); the accessors built on these are written once, here, so both fail
/// closed the same way: a value that is missing or not understood is an error that names
/// the column and the SQL, never a default.
public protocol SQLRow {
    associatedtype ReadFailure: Error
    func isNull(_ column: Int32) -> Bool
    func int64(_ column: Int32) throws(ReadFailure) -> Int64
    func string(_ column: Int32) throws(ReadFailure) -> String
    func blob(_ column: Int32) throws(ReadFailure) -> [UInt8]
    /// The error for `column`: names the column and the SQL, never a bound value.
    func unreadable(_ column: Int32, _ problem: String) -> ReadFailure
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
