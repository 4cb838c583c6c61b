/// The server and state a client command works with: `--server URL`, and the state folder
/// (`$GATEPASS_STATE_DIR`) every client command keeps its session and outbox in.
enum ServerOptions {
    /// `--server URL`; `meaning` says what the command does with it and what the default is.
    static func server(_ meaning: String) -> Option<String> {
        Option("--server", value: "URL", help: meaning)
    }

    /// `--db PATH`: the server's SQLite file, for the commands that work on it directly.
    static func database(_ meaning: String, required: Bool = false) -> Option<String> {
        Option("--db", aliases: ["--database"], value: "PATH|URL", required: required,
               help: meaning + " A SQLite file (PATH or sqlite:PATH) or postgres://USER@HOST:PORT/DB (its password from PGPASSWORD or ~/.pgpass, never the URL).")
    }

    /// The server's secret file, where the audit key comes from (one declaration for every
    /// command that writes or checks the audit log of a database file).
    static let secretFile = Option<String>("--secret-file", value: "FILE",
                                           help: "The server's secret, which holds the audit key (default <db>.secret; required with a postgres:// database).")

    static let stateNote = "State lives in $GATEPASS_STATE_DIR (default $XDG_STATE_HOME/gatepass or ~/.local/state/gatepass)."
}
