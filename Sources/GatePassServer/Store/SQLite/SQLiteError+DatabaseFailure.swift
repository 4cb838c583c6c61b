import SQLite

extension SQLiteError: DatabaseFailure {
    var isClosing: Bool { isWriterClosing }
}
