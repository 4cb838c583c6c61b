import Testing
@testable import GatePassCommands

/// The whole `--help` of every command, pinned: the declarations render it, so a change to an
/// option's name, value, sentence or order shows here.
@Suite struct HelpPinTests {
    static let cases: [([String], String)] = [
        (["demo"], #"""
            OVERVIEW: Try Gate Pass in one command: starts a development server on loopback with a demo organization (a user per role, visitors in every status, a new walk-in waiting for approval every 30 s), writes demo passes as PNG files, and opens the console against it with the demo logins listed and the one-time code filled in. Quitting the console stops everything.

            USAGE: gatepass demo [--dir DIR] [--port N] [--arrivals SECONDS]

            OPTIONS:
              --dir DIR           Keep the demo's database, passes, server log and console state in DIR (kept after quitting; a second run goes on with the same data). Default: a private temporary folder, removed when the console quits.
              --port N            The server's port (default 0: a free one).
              --arrivals SECONDS  How often a new walk-in arrives and waits for approval (default 30; 0 for none).
              -h, --help          Show help information.

            """#),
        (["user"], #"""
            OVERVIEW: The users of your organization, through the server (OWNER/ADMIN): list them, add one, change a name, role or scanning right, disable or enable one. gatepass user add --db adds a user to a database file directly, for the first OWNER.

            USAGE: gatepass user <subcommand> [options]

            OPTIONS:
              -h, --help  Show help information.

            SUBCOMMANDS:
              list     The organization's users: role, scanning right, disabled, last login.
              add      Add a user (with --db: to a database file, for bootstrapping).
              update   Change a user's name, role or scanning right, or enable them again.
              disable  Disable a user: their sessions, scanner tokens and event streams end at once.

            """#),
        (["user", "list"], #"""
            OVERVIEW: The users of your organization, newest first (OWNER/ADMIN): role, whether an APPROVER can scan, disabled, last login.

            USAGE: gatepass user list [--limit N] [--json]

            OPTIONS:
              --limit N   How many users (default 50, at most 500).
              --json      Print the API's page: {"items": [Profile plus disabled, lastLoginAt], "nextCursor"}.
              -h, --help  Show help information.

            """#),
        (["user", "update"], #"""
            OVERVIEW: Change a user of your organization. An OWNER changes anyone to any role; an ADMIN changes ADMINs, APPROVERs and HOSTs, to those roles. Nobody changes their own role, and the last OWNER stays one.

            USAGE: gatepass user update USER [--name N] [--role R] [--can-scan] [--no-can-scan] [--enable] [--json]

            ARGUMENTS:
              USER  The user's id, or their email.

            OPTIONS:
              --name N       The user's new name.
              --role R       OWNER, ADMIN, APPROVER or HOST.
              --can-scan     Let an APPROVER obtain scanner tokens.
              --no-can-scan  Take that right away (their scanner tokens stop).
              --enable       Enable a disabled user again (they log in anew; old tokens stay ended).
              --json         Print the user as the API shapes it.
              -h, --help     Show help information.

            """#),
        (["user", "disable"], #"""
            OVERVIEW: Disable a user of your organization: their login sessions, scanner tokens and event streams end at once and they cannot log in until enabled again (gatepass user update USER --enable). Nobody disables themselves, and the last OWNER cannot be disabled.

            USAGE: gatepass user disable USER [--json]

            ARGUMENTS:
              USER  The user's id, or their email.

            OPTIONS:
              --json      Print the user as the API shapes it.
              -h, --help  Show help information.

            """#),
        (["user", "add"], #"""
            OVERVIEW: Add a user to your organization through the server (an OWNER adds any role, an ADMIN an ADMIN, APPROVER or HOST). With --db, add them to a database file directly, creating the organization if needed.

            USAGE: gatepass user add [--db PATH|URL [--organization NAME] [--secret-file FILE]] --email E --name N --role OWNER|ADMIN|APPROVER|HOST|PLATFORM_ADMIN [--can-scan] [--json]

            OPTIONS:
              --db, --database PATH|URL  Add to this database instead (a SQLite file is created if missing): for the first OWNER, before anyone can log in. A SQLite file (PATH or sqlite:PATH) or postgres://USER@HOST:PORT/DB (its password from PGPASSWORD or ~/.pgpass, never the URL).
              --email E                  The user's email; they log in with a code sent to it.
              --name N                   The user's full name.
              --role R                   OWNER, ADMIN, APPROVER or HOST (PLATFORM_ADMIN with --db only).
              --organization NAME        With --db: the organization (default: "Default"), created with a "Main gate" checkpoint if new. Without, yours.
              --can-scan                 Let an APPROVER obtain scanner tokens (owners and admins always can).
              --json                     Print the new user as the API shapes it (without --db).
              --secret-file FILE         The server's secret, which holds the audit key (default <db>.secret; required with a postgres:// database).
              -h, --help                 Show help information.

            """#),
        (["checkpoint"], #"""
            OVERVIEW: The checkpoints (gates) of your organization, through the server (OWNER/ADMIN): list them, add one, rename one, retire one (its scanner tokens and kiosks stop at once). gatepass checkpoint add --db adds one to a database file directly. gatepass gate is the same command.

            USAGE: gatepass checkpoint <subcommand> [options]

            OPTIONS:
              -h, --help  Show help information.

            SUBCOMMANDS:
              list    The organization's checkpoints: name, default, retired, id.
              add     Add a checkpoint (with --db: to a database file, for bootstrapping).
              rename  Rename a checkpoint.
              retire  Retire a checkpoint: its scanner tokens and kiosks stop at once (--undo brings it back).

            """#),
        (["checkpoint", "list"], #"""
            OVERVIEW: The checkpoints (gates) of your organization, oldest first.

            USAGE: gatepass checkpoint list [--json]

            OPTIONS:
              --json      Print the API's page: {"items": [Checkpoint], "nextCursor"}.
              -h, --help  Show help information.

            """#),
        (["checkpoint", "add"], #"""
            OVERVIEW: Add a checkpoint (a gate) to your organization through the server (OWNER/ADMIN). With --db, add it to an organization in a database file directly.

            USAGE: gatepass checkpoint add NAME [--json] | gatepass checkpoint add NAME --db PATH|URL --organization NAME [--secret-file FILE]

            ARGUMENTS:
              NAME  The checkpoint's name, unique in its organization.

            OPTIONS:
              --db, --database PATH|URL  Add to this database file instead, before anyone can log in (bootstrapping); the organization is named with --organization. A SQLite file (PATH or sqlite:PATH) or postgres://USER@HOST:PORT/DB (its password from PGPASSWORD or ~/.pgpass, never the URL).
              --organization NAME        With --db: the organization's name.
              --name N                   The name, as NAME gives it (kept for scripts written for --db).
              --json                     Print the new checkpoint as the API shapes it (without --db).
              --secret-file FILE         The server's secret, which holds the audit key (default <db>.secret; required with a postgres:// database).
              -h, --help                 Show help information.

            """#),
        (["checkpoint", "rename"], #"""
            OVERVIEW: Rename a checkpoint of your organization (OWNER/ADMIN).

            USAGE: gatepass checkpoint rename CHECKPOINT --name N [--json]

            ARGUMENTS:
              CHECKPOINT  The checkpoint's id (see gatepass checkpoint list).

            OPTIONS:
              --name N    The new name, unique in the organization.
              --json      Print the checkpoint as the API shapes it.
              -h, --help  Show help information.

            """#),
        (["checkpoint", "retire"], #"""
            OVERVIEW: Retire a checkpoint of your organization (OWNER/ADMIN): its scanner tokens and enrolled kiosks stop at once, and it gets no new ones. The default checkpoint cannot be retired.

            USAGE: gatepass checkpoint retire CHECKPOINT [--undo] [--json]

            ARGUMENTS:
              CHECKPOINT  The checkpoint's id (see gatepass checkpoint list).

            OPTIONS:
              --undo      Bring a retired checkpoint back (its old tokens stay ended).
              --json      Print the checkpoint as the API shapes it.
              -h, --help  Show help information.

            """#),
        (["site"], #"""
            OVERVIEW: Your organization's settings, through the server: its name, time zone, how long visitors are kept before they are anonymised (retention) and when visitors still inside are checked out automatically. Anyone shows them; an OWNER changes them.

            USAGE: gatepass site <subcommand> [options]

            OPTIONS:
              -h, --help  Show help information.

            SUBCOMMANDS:
              show  The organization's name, time zone, retention and automatic check-out.
              set   Change the time zone, retention or automatic check-out (OWNER).

            """#),
        (["site", "show"], #"""
            OVERVIEW: Show your organization's settings: name, time zone (the one every time is shown and typed in), retention (days after a pass ends before its visitor is anonymised) and the automatic check-out time.

            USAGE: gatepass site show [--json]

            OPTIONS:
              --json      Print the API's answer: {id, name, timeZone, retentionDays, autoCheckoutAt}.
              -h, --help  Show help information.

            """#),
        (["site", "set"], #"""
            OVERVIEW: Change your organization's settings (OWNER). Only the settings given change; the answer is the settings as they are now.

            USAGE: gatepass site set [--time-zone ZONE] [--retention-days N|default] [--auto-checkout HH:MM|off] [--json]

            OPTIONS:
              --time-zone ZONE            An IANA time zone such as Europe/Bucharest: the site's days, validity defaults and every time shown.
              --retention-days N|default  Days after a pass ends before its visitor is anonymised, from 1 to 3650; default: the server's.
              --auto-checkout HH:MM|off   When visitors still inside are checked out, site-local (00:00 to 23:59); off: never.
              --json                      Print the API's answer: {id, name, timeZone, retentionDays, autoCheckoutAt}.
              -h, --help                  Show help information.

            """#),
        (["scanner-token"], #"""
            OVERVIEW: The live scanner tokens of your organization (OWNER/ADMIN): who made each, at which checkpoint, when it was last used; revoke one and its kiosk is signed out.

            USAGE: gatepass scanner-token <subcommand> [options]

            OPTIONS:
              -h, --help  Show help information.

            SUBCOMMANDS:
              list    The live scanner tokens, kiosks included, with their last use.
              revoke  Revoke a scanner token: its kiosk's next request is refused (REVOKED).

            """#),
        (["scanner-token", "list"], #"""
            OVERVIEW: The live scanner tokens of your organization, newest first (OWNER/ADMIN): people's and enrolled kiosks', with their checkpoint and last use (recorded at most once a minute).

            USAGE: gatepass scanner-token list [--limit N] [--json]

            OPTIONS:
              --limit N   How many tokens (default 50, at most 500).
              --json      Print the API's page: {"items": [{id, checkpointId, createdBy, createdAt, expiresAt, lastUsedAt, kioskName}], "nextCursor"}.
              -h, --help  Show help information.

            """#),
        (["scanner-token", "revoke"], #"""
            OVERVIEW: Revoke a scanner token (OWNER/ADMIN): its next request is refused with REVOKED and its kiosk shows that it was signed out and waits for a new enrolment. The person's login is untouched (to stop it too, disable the user).

            USAGE: gatepass scanner-token revoke ID

            ARGUMENTS:
              ID  The token's id (see gatepass scanner-token list).

            OPTIONS:
              -h, --help  Show help information.

            """#),
        (["login"], #"""
            OVERVIEW: Log in with a one-time code sent to your email. Without --otp, sends the code and asks for it. State lives in $GATEPASS_STATE_DIR (default $XDG_STATE_HOME/gatepass or ~/.local/state/gatepass).

            USAGE: gatepass login [--server URL] --email E [--otp CODE] [--force] [--ca-file FILE] [--json]

            OPTIONS:
              --server URL    The Gate Pass server (default $GATEPASS_SERVER, else the last one used).
              --email E       Your email.
              --otp CODE      Verify a code already sent instead of sending one.
              --force         Log in even if another user's queued entries would be deleted.
              --ca-file FILE  Trust the CA certificates in this PEM file (kept for later commands).
              --json          Print the server's JSON answer instead of text.
              -h, --help      Show help information.

            """#),
        (["logout"], #"""
            OVERVIEW: Unregister this device's push token, then end the session. Queued entries stay.

            USAGE: gatepass logout

            OPTIONS:
              -h, --help  Show help information.

            """#),
        (["whoami"], #"""
            OVERVIEW: Show who is logged in, on which server, and the device token.

            USAGE: gatepass whoami [--json]

            OPTIONS:
              --json      Print the server's JSON answer instead of text.
              -h, --help  Show help information.

            """#),
        (["approvals"], #"""
            OVERVIEW: List visitors awaiting approval, newest request first (from the cache when offline).

            USAGE: gatepass approvals [--json]

            OPTIONS:
              --json      Print the server's JSON answer instead of text.
              -h, --help  Show help information.

            """#),
        (["approve"], #"""
            OVERVIEW: Approve a visitor awaiting approval. Queued when the server is unreachable.

            USAGE: gatepass approve ID [--note TEXT] [--json]

            ARGUMENTS:
              ID  The visitor's id or short id.

            OPTIONS:
              --note TEXT  A note kept with the decision.
              --json       Print the server's JSON answer instead of text.
              -h, --help   Show help information.

            """#),
        (["reject"], #"""
            OVERVIEW: Reject a visitor awaiting approval. Queued when the server is unreachable.

            USAGE: gatepass reject ID [--note TEXT] [--json]

            ARGUMENTS:
              ID  The visitor's id or short id.

            OPTIONS:
              --note TEXT  A note kept with the decision.
              --json       Print the server's JSON answer instead of text.
              -h, --help   Show help information.

            """#),
        (["checkin"], #"""
            OVERVIEW: Check a pass in by short id or raw QR text. Queued when the server is unreachable; a signed (GP2) pass is then checked with the pass keys fetched at login, as an offline kiosk does, and a forgery is refused, not queued. Exit status: 0 CHECKED_IN, ALREADY_CHECKED_IN, AWAITING_APPROVAL or queued; 3 a refusal decided at the gate (BLOCKED, CANCELLED, REJECTED, CHECKED_OUT, EXPIRED, NOT_YET_VALID, APPROVAL_REQUIRED); 1 an unknown pass, a text that is not a pass, a forged signature or another error; 2 a usage error.

            USAGE: gatepass checkin CODE [--confirm-approval] [--json]

            ARGUMENTS:
              CODE  The pass's short id, or the raw text of its QR code.

            OPTIONS:
              --confirm-approval  Request approval when the pass needs it.
              --json              Print the server's JSON answer instead of text.
              -h, --help          Show help information.

            """#),
        (["checkout"], #"""
            OVERVIEW: Check a visitor out by short id or raw QR text. Queued when the server is unreachable. Exit status: 0 CHECKED_OUT or queued; 1 NOT_CHECKED_IN (the visitor is not inside) or another error; 2 a usage error.

            USAGE: gatepass checkout CODE [--json]

            ARGUMENTS:
              CODE  The visitor's short id, or the raw text of their pass's QR code.

            OPTIONS:
              --json      Print the server's JSON answer instead of text.
              -h, --help  Show help information.

            """#),
        (["lookup"], #"""
            OVERVIEW: Find visitors by short id, name, phone or email (at most 20).

            USAGE: gatepass lookup QUERY [--json]

            ARGUMENTS:
              QUERY  A short id, or part of a name, phone number or email.

            OPTIONS:
              --json      Print the server's JSON answer instead of text.
              -h, --help  Show help information.

            """#),
        (["walk-in"], #"""
            OVERVIEW: Register a visitor who arrived without a pass; they wait for approval. Queued when the server is unreachable. Exit status: 0 AWAITING_APPROVAL or queued; 3 BLOCKED; 1 an error; 2 a usage error.

            USAGE: gatepass walk-in --name NAME [--phone PHONE] [--email EMAIL] [--company TEXT] [--purpose TEXT] [--host NAME] [--json]

            OPTIONS:
              --name NAME     The visitor's full name.
              --phone PHONE   The visitor's phone number.
              --email EMAIL   The visitor's email.
              --company TEXT  The visitor's company.
              --purpose TEXT  The purpose of the visit.
              --host NAME     Whom they visit.
              --json          Print the server's JSON answer instead of text.
              -h, --help      Show help information.

            """#),
        (["stats"], #"""
            OVERVIEW: Today's counters: checked in, checked out, awaiting approval, expected, on site.

            USAGE: gatepass stats [--json]

            OPTIONS:
              --json      Print the server's JSON answer instead of text.
              -h, --help  Show help information.

            """#),
        (["history"], #"""
            OVERVIEW: The scan history, newest first (OWNER/ADMIN: the organization; scanners: theirs).

            USAGE: gatepass history [--limit N] [--result R] [--from TIME] [--to TIME] [--csv | --json]

            OPTIONS:
              --limit N    How many scans (default 50, at most 500).
              --result R   Only scans with this result, e.g. CHECKED_IN.
              --from TIME  Only scans at or after this time: 2026-12-06 09:00 in the site's time zone, or RFC 3339.
              --to TIME    Only scans at or before this time (as --from).
              --csv        Print the CSV export (OWNER/ADMIN).
              --json       Print the server's JSON answer instead of text.
              -h, --help   Show help information.

            """#),
        (["outbox"], #"""
            OVERVIEW: Inspect and replay mutations made while the server was unreachable.

            USAGE: gatepass outbox list|dead|drain|retry ID|watch [--interval S] [--json]

            ARGUMENTS:
              ACTION  list, dead, drain, retry or watch (see SUBCOMMANDS).
              ID      With retry: the entry's number, from list or dead.

            OPTIONS:
              --interval S  With watch: seconds between drains (default 30).
              --json        Print the server's JSON answer instead of text.
              -h, --help    Show help information.

            SUBCOMMANDS:
              list      Queued entries, oldest first.
              dead      Entries the server refused for good, with its error.
              drain     Replay now; exits 0 when the queue is empty or only waits for backoff.
              retry ID  Put a dead or waiting entry back in the queue, due now.
              watch     Keep draining until SIGTERM/SIGINT: every interval, and at once when the server comes back.

            """#),
        (["events"], #"""
            OVERVIEW: Follow the live events of the logged-in user (or, with --scanner, of this device's checkpoint) until Ctrl-C. Resumes after the last event this device saw; reconnects by itself.

            USAGE: gatepass events [--scanner] [--json]

            OPTIONS:
              --scanner   Follow the scanner token's checkpoint instead of the user.
              --json      Print each event as one JSON object: {id, kind, data}.
              -h, --help  Show help information.

            """#),
        (["console"], #"""
            OVERVIEW: The full-screen console: log in with a one-time code; Approvals (live queue, approve or reject with a note), Scan (camera or typed short id, lookup, walk-in, live gate counters), Visitors (today's and upcoming, register, cancel, check out, invitation, the pass on screen; owners and admins, and hosts for their own visitors), On site (the evacuation roll, live, export; owners and admins), History (scan log with filters and per-gate counts, hourly chart, CSV export; owners and admins), More (profile, device, outbox, logout), Blocklist (add with expiry, remove, recent matches), Users (add, change, disable) and Audit (filters, open the visitor) for owners and admins; a security alert pops up over any tab with a bell. Needs a terminal; scripts use the other commands. The Scan tab reads passes from the frame source given, if any.

            USAGE: gatepass console [--server URL] [--device DEV [--size WxH] [--fps N] | --image FILE… | --dir DIR | --video FILE.y4m]

            OPTIONS:
              --server URL      The server to log in to (default: the last one used, else $GATEPASS_SERVER).
              --device DEV      A V4L2 camera (/dev/video0, or a stable name under /dev/v4l/by-id/), read until stopped; it is reopened with backoff when unplugged and plugged back in.
              --image FILE…     One or more PGM, PNG or JPEG files, read once in order (--image A B and --image A --image B both work).
              --dir DIR         A folder's images in name order, read once (hidden files and subfolders are skipped).
              --video FILE.y4m  A YUV4MPEG2 recording of a camera, read once; only the luma plane is used.
              --size WxH        With --device: the frame size to ask for, from 16x16 to 4096x4096 (default 640x480); the driver may pick the nearest it has.
              --fps N           With --device: the frame rate to ask for, from 1 to 120 (default 30).
              -h, --help        Show help information.

            """#),
        (["kiosk"], #"""
            OVERVIEW: Run the unattended gate: read passes from a camera (or images, a folder, a Y4M recording), check each new one in, and print one decision line per pass. Runs until SIGTERM or Ctrl-C; losing the camera or the server never ends it.

            USAGE: gatepass kiosk [--server URL] (--device DEV [--size WxH] [--fps N] | --image FILE… | --dir DIR | --video FILE.y4m) [--config FILE] [--cooldown S] [--offline-policy deny|cached-only|signed] [--offline-after-ms MS] [--json]

            OPTIONS:
              --server URL             The server the kiosk is logged in to or enrolled on (checked against it; default: that one).
              --device DEV             A V4L2 camera (/dev/video0, or a stable name under /dev/v4l/by-id/), read until stopped; it is reopened with backoff when unplugged and plugged back in.
              --image FILE…            One or more PGM, PNG or JPEG files, read once in order (--image A B and --image A --image B both work).
              --dir DIR                A folder's images in name order, read once (hidden files and subfolders are skipped).
              --video FILE.y4m         A YUV4MPEG2 recording of a camera, read once; only the luma plane is used.
              --size WxH               With --device: the frame size to ask for, from 16x16 to 4096x4096 (default 640x480); the driver may pick the nearest it has.
              --fps N                  With --device: the frame rate to ask for, from 1 to 120 (default 30).
              --config FILE            A JSON configuration file (see Config/kiosk.json: cooldown, offlinePolicy, offlineAfterMs); flags override it.
              --cooldown S             A pass counts again only after this many seconds out of view (default 3).
              --offline-policy POLICY  What the kiosk decides by itself while the server does not answer: deny (nothing), cached-only (passes in its cache, by the server's rules), signed (those, and signed GP2 passes by their signature; default).
              --offline-after-ms MS    Decide offline when the server has not answered a scan within this many milliseconds (default 1500).
              --json                   Print one JSON object per decision instead of the line.
              -h, --help               Show help information.

            SUBCOMMANDS:
              enrol       Enrol this device as a gate's kiosk with a one-time code (then no login is needed).
              enrol-code  Make a one-time enrolment code for a kiosk (OWNER/ADMIN).
              roll        Print the evacuation roll from this kiosk's pass cache (works offline).

            An enrolled kiosk (gatepass kiosk enrol CODE --server URL) runs with its own credential, bound to the gate; otherwise the kiosk runs as the logged-in user. A kiosk whose token an admin revokes, or whose checkpoint is retired, says so, stops using the network and waits for a new enrolment. The kiosk keeps today's passes, the pass keys and the on-site list in its state file (refreshed every 30 s); when the server does not answer a scan in time it decides by itself as --offline-policy allows, says "offline" and the cache's age on the decision line, and sends the scan with its decision when the server is back.

            """#),
        (["kiosk", "enrol"], #"""
            OVERVIEW: Enrol this device as a gate's kiosk with a one-time code: the credential (bound to the gate, not to a person: no logout or disable of a user stops it) is kept in the state file, and gatepass kiosk then runs without a login. State lives in $GATEPASS_STATE_DIR (default $XDG_STATE_HOME/gatepass or ~/.local/state/gatepass).

            USAGE: gatepass kiosk enrol CODE --server URL

            ARGUMENTS:
              CODE  The one-time code an admin made with gatepass kiosk enrol-code.

            OPTIONS:
              --server URL  The Gate Pass server, e.g. https://gatepass.example.com.
              -h, --help    Show help information.

            """#),
        (["kiosk", "enrol-code"], #"""
            OVERVIEW: Make a one-time enrolment code for a kiosk at a checkpoint (OWNER/ADMIN). It works once, for 10 minutes: on the kiosk, run gatepass kiosk enrol CODE --server URL.

            USAGE: gatepass kiosk enrol-code --checkpoint ID --name N [--json]

            OPTIONS:
              --checkpoint ID  The checkpoint the kiosk will stand at (see gatepass checkpoint list).
              --name N         The kiosk's name, as the token list shows it.
              --json           Print {id, enrolmentCode, expiresAt}.
              -h, --help       Show help information.

            """#),
        (["kiosk", "roll"], #"""
            OVERVIEW: Print the evacuation roll (who is checked in) without asking the server: the server's last roll, kept with this kiosk's pass cache, with the people this kiosk admitted (online or offline) and checked out since. The first line says how many and how old the server's part is, then one person a line, with the time in (in this device's time zone, named). State lives in $GATEPASS_STATE_DIR (default $XDG_STATE_HOME/gatepass or ~/.local/state/gatepass).

            USAGE: gatepass kiosk roll [--json]

            OPTIONS:
              --json      Print {syncedAt, server, admittedHere, checkedOutHere, visitors: [{shortId, name, inSince, admittedHere, visitor}]} instead (visitor absent for a pass admitted here by its signature alone).
              -h, --help  Show help information.

            """#),
        (["push-test"], #"""
            OVERVIEW: Send push.test to every registered device token (or one) and report, per token, whether a connected event stream received it.

            USAGE: gatepass push-test [--db PATH|URL | --server URL] [--token T] [--wait SECONDS] [--json]

            OPTIONS:
              --db, --database PATH|URL  Work on this database. A server running on the same database delivers the tests to its streams. A SQLite file (PATH or sqlite:PATH) or postgres://USER@HOST:PORT/DB (its password from PGPASSWORD or ~/.pgpass, never the URL).
              --server URL               Ask this server (default: the one this device is logged in to, as an OWNER or ADMIN).
              --token T                  Only this device token.
              --wait SECONDS             How long to wait for the deliveries (default 3, at most 30).
              --json                     Print the outcomes as JSON.
              -h, --help                 Show help information.

            """#),
        (["push-deliveries"], #"""
            OVERVIEW: List the push deliveries of one device token, newest first: pending, delivered or failed.

            USAGE: gatepass push-deliveries --token T [--db PATH|URL | --server URL] [--limit N] [--json]

            OPTIONS:
              --token T                  The device token.
              --db, --database PATH|URL  Read this database. A SQLite file (PATH or sqlite:PATH) or postgres://USER@HOST:PORT/DB (its password from PGPASSWORD or ~/.pgpass, never the URL).
              --server URL               Ask this server (default: the one this device is logged in to, as an OWNER or ADMIN).
              --limit N                  How many (default 50, at most 500).
              --json                     Print the deliveries as JSON.
              -h, --help                 Show help information.

            """#),
        (["scan"], #"""
            OVERVIEW: Read QR codes from image files, a folder of images or a Y4M recording, and print each newly seen code. Files that cannot be read are reported and make the exit status 1; a picture without a code prints nothing. Each --image file is scanned on its own (frame n is the nth file); a folder, a recording and a camera are one stream of frames. A camera's state changes are reported on stderr.

            USAGE: gatepass scan (--image FILE… | --dir DIR | --video FILE.y4m | --device DEV [--size WxH] [--fps N]) [--json]

            OPTIONS:
              --device DEV      A V4L2 camera (/dev/video0, or a stable name under /dev/v4l/by-id/), read until stopped; it is reopened with backoff when unplugged and plugged back in.
              --image FILE…     One or more PGM, PNG or JPEG files, read once in order (--image A B and --image A --image B both work).
              --dir DIR         A folder's images in name order, read once (hidden files and subfolders are skipped).
              --video FILE.y4m  A YUV4MPEG2 recording of a camera, read once; only the luma plane is used.
              --size WxH        With --device: the frame size to ask for, from 16x16 to 4096x4096 (default 640x480); the driver may pick the nearest it has.
              --fps N           With --device: the frame rate to ask for, from 1 to 120 (default 30).
              --json            Print one JSON object per code: {"format", "frame", "ms", "text"}, ms being that frame's decode time.
              -h, --help        Show help information.

            """#),
        (["visitor"], #"""
            OVERVIEW: The office's work with visitors (OWNER/ADMIN): register them before they come, find them, change or cancel a visit, check them out, mail the invitation, save the pass. Every ID is the visitor's id or short id.

            USAGE: gatepass visitor <subcommand> [options]

            OPTIONS:
              -h, --help  Show help information.

            SUBCOMMANDS:
              add       Register an expected visitor (with --invite, mail them the invitation).
              list      List visitors, newest first: by status, day or search text.
              show      Show one visitor.
              edit      Change a visitor's details or reschedule the visit (a new window re-issues the pass).
              cancel    Cancel a visit; the pass stops working.
              checkout  Check a visitor out from the office.
              invite    Send, or send again, the invitation mail with the pass.
              pass      Save a visitor's pass as a PNG (printable) or SVG file.

            """#),
        (["visitor", "add"], #"""
            OVERVIEW: Register an expected visitor (OWNER/ADMIN) and print the visitor, with the short id the gate takes.

            USAGE: gatepass visitor add --name NAME [--email EMAIL] [--phone PHONE] [--company TEXT] [--purpose TEXT] [--host NAME] [--host-email EMAIL] [--approver EMAIL] [--requires-approval] [--valid-from TIME] [--valid-until TIME] [--invite] [--confirm-blocked] [--json]

            OPTIONS:
              --name NAME          The visitor's full name.
              --email EMAIL        The visitor's email.
              --phone PHONE        The visitor's phone number.
              --company TEXT       The visitor's company.
              --purpose TEXT       The purpose of the visit.
              --host NAME          Whom they visit.
              --host-email EMAIL   The host's email: told when the visitor arrives.
              --approver EMAIL     The APPROVER who decides, by email (looked up in the organization's users).
              --requires-approval  An approver must admit the visitor at the gate.
              --valid-from TIME    When the pass starts.
              --valid-until TIME   When the pass ends.
              --invite             Queue the invitation mail (pass attached, pass page linked) with the registration; needs --email.
              --confirm-blocked    Save even if the visitor matches the blocklist (without it the server refuses a match and saves nothing).
              --json               Print the visitor as the API shapes it.
              -h, --help           Show help information.

            Without --valid-from the pass starts at the start of today; without --valid-until it ends at the end of the day it starts. Times are site-local, in the organization's time zone (GET /api/organization): 2026-12-02 09:00 or 2026-12-02T09:00, seconds optional; an RFC 3339 time (2026-12-02T07:00:00Z, or with an offset) is taken as it is. A local time the clocks skip is refused; one they pass twice is its first occurrence.

            """#),
        (["visitor", "list"], #"""
            OVERVIEW: List visitors, newest registration first, with their validity in site time (OWNER/ADMIN).

            USAGE: gatepass visitor list [--status S] [--day DAY | --from DAY --to DAY] [--search TEXT] [--limit N] [--json]

            OPTIONS:
              --status S     Only visitors in this status: EXPECTED, AWAITING_APPROVAL, APPROVED, REJECTED, CHECKED_IN, CHECKED_OUT or CANCELLED.
              --day DAY      Only visitors whose pass is valid on this day (site time): a date, today or tomorrow.
              --from DAY     Only visitors whose pass is valid on or after this day.
              --to DAY       Only visitors whose pass is valid on or before this day.
              --search TEXT  Only visitors whose name, email, phone, company or short id contains this text (any case).
              --limit N      How many visitors (default 50, at most 500).
              --json         Print the API's page: {"items": [Visitor], "nextCursor"}.
              -h, --help     Show help information.

            A DAY is a date (2026-12-02), today or tomorrow: a calendar day in the organization's time zone. A visitor is listed when the pass is valid at any moment of it. --from or --to alone leaves the other end open.

            """#),
        (["visitor", "show"], #"""
            OVERVIEW: Show one visitor: every field, times in site time.

            USAGE: gatepass visitor show ID [--json]

            ARGUMENTS:
              ID  The visitor's id or short id.

            OPTIONS:
              --json      Print the visitor as the API shapes it.
              -h, --help  Show help information.

            """#),
        (["visitor", "edit"], #"""
            OVERVIEW: Change an EXPECTED, APPROVED or AWAITING_APPROVAL visitor: only the options given change. A new validity window re-issues the pass (the old pass and pass page stop working).

            USAGE: gatepass visitor edit ID [--name NAME] [--email EMAIL] [--clear-email] [--phone PHONE] [--clear-phone] [--company TEXT] [--clear-company] [--purpose TEXT] [--clear-purpose] [--host NAME] [--clear-host] [--host-email EMAIL] [--clear-host-email] [--approver EMAIL] [--clear-approver] [--requires-approval] [--no-requires-approval] [--valid-from TIME] [--valid-until TIME] [--confirm-blocked] [--json]

            ARGUMENTS:
              ID  The visitor's id or short id.

            OPTIONS:
              --name NAME             The visitor's full name.
              --email EMAIL           The visitor's email.
              --clear-email           Remove the visitor's email.
              --phone PHONE           The visitor's phone number.
              --clear-phone           Remove the phone number.
              --company TEXT          The visitor's company.
              --clear-company         Remove the company.
              --purpose TEXT          The purpose of the visit.
              --clear-purpose         Remove the purpose.
              --host NAME             Whom they visit.
              --clear-host            Remove the host's name.
              --host-email EMAIL      The host's email: told when the visitor arrives.
              --clear-host-email      Remove the host's email (nobody is told of the arrival).
              --approver EMAIL        The APPROVER who decides, by email (looked up in the organization's users).
              --clear-approver        Remove the assigned approver (any approver may decide).
              --requires-approval     An approver must admit the visitor at the gate.
              --no-requires-approval  The visitor no longer needs an approver at the gate.
              --valid-from TIME       When the pass starts.
              --valid-until TIME      When the pass ends.
              --confirm-blocked       Save even if the visitor matches the blocklist (without it the server refuses a match and saves nothing).
              --json                  Print the changed visitor as the API shapes it.
              -h, --help              Show help information.

            A --clear-… option removes that field (sends null); it cannot be combined with the option it clears. Times are site-local, in the organization's time zone (GET /api/organization): 2026-12-02 09:00 or 2026-12-02T09:00, seconds optional; an RFC 3339 time (2026-12-02T07:00:00Z, or with an offset) is taken as it is. A local time the clocks skip is refused; one they pass twice is its first occurrence.

            """#),
        (["visitor", "cancel"], #"""
            OVERVIEW: Cancel a visit: the pass and pass page stop working at once. A visitor already checked in or out cannot be cancelled.

            USAGE: gatepass visitor cancel ID [--json]

            ARGUMENTS:
              ID  The visitor's id or short id.

            OPTIONS:
              --json      Print the visitor as the API shapes it.
              -h, --help  Show help information.

            """#),
        (["visitor", "checkout"], #"""
            OVERVIEW: Check a visitor out from the office (POST /api/visitors/ID/checkout): for a visitor who left without passing the gate's scanner. Only a CHECKED_IN visitor can be checked out.

            USAGE: gatepass visitor checkout ID [--json]

            ARGUMENTS:
              ID  The visitor's id or short id.

            OPTIONS:
              --json      Print the visitor as the API shapes it.
              -h, --help  Show help information.

            """#),
        (["visitor", "invite"], #"""
            OVERVIEW: Mail the visitor the invitation (the pass as a PNG, the pass page's link, a calendar entry). Sending it again issues a new pass page; the old link stops working.

            USAGE: gatepass visitor invite ID [--json]

            ARGUMENTS:
              ID  The visitor's id or short id.

            OPTIONS:
              --json      Print the server's answer: {"queued", "passURL"}.
              -h, --help  Show help information.

            """#),
        (["visitor", "pass"], #"""
            OVERVIEW: Save a visitor's pass to a file. The file holds personal data: it is written with mode 0600, through a temporary file renamed into place (an existing file is replaced whole, never left half written), and never through a symbolic link.

            USAGE: gatepass visitor pass ID (--png FILE | --svg FILE)

            ARGUMENTS:
              ID  The visitor's id or short id.

            OPTIONS:
              --png FILE  Save the printable pass (PNG, A6 at 300 dpi) here.
              --svg FILE  Save the pass as SVG here.
              -h, --help  Show help information.

            """#),
        (["mail"], #"""
            OVERVIEW: The server's outgoing mail (OWNER/ADMIN): the log of what was queued, sent or given up, and a test mail to check the SMTP settings.

            USAGE: gatepass mail <subcommand> [options]

            OPTIONS:
              -h, --help  Show help information.

            SUBCOMMANDS:
              list  The mail log, newest first: what was queued, sent or given up, and why.
              test  Queue a test mail, to check the server's SMTP settings.

            """#),
        (["mail", "list"], #"""
            OVERVIEW: The server's mail log, newest first: login codes, invitations, arrival and approval notices, tests; queued, sent or failed, with the last error. Mail bodies are never shown.

            USAGE: gatepass mail list [--limit N] [--json]

            OPTIONS:
              --limit N   How many mails (default 50, at most 500).
              --json      Print the API's page: {"items": [{id, kind, to, status, attempts, lastError, createdAt, sentAt}], "nextCursor"}.
              -h, --help  Show help information.

            """#),
        (["mail", "test"], #"""
            OVERVIEW: Queue a test mail through the server's mail settings; gatepass mail list then shows whether it was sent or why not.

            USAGE: gatepass mail test --to EMAIL [--json]

            OPTIONS:
              --to EMAIL  Where the test mail goes.
              --json      Print the server's answer: {"queued": true}.
              -h, --help  Show help information.

            """#),
        (["blocklist"], #"""
            OVERVIEW: The organization's blocklist (OWNER/ADMIN): people refused at every gate, by name (and company), email or phone. A blocked check-in or walk-in answers BLOCKED, without the reason, and owners and admins get a security alert.

            USAGE: gatepass blocklist <subcommand> [options]

            OPTIONS:
              -h, --help  Show help information.

            SUBCOMMANDS:
              list    The blocklist, newest entry first, expired entries included.
              add     Block a person at every gate: by name (and company), email or phone.
              remove  Remove an entry: the person is no longer blocked.

            """#),
        (["blocklist", "list"], #"""
            OVERVIEW: The organization's blocklist, newest entry first: who (name and company, email, phone), until when (site time), the reason and the entry's id. Expired entries are listed too; they block nobody.

            USAGE: gatepass blocklist list [--limit N] [--json]

            OPTIONS:
              --limit N   How many entries (default 50, at most 500).
              --json      Print the API's page: {"items": [{id, name, email, phone, company, reason, expiresAt, createdAt, createdBy}], "nextCursor"}.
              -h, --help  Show help information.

            """#),
        (["blocklist", "add"], #"""
            OVERVIEW: Block a person at every gate of the organization: from now on their check-ins and walk-ins answer BLOCKED, and owners and admins get a security alert. Give at least one of --name, --email and --phone; any one that matches is enough.

            USAGE: gatepass blocklist add [--name NAME] [--email EMAIL] [--phone PHONE] [--company TEXT] --reason TEXT [--expires TIME] [--json]

            OPTIONS:
              --name NAME     The person's full name; matched ignoring case, accents and spacing.
              --email EMAIL   Their email; matched exactly, in any case.
              --phone PHONE   Their phone number; matched by its digits alone.
              --company TEXT  Narrows --name: only visitors of this company match the name.
              --reason TEXT   Why (shown to owners and admins only, never at the gate).
              --expires TIME  When the entry stops blocking (default: never).
              --json          Print the entry as the API shapes it.
              -h, --help      Show help information.

            Times are site-local, in the organization's time zone (GET /api/organization): 2026-12-02 09:00 or 2026-12-02T09:00, seconds optional; an RFC 3339 time (2026-12-02T07:00:00Z, or with an offset) is taken as it is. A local time the clocks skip is refused; one they pass twice is its first occurrence.

            """#),
        (["blocklist", "remove"], #"""
            OVERVIEW: Remove a blocklist entry: the person it named is no longer blocked at any gate.

            USAGE: gatepass blocklist remove ID

            ARGUMENTS:
              ID  The entry's id, as gatepass blocklist list shows it.

            OPTIONS:
              -h, --help  Show help information.

            """#),
        (["keys"], #"""
            OVERVIEW: The Ed25519 keys that sign each organization's passes (GP2), kept in <db>.pass-keys (mode 0600) beside the database. The server may be running: it sees a change within a second.

            USAGE: gatepass keys <subcommand> [options]

            OPTIONS:
              -h, --help  Show help information.

            SUBCOMMANDS:
              list    List the pass keys of each organization: id, purpose, made, retired, revoked.
              rotate  Retire an organization's current pass keys and make new ones (old passes stay valid).
              revoke  Revoke a leaked pass key: its passes are refused everywhere and re-issued.

            """#),
        (["keys", "list"], #"""
            OVERVIEW: List the pass keys of each organization of a database file (public facts only: no private key is printed).

            USAGE: gatepass keys list --db PATH|URL [--keys-file FILE]

            OPTIONS:
              --db, --database PATH|URL  The database (its organizations). A SQLite file (PATH or sqlite:PATH) or postgres://USER@HOST:PORT/DB (its password from PGPASSWORD or ~/.pgpass, never the URL).
              --keys-file FILE           The pass keys file (default <db>.pass-keys, as gatepass serve uses).
              -h, --help                 Show help information.

            """#),
        (["keys", "rotate"], #"""
            OVERVIEW: Retire an organization's current pass keys and make new ones. Passes drawn from now on carry the new key; passes signed with a retired key stay valid until they end, online and at offline kiosks.

            USAGE: gatepass keys rotate --db PATH|URL [--keys-file FILE] [--organization NAME] [--purpose P]

            OPTIONS:
              --db, --database PATH|URL  The database (its organizations). A SQLite file (PATH or sqlite:PATH) or postgres://USER@HOST:PORT/DB (its password from PGPASSWORD or ~/.pgpass, never the URL).
              --keys-file FILE           The pass keys file (default <db>.pass-keys, as gatepass serve uses).
              --organization NAME        The organization's name (needed when the database has more than one).
              --purpose P                Only the key of this purpose: admit or approval (default both).
              -h, --help                 Show help information.

            """#),
        (["keys", "revoke"], #"""
            OVERVIEW: Revoke a pass key that leaked: every pass it signed is refused, online and at offline kiosks once they sync. A current key is replaced by a new one; the server re-issues its passes and re-sends their invitations within a few seconds (at its next start if it is not running).

            USAGE: gatepass keys revoke KEY --db PATH|URL [--keys-file FILE]

            ARGUMENTS:
              KEY  The key's id, as gatepass keys list shows it.

            OPTIONS:
              --db, --database PATH|URL  The database (its organizations). A SQLite file (PATH or sqlite:PATH) or postgres://USER@HOST:PORT/DB (its password from PGPASSWORD or ~/.pgpass, never the URL).
              --keys-file FILE           The pass keys file (default <db>.pass-keys, as gatepass serve uses).
              -h, --help                 Show help information.

            """#),
        (["audit"], #"""
            OVERVIEW: The audit log: read it through the server (OWNER/ADMIN), or check its chain on a database file.

            USAGE: gatepass audit <subcommand> [options]

            OPTIONS:
              -h, --help  Show help information.

            SUBCOMMANDS:
              list    Read the audit log, newest first: who changed what, when (OWNER/ADMIN).
              verify  Check the audit log's chain; exit 1 naming the first altered, inserted or removed entry.

            """#),
        (["audit", "verify"], #"""
            OVERVIEW: Walk the audit log of a database file from its first entry: every entry's values must hash to what its link covers, every link must follow from the one before (HMAC under the key from the server's secret), an erased entry must be of an action retention erases, hold no values and be listed by a later entry that records the erasure, and the log must reach the newest entry recorded outside the database (<db>.audit-head, signed with the same key), which must be there once the log has entries. Exits 0 when the log is intact, 1 naming the first entry that was altered, inserted or removed, or what is wrong with the head.

            USAGE: gatepass audit verify --db PATH|URL [--secret-file FILE]

            OPTIONS:
              --db, --database PATH|URL  The database. A SQLite file (PATH or sqlite:PATH) or postgres://USER@HOST:PORT/DB (its password from PGPASSWORD or ~/.pgpass, never the URL).
              --secret-file FILE         The server's secret, which holds the audit key (default <db>.secret; required with a postgres:// database).
              -h, --help                 Show help information.

            """#),
        (["audit", "list"], #"""
            OVERVIEW: The audit log of your organization, newest first (OWNER/ADMIN): when (in the site's time zone, named on the first line), who, what and about whom, by name where the server lets you read it.

            USAGE: gatepass audit list [--from TIME] [--to TIME] [--actor WHO] [--action A] [--entity-id ID] [--limit N] [--csv | --json]

            OPTIONS:
              --from TIME     Only entries at or after this time: 2026-12-06 09:00 in the site's time zone, or RFC 3339.
              --to TIME       Only entries at or before this time (as --from).
              --actor WHO     Only entries by this actor: a user's email or id, a kiosk's id, system (retention, automatic check-out), kiosk or user (every actor of that kind).
              --action A      Only entries of this action, e.g. visitor.checkin.
              --entity-id ID  Only entries about this visitor, user, checkpoint or other entity.
              --limit N       How many entries (default 50, at most 500).
              --csv           Print the server's CSV export instead (UTC times, ids; the export is itself audited).
              --json          Print the API's page: {"items": [{id, at, actorKind, actorId, action, entity, entityId, before, after}], "nextCursor"}.
              -h, --help      Show help information.

            A TIME without an offset (2026-12-06 09:00, 2026-12-06T09:00:05) is read in the organization's time zone; one with an offset or Z is taken as it is.

            """#),
        (["admin"], #"""
            OVERVIEW: The site's data governance on a database file (the server may be running).

            USAGE: gatepass admin <subcommand> [options]

            OPTIONS:
              -h, --help  Show help information.

            SUBCOMMANDS:
              retention  Run retention now on a database file (--dry-run: count only).

            """#),
        (["admin", "retention"], #"""
            OVERVIEW: Run retention now on a database file, for every organization, as the server's daily run does at 03:30 site time: visitors whose pass ended more than the organization's retentionDays ago are anonymised (name "(anonymised)", contact details, host, purpose and decision note erased; statuses, times and counts kept), with their scans' raw text, event snapshots, mail log rows, stored answers and audit values. Prints one line per organization. A real run is audited as retention.run by system.

            USAGE: gatepass admin retention --db PATH|URL [--dry-run] [--secret-file FILE]

            OPTIONS:
              --db, --database PATH|URL  The database. A SQLite file (PATH or sqlite:PATH) or postgres://USER@HOST:PORT/DB (its password from PGPASSWORD or ~/.pgpass, never the URL).
              --dry-run                  Count what the run would anonymise; change nothing.
              --secret-file FILE         The server's secret, which holds the audit key (default <db>.secret; required with a postgres:// database).
              -h, --help                 Show help information.

            """#),
        (["db"], #"""
            OVERVIEW: The site's database as a whole: copy a SQLite database into an empty PostgreSQL database and verify it, or back up a SQLite file while the server runs.

            USAGE: gatepass db <subcommand> [options]

            OPTIONS:
              -h, --help  Show help information.

            SUBCOMMANDS:
              copy    Copy a SQLite database into an empty PostgreSQL database and verify the copy.
              backup  Back up a SQLite database file while the server may be writing it.

            """#),
        (["db", "copy"], #"""
            OVERVIEW: Copy a site's SQLite database into an empty PostgreSQL database, in one transaction: every table, every row with its ids, the sequences continued after them. Before the commit each table's row count and SHA-256 content checksum are compared on both sides; any difference rolls everything back. Then the audit head goes beside the secret (gatepass.audit-head, unless one is there) and the audit chain is verified on PostgreSQL. Stop the server first: what it writes during the copy is not in it.

            USAGE: gatepass db copy --from sqlite:PATH --to URL [--secret-file FILE]

            OPTIONS:
              --from sqlite:PATH  The site's SQLite database file.
              --to URL            An empty PostgreSQL database, postgres://USER@HOST:PORT/DATABASE (the password from PGPASSWORD or a passfile).
              --secret-file FILE  The server's secret, which holds the audit key (default <db>.secret; required with a postgres:// database).
              -h, --help          Show help information.

            """#),
        (["db", "backup"], #"""
            OVERVIEW: Back up a SQLite database file through SQLite's online backup API: a consistent copy even while a server writes it, made private (0600) from its first byte. The copy is then opened and checked (PRAGMA quick_check), and its page count and each table's rows are printed. Back up the state files beside it too (<db>.secret, <db>.pass-keys, <db>.audit-head). A PostgreSQL database is backed up with pg_dump.

            USAGE: gatepass db backup --db PATH --to FILE

            OPTIONS:
              --db PATH   The SQLite database file (the server may be running).
              --to FILE   The backup file to create (mode 0600); an existing file is refused.
              -h, --help  Show help information.

            """#),
    ]

    @Test func everyCommandIsPinned() {
        // `serve` is pinned in HelpTests.serveHelpIsPinned.
        let pinned = Set(Self.cases.map { $0.0.joined(separator: " ") } + ["serve"])
        // A group (`visitor`) is pinned, and so is each of its subcommands (`visitor add`).
        let commands = GatePassCLI.subcommands.flatMap { command in [command.name] + command.members.map { "\(command.name) \($0.name)" } }
        #expect(pinned == Set(commands))
    }

    @Test(arguments: cases)
    func helpIsPinned(arguments: [String], expected: String) {
        let terminal = RecordingTerminal()
        #expect(GatePassCLI.main(["gatepass"] + arguments + ["--help"], terminal: terminal, environment: [:]) == 0)
        #expect(terminal.stdout == expected)
    }
}
