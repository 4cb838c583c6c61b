import SQLite

// TRANSITIONAL (removed before the redesign lands): the connection under a transaction,
// for code not yet moved behind the repositories.
extension Transaction {
    var connection: Connection { (self as! SQLiteTransaction).db }
}
