/// A value a SQL database stores, as bound to a statement parameter or read from a column
/// (shared by the SQLite and PostgreSQL wrappers, so the store binds values one way).
public enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// A Swift value that binds as a statement parameter. Every value reaches SQL this way,
/// never by string interpolation.
public protocol SQLBindable: Sendable {
    var sqlValue: SQLValue { get }
}

extension SQLValue: SQLBindable { public var sqlValue: SQLValue { self } }
extension Int: SQLBindable { public var sqlValue: SQLValue { .integer(Int64(self)) } }
extension Int64: SQLBindable { public var sqlValue: SQLValue { .integer(self) } }
extension Int32: SQLBindable { public var sqlValue: SQLValue { .integer(Int64(self)) } }
extension Bool: SQLBindable { public var sqlValue: SQLValue { .integer(self ? 1 : 0) } }
extension Double: SQLBindable { public var sqlValue: SQLValue { .real(self) } }
extension String: SQLBindable { public var sqlValue: SQLValue { .text(self) } }
extension Substring: SQLBindable { public var sqlValue: SQLValue { .text(String(self)) } }
extension Array: SQLBindable where Element == UInt8 { public var sqlValue: SQLValue { .blob(self) } }
extension Optional: SQLBindable where Wrapped: SQLBindable {
    public var sqlValue: SQLValue { self?.sqlValue ?? .null }
}
