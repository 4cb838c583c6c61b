import SQLite

/// `isBusy` and `isUnwritable` are `SQLiteError`'s own.
extension SQLiteError: DatabaseFailure {
    var isClosing: Bool { isWriterClosing }
}
