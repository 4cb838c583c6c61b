// The bound-value types are the SQLBinding module's, shared with the PostgreSQL wrapper; a
// file that imports SQLite binds values without a second import.
@_exported import SQLBinding
