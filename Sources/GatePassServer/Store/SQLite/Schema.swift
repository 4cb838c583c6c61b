import SQLite

/// The server's schema, as numbered migrations applied at start.
/// Times are INTEGER milliseconds since 1970 (UTC); booleans are 0/1.
enum Schema {
    static let migrations: [Migration] = [
        Migration("0001-initial", """
        CREATE TABLE organizations (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            created_at INTEGER NOT NULL
        );
        CREATE TABLE users (
            id TEXT PRIMARY KEY,
            organization_id TEXT NOT NULL REFERENCES organizations(id),
            email TEXT NOT NULL UNIQUE,
            name TEXT NOT NULL,
            role TEXT NOT NULL CHECK (role IN ('OWNER', 'ADMIN', 'APPROVER', 'PLATFORM_ADMIN')),
            can_scan INTEGER NOT NULL DEFAULT 0,
            created_at INTEGER NOT NULL
        );
        CREATE INDEX users_organization ON users(organization_id);
        CREATE TABLE checkpoints (
            id TEXT PRIMARY KEY,
            organization_id TEXT NOT NULL REFERENCES organizations(id),
            name TEXT NOT NULL,
            is_default INTEGER NOT NULL DEFAULT 0,
            created_at INTEGER NOT NULL,
            UNIQUE (organization_id, name)
        );
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            user_id TEXT NOT NULL REFERENCES users(id),
            kind TEXT NOT NULL CHECK (kind IN ('login', 'scanner')),
            parent_session_id TEXT REFERENCES sessions(id),
            checkpoint_id TEXT REFERENCES checkpoints(id),
            created_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            revoked_at INTEGER
        );
        CREATE INDEX sessions_parent ON sessions(parent_session_id);
        CREATE INDEX sessions_expiry ON sessions(expires_at);
        CREATE TABLE otp_codes (
            email TEXT PRIMARY KEY,
            code_hmac BLOB NOT NULL,
            expires_at INTEGER NOT NULL,
            wrong_tries INTEGER NOT NULL DEFAULT 0,
            used INTEGER NOT NULL DEFAULT 0
        );
        CREATE TABLE otp_sends (
            email TEXT NOT NULL,
            sent_at INTEGER NOT NULL
        );
        CREATE INDEX otp_sends_email ON otp_sends(email, sent_at);
        CREATE TABLE visitors (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            organization_id TEXT NOT NULL REFERENCES organizations(id),
            short_id TEXT NOT NULL UNIQUE,
            name TEXT NOT NULL,
            email TEXT,
            phone TEXT,
            company TEXT,
            purpose TEXT,
            host_name TEXT,
            approver_id TEXT REFERENCES users(id),
            requires_approval INTEGER NOT NULL,
            walk_in INTEGER NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('EXPECTED', 'AWAITING_APPROVAL', 'APPROVED', 'REJECTED',
                                                   'CHECKED_IN', 'CHECKED_OUT', 'CANCELLED')),
            valid_from INTEGER NOT NULL,
            valid_until INTEGER NOT NULL,
            created_at INTEGER NOT NULL,
            approval_requested_at INTEGER,
            approval_checkpoint_id TEXT REFERENCES checkpoints(id),
            decided_at INTEGER,
            decided_by TEXT,
            decision_note TEXT,
            checked_in_at INTEGER,
            checked_out_at INTEGER,
            checkpoint_id TEXT REFERENCES checkpoints(id),
            change_seq INTEGER NOT NULL,
            search_text TEXT NOT NULL,
            lookup_text TEXT NOT NULL
        );
        CREATE INDEX visitors_newest ON visitors(organization_id, created_at DESC, seq DESC);
        -- Partial indexes for the two statuses that have hot lists (the approvals queue, the
        -- evacuation roll): a check-in of an expected pass touches neither's old entry, which
        -- keeps the pages a check-in dirties (and so the bytes each commit syncs) few.
        CREATE INDEX visitors_awaiting ON visitors(organization_id, approval_requested_at DESC, seq DESC)
            WHERE status = 'AWAITING_APPROVAL';
        CREATE INDEX visitors_on_site ON visitors(organization_id, checked_in_at DESC, seq DESC)
            WHERE status = 'CHECKED_IN';
        CREATE INDEX visitors_changes ON visitors(organization_id, change_seq);
        CREATE INDEX visitors_window ON visitors(organization_id, valid_until, valid_from);
        -- Only visitors who came (or left) are indexed: a check-in then adds an entry at the
        -- end instead of also deleting a NULL entry from a random page.
        CREATE INDEX visitors_checked_in ON visitors(organization_id, checked_in_at) WHERE checked_in_at IS NOT NULL;
        CREATE INDEX visitors_checked_out ON visitors(organization_id, checked_out_at) WHERE checked_out_at IS NOT NULL;
        CREATE INDEX visitors_email ON visitors(organization_id, email);
        CREATE INDEX visitors_phone ON visitors(organization_id, phone);
        CREATE INDEX visitors_approver ON visitors(approver_id);
        CREATE TABLE scans (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            organization_id TEXT NOT NULL REFERENCES organizations(id),
            short_id TEXT,
            raw TEXT NOT NULL,
            result TEXT NOT NULL,
            visitor_id TEXT REFERENCES visitors(id),
            checkpoint_id TEXT NOT NULL REFERENCES checkpoints(id),
            scanned_by TEXT NOT NULL REFERENCES users(id),
            scanned_at INTEGER NOT NULL,
            received_at INTEGER NOT NULL,
            offline INTEGER NOT NULL
        );
        CREATE INDEX scans_newest ON scans(organization_id, scanned_at DESC, seq DESC);
        CREATE INDEX scans_checkpoint ON scans(organization_id, checkpoint_id, scanned_at DESC, seq DESC);
        CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
        INSERT INTO counters (name, value) VALUES ('visitor_change', 0);
        CREATE TABLE devices (
            token TEXT PRIMARY KEY,
            platform TEXT NOT NULL,
            user_id TEXT NOT NULL REFERENCES users(id),
            created_at INTEGER NOT NULL,
            last_seen_at INTEGER NOT NULL
        );
        CREATE INDEX devices_user ON devices(user_id);
        CREATE TABLE idempotency_keys (
            scope TEXT NOT NULL,
            key TEXT NOT NULL,
            fingerprint BLOB NOT NULL,
            status INTEGER NOT NULL,
            headers TEXT NOT NULL,
            body BLOB NOT NULL,
            created_at INTEGER NOT NULL,
            PRIMARY KEY (scope, key)
        );
        CREATE INDEX idempotency_age ON idempotency_keys(created_at);
        """),
        // The event log is a transactional outbox: each row is written in the transaction of
        // the change it reports. Audience columns let the stream and the notification lists
        // filter without decoding `data`. Notification lists are derived from it (plus the
        // small marks table) so a change never writes one row per concerned user.
        Migration("0002-events", """
        CREATE TABLE events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            organization_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            visitor_id TEXT,
            -- The visitor's assigned approver when the event happened; NULL = unassigned.
            approver_id TEXT,
            -- Scanner tokens of this checkpoint receive the event.
            checkpoint_id TEXT,
            -- Set: the event is for this user only (notification.*, push.test).
            user_id TEXT,
            -- Set: only a stream that presented this device token receives it (push.test).
            device_token TEXT,
            -- Set: the event lands in the notification lists of its audience, with this title.
            title TEXT,
            data TEXT NOT NULL,
            created_at INTEGER NOT NULL
        );
        CREATE INDEX events_organization ON events(organization_id, id);
        CREATE TABLE notification_marks (
            user_id TEXT NOT NULL,
            event_id INTEGER NOT NULL,
            read_at INTEGER,
            deleted_at INTEGER,
            PRIMARY KEY (user_id, event_id)
        ) WITHOUT ROWID;
        CREATE TABLE push_deliveries (
            token TEXT NOT NULL,
            event_id INTEGER NOT NULL,
            user_id TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
            created_at INTEGER NOT NULL,
            finished_at INTEGER,
            PRIMARY KEY (token, event_id)
        ) WITHOUT ROWID;
        CREATE INDEX push_deliveries_pending ON push_deliveries(created_at) WHERE status = 'pending';
        CREATE INDEX push_deliveries_event ON push_deliveries(event_id);
        -- Ids at or below this were purged: a Last-Event-ID below it gets stream.gap.
        INSERT INTO counters (name, value) VALUES ('events_purged_through', 0);
        """),
        // Issue 11, the host's side. A visitor's pass page is opened by a token of which only
        // the SHA-256 is stored (a stolen database file opens no pass page). Mail is a queue
        // written in the transaction of its cause; `payload` holds what the worker needs to
        // compose it (an OTP's code, a pass token) and is erased once the mail is sent or
        // given up. An organization's time zone is NULL until set: the server's `timeZone`.
        Migration("0003-site", """
        ALTER TABLE visitors ADD COLUMN host_email TEXT;
        ALTER TABLE visitors ADD COLUMN pass_token_hash BLOB;
        CREATE UNIQUE INDEX visitors_pass_token ON visitors(pass_token_hash) WHERE pass_token_hash IS NOT NULL;
        ALTER TABLE organizations ADD COLUMN time_zone TEXT;
        ALTER TABLE users ADD COLUMN last_login_at INTEGER;
        ALTER TABLE users ADD COLUMN disabled INTEGER NOT NULL DEFAULT 0;
        CREATE TABLE mail_queue (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            organization_id TEXT,
            kind TEXT NOT NULL CHECK (kind IN ('otp', 'invitation', 'arrival', 'approval', 'test')),
            recipient TEXT NOT NULL,
            payload TEXT,
            status TEXT NOT NULL CHECK (status IN ('queued', 'sent', 'failed')),
            attempts INTEGER NOT NULL DEFAULT 0,
            last_error TEXT,
            created_at INTEGER NOT NULL,
            next_attempt_at INTEGER NOT NULL,
            give_up_at INTEGER NOT NULL,
            sent_at INTEGER
        );
        CREATE INDEX mail_queue_due ON mail_queue(next_attempt_at) WHERE status = 'queued';
        CREATE INDEX mail_queue_newest ON mail_queue(organization_id, created_at DESC, seq DESC);
        """),
        // Issue 12, the blocklist. Each entry keeps its normalised keys (GatePassCore
        // `BlocklistKeys`: folded name, lowercased email, phone digits) beside the values as
        // typed, so a check-in finds the entries that may match with one index probe per key.
        // `managers_only` events (security.alert) reach OWNER/ADMIN alone: no approver, no gate.
        Migration("0004-blocklist", """
        CREATE TABLE blocklist_entries (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            organization_id TEXT NOT NULL REFERENCES organizations(id),
            name TEXT,
            email TEXT,
            phone TEXT,
            company TEXT,
            reason TEXT NOT NULL,
            expires_at INTEGER,
            created_at INTEGER NOT NULL,
            created_by TEXT NOT NULL REFERENCES users(id),
            name_key TEXT,
            email_key TEXT,
            phone_key TEXT,
            CHECK (name_key IS NOT NULL OR email_key IS NOT NULL OR phone_key IS NOT NULL)
        );
        CREATE INDEX blocklist_newest ON blocklist_entries(organization_id, created_at DESC, seq DESC);
        CREATE INDEX blocklist_name ON blocklist_entries(organization_id, name_key) WHERE name_key IS NOT NULL;
        CREATE INDEX blocklist_email ON blocklist_entries(organization_id, email_key) WHERE email_key IS NOT NULL;
        CREATE INDEX blocklist_phone ON blocklist_entries(organization_id, phone_key) WHERE phone_key IS NOT NULL;
        ALTER TABLE events ADD COLUMN managers_only INTEGER NOT NULL DEFAULT 0;
        """),
        // Issue 12, users and settings. SQLite cannot change a CHECK, so the users table is
        // rebuilt for the HOST role. The rows that reference users (sessions, visitors,
        // scans, devices) keep pointing at "users": its foreign keys are deferred to the
        // commit, the old rows are dropped and the same rows inserted into the new table, so
        // the commit fails (and the migration rolls back) if a single reference were left
        // dangling. `created_by` is who registered a visitor (a HOST sees those it registered).
        Migration("0005-users", """
        PRAGMA defer_foreign_keys = ON;
        CREATE TEMP TABLE users_before_0005 AS SELECT * FROM users;
        DROP TABLE users;
        CREATE TABLE users (
            id TEXT PRIMARY KEY,
            organization_id TEXT NOT NULL REFERENCES organizations(id),
            email TEXT NOT NULL UNIQUE,
            name TEXT NOT NULL,
            role TEXT NOT NULL CHECK (role IN ('OWNER', 'ADMIN', 'APPROVER', 'PLATFORM_ADMIN', 'HOST')),
            can_scan INTEGER NOT NULL DEFAULT 0,
            created_at INTEGER NOT NULL,
            last_login_at INTEGER,
            disabled INTEGER NOT NULL DEFAULT 0
        );
        INSERT INTO users (id, organization_id, email, name, role, can_scan, created_at, last_login_at, disabled)
            SELECT id, organization_id, email, name, role, can_scan, created_at, last_login_at, disabled FROM users_before_0005;
        DROP TABLE users_before_0005;
        CREATE INDEX users_organization ON users(organization_id);
        CREATE INDEX sessions_user ON sessions(user_id) WHERE revoked_at IS NULL;
        ALTER TABLE visitors ADD COLUMN created_by TEXT REFERENCES users(id);
        CREATE INDEX visitors_created_by ON visitors(organization_id, created_by);
        CREATE INDEX visitors_host_email ON visitors(organization_id, host_email);
        ALTER TABLE organizations ADD COLUMN retention_days INTEGER NOT NULL DEFAULT 180;
        ALTER TABLE organizations ADD COLUMN auto_checkout_at TEXT;
        """),
        // Issue 12, the audit log (api.md "Audit log"): append-only rows, each with the hashes of
        // its field values and its chain link (AuditChain). Retention erases `before`/`after`
        // (erased = 1) and keeps the hashes. 
        Migration("0006-audit", """
        CREATE TABLE audit_log (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            organization_id TEXT,
            at INTEGER NOT NULL,
            actor_kind TEXT NOT NULL CHECK (actor_kind IN ('user', 'kiosk', 'system')),
            actor_id TEXT,
            action TEXT NOT NULL,
            entity TEXT NOT NULL,
            entity_id TEXT,
            before TEXT,
            after TEXT,
            erased INTEGER NOT NULL DEFAULT 0,
            field_hashes BLOB NOT NULL,
            link BLOB NOT NULL
        );
        CREATE INDEX audit_newest ON audit_log(organization_id, at DESC, seq DESC);
        CREATE INDEX audit_entity ON audit_log(entity_id);
        """),
        // Issue 12, checkpoints and kiosks. A retired checkpoint keeps its rows (its scans and
        // visitors point at it) but issues no token. A revoked session says why
        // (`revoked_reason`: 'admin' or 'retired'), so its next request can answer 401
        // REVOKED instead of "log in again". A kiosk's credential is a scanner session with
        // `kiosk_id` set and no parent: a logout never reaches it, and a user's disable skips
        // it (its `user_id` is the admin who made the enrolment code, for the foreign keys of
        // its scans). `last_used_at` is written at most once a minute per token.
        // `auto_checkout_done_on` is the site-local day ("YYYY-MM-DD") the end-of-day check-out
        // last ran for, so it runs once a day and catches up after downtime.
        Migration("0007-gates", """
        ALTER TABLE checkpoints ADD COLUMN retired_at INTEGER;
        ALTER TABLE sessions ADD COLUMN last_used_at INTEGER;
        ALTER TABLE sessions ADD COLUMN revoked_reason TEXT CHECK (revoked_reason IN ('admin', 'retired'));
        CREATE TABLE kiosks (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            organization_id TEXT NOT NULL REFERENCES organizations(id),
            checkpoint_id TEXT NOT NULL REFERENCES checkpoints(id),
            name TEXT NOT NULL,
            created_by TEXT NOT NULL REFERENCES users(id),
            created_at INTEGER NOT NULL,
            code_hash BLOB UNIQUE,
            code_expires_at INTEGER NOT NULL,
            enrolled_at INTEGER
        );
        ALTER TABLE sessions ADD COLUMN kiosk_id TEXT REFERENCES kiosks(id);
        CREATE INDEX sessions_scanner_live ON sessions(checkpoint_id) WHERE kind = 'scanner' AND revoked_at IS NULL;
        ALTER TABLE organizations ADD COLUMN auto_checkout_done_on TEXT;
        """),
        // Issue 12, retention (api.md "Retention"). `anonymised_at` marks a visitor whose personal
        // data was removed (so a run never counts it twice); `retention_ran_on` is the site-local
        // day of an organization's last daily run (at most one a day, caught up after downtime).
        // Mail rows name their visitor (from the payload, which is erased once sent), so an erase
        // reaches the mail log. Scans are rebuilt because SQLite cannot drop a NOT NULL: `raw`
        // becomes null when its visitor is anonymised. The indexes find a visitor's copies.
        Migration("0008-retention", """
        ALTER TABLE visitors ADD COLUMN anonymised_at INTEGER;
        ALTER TABLE organizations ADD COLUMN retention_ran_on TEXT;
        ALTER TABLE mail_queue ADD COLUMN visitor_id TEXT;
        UPDATE mail_queue SET visitor_id = COALESCE(json_extract(payload, '$.invitation.visitorId'),
                                                    json_extract(payload, '$.arrival.visitorId'),
                                                    json_extract(payload, '$.approval.visitorId'))
            WHERE payload IS NOT NULL AND json_valid(payload);
        CREATE INDEX mail_queue_visitor ON mail_queue(visitor_id) WHERE visitor_id IS NOT NULL;
        CREATE INDEX mail_queue_finished ON mail_queue(created_at) WHERE status != 'queued';
        CREATE INDEX events_visitor ON events(visitor_id) WHERE visitor_id IS NOT NULL;
        CREATE INDEX push_deliveries_age ON push_deliveries(created_at);
        CREATE TABLE scans_0008 (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            organization_id TEXT NOT NULL REFERENCES organizations(id),
            short_id TEXT,
            raw TEXT,
            result TEXT NOT NULL,
            visitor_id TEXT REFERENCES visitors(id),
            checkpoint_id TEXT NOT NULL REFERENCES checkpoints(id),
            scanned_by TEXT NOT NULL REFERENCES users(id),
            scanned_at INTEGER NOT NULL,
            received_at INTEGER NOT NULL,
            offline INTEGER NOT NULL
        );
        INSERT INTO scans_0008 (seq, id, organization_id, short_id, raw, result, visitor_id, checkpoint_id, scanned_by,
                                scanned_at, received_at, offline)
            SELECT seq, id, organization_id, short_id, raw, result, visitor_id, checkpoint_id, scanned_by, scanned_at,
                   received_at, offline FROM scans;
        DROP TABLE scans;
        ALTER TABLE scans_0008 RENAME TO scans;
        CREATE INDEX scans_newest ON scans(organization_id, scanned_at DESC, seq DESC);
        CREATE INDEX scans_checkpoint ON scans(organization_id, checkpoint_id, scanned_at DESC, seq DESC);
        CREATE INDEX scans_visitor ON scans(visitor_id) WHERE visitor_id IS NOT NULL;
        CREATE INDEX scans_unlinked ON scans(organization_id, scanned_at) WHERE visitor_id IS NULL AND raw IS NOT NULL;
        """),
        // Offline passes (issue 13): what the kiosk decided offline, on a replayed scan.
        Migration("0009-offline-passes", """
        ALTER TABLE scans ADD COLUMN offline_decision TEXT;
        """),
    ]
}
