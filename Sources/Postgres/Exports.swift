// The bound-value types are the SQLBinding module's, shared with the SQLite wrapper; a file
// that imports Postgres binds values without a second import.
@_exported import SQLBinding
