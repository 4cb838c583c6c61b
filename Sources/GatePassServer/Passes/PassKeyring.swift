import Foundation
import GatePassCore
import GatePassCrypto

/// The pass keys of every organization (api.md "Offline passes"): Ed25519 key pairs with a
/// purpose, kept in one JSON file of mode 0600 beside the database (`<db>.pass-keys`, or
/// `passKeysFile`), made on first start.
///
/// The file, not the database, holds them for the reason the server secret is a file: a copy
/// of the database (a backup, an export) must not carry what signs passes. Every change is a
/// whole new file renamed over the old one under an exclusive lock (`<file>.lock`), so
/// `gatepass keys rotate|revoke` may run beside a serving instance: the server looks at the
/// file's identity at most once a second and reads it again when it changed.
public final class PassKeyring: Sendable {
    /// One key as the file stores it.
    struct StoredKey: Codable, Sendable, Equatable {
        var organizationId: String
        var id: String
        var purpose: PassKeyPurpose
        /// The 32-byte Ed25519 private key, base64url.
        var privateKey: String
        var createdAt: Timestamp
        var retiredAt: Timestamp?
        var revokedAt: Timestamp?
        /// When the server re-issued the passes of this revoked key (re-sent their invitations).
        var reissuedAt: Timestamp?
    }

    struct Contents: Codable, Sendable, Equatable {
        static let currentVersion = 1
        var version: Int
        var keys: [StoredKey]
    }

    /// A key ready to use: its private and public halves decoded once, when the file is read.
    struct LoadedKey: Sendable {
        var stored: StoredKey
        var privateKey: [UInt8]
        var publicKey: [UInt8]

        var isCurrent: Bool { stored.retiredAt == nil && stored.revokedAt == nil }
        var published: PassKey {
            PassKey(id: stored.id, purpose: stored.purpose, publicKey: publicKey, createdAt: stored.createdAt,
                    retiredAt: stored.retiredAt, revokedAt: stored.revokedAt)
        }
    }

    private struct Snapshot: Sendable {
        var keys: [LoadedKey] = []
        var identity: FileIdentity?
        var checkedAt: ContinuousClock.Instant?
    }

    /// What tells that the file was replaced: a rename gives it a new inode.
    private struct FileIdentity: Equatable, Sendable {
        var inode: UInt64
        var modified: Int64
        var size: Int64
    }

    public let path: String
    private let snapshot = Locked(Snapshot())

    /// Opens the keyring at `path`, creating an empty one (mode 0600 from its first byte).
    /// - Throws: `ConfigurationError` when the file cannot be read or made, is readable by its
    ///   group or others, or holds anything this code does not understand.
    public init(path: String) throws {
        self.path = path
        try withFileLock { _ = try readOrCreate() }
        try reload()
    }

    /// The default place of the keyring: beside the database.
    public static func path(forDatabase database: String) -> String { database + ".pass-keys" }

    // MARK: - Reading

    /// The organization's keys as `GET /api/visitor-scanner/pass-keys` lists them, oldest first.
    /// A site made after the server started gets its keys here, at its first look.
    public func publicKeys(organizationId: String, now: Date) throws -> [PassKey] {
        try refreshIfChanged()
        func keys() -> [PassKey] {
            snapshot.withLock { $0.keys }.filter { $0.stored.organizationId == organizationId }.map(\.published)
        }
        let found = keys()
        if !PassKeyPurpose.allCases.allSatisfy({ purpose in found.contains { $0.purpose == purpose && $0.retiredAt == nil && $0.revokedAt == nil } }) {
            try ensureKeys(organizationIds: [organizationId], now: now)
            return keys()
        }
        return found
    }

    /// What the signature of `text` says, against the organization's keys.
    func check(_ text: SignedPassText, organizationId: String, now: Date) throws -> SignedPassCheck {
        text.check(against: try publicKeys(organizationId: organizationId, now: now)) { Ed25519.verify($0, of: $1, publicKey: $2) }
    }

    /// The GP2 text of `visitor`'s pass, signed with the organization's current key of the
    /// pass's purpose (made now if the organization has none yet). Ed25519 signatures are
    /// deterministic, so a pass keeps one text until its window or its key changes.
    func signedText(for visitor: Visitor, organizationId: String, now: Date) throws -> SignedPassText {
        let purpose = PassKeyPurpose.of(visitor)
        let key = try currentKey(organizationId: organizationId, purpose: purpose, now: now)
        return try SignedPassText.issue(for: visitor, keyId: key.stored.id) { bytes in
            try Ed25519.sign(bytes, privateKey: key.privateKey)
        }
    }

    private func currentKey(organizationId: String, purpose: PassKeyPurpose, now: Date) throws -> LoadedKey {
        try refreshIfChanged()
        if let key = Self.current(in: snapshot.withLock { $0.keys }, organizationId: organizationId, purpose: purpose) {
            return key
        }
        try ensureKeys(organizationIds: [organizationId], now: now)
        guard let key = Self.current(in: snapshot.withLock { $0.keys }, organizationId: organizationId, purpose: purpose) else {
            throw ConfigurationError(message: "the pass keys file \(path) gave no \(purpose.rawValue) key")
        }
        return key
    }

    private static func current(in keys: [LoadedKey], organizationId: String, purpose: PassKeyPurpose) -> LoadedKey? {
        keys.last { $0.stored.organizationId == organizationId && $0.stored.purpose == purpose && $0.isCurrent }
    }

    /// Revoked keys whose passes were not re-issued yet (the server does it, then marks them).
    func keysAwaitingReissue() throws -> [StoredKey] {
        try refreshIfChanged()
        return snapshot.withLock { $0.keys }.map(\.stored).filter { $0.revokedAt != nil && $0.reissuedAt == nil }
    }

    // MARK: - Changes

    /// Gives every organization in `organizationIds` a current key of each purpose.
    public func ensureKeys(organizationIds: [String], now: Date) throws {
        try change { contents in
            for organizationId in organizationIds {
                for purpose in PassKeyPurpose.allCases
                where !contents.keys.contains(where: { $0.organizationId == organizationId && $0.purpose == purpose
                                                        && $0.retiredAt == nil && $0.revokedAt == nil }) {
                    contents.keys.append(try Self.newKey(organizationId: organizationId, purpose: purpose, now: now, in: contents))
                }
            }
        }
    }

    /// What `rotate` and `revoke` did, for the command's report.
    public struct Change: Sendable, Equatable {
        public var organizationId: String
        public var purpose: PassKeyPurpose
        public var retired: String?
        public var revoked: String?
        public var created: String?
    }

    /// Retires the current key of each purpose (of `purposes`) of the organization and makes a
    /// new one: passes signed with the old key stay valid until they end.
    public func rotate(organizationId: String, purposes: [PassKeyPurpose], now: Date) throws -> [Change] {
        var changes: [Change] = []
        try change { contents in
            changes = []
            for purpose in purposes {
                var change = Change(organizationId: organizationId, purpose: purpose)
                if let index = contents.keys.lastIndex(where: { $0.organizationId == organizationId && $0.purpose == purpose
                                                                 && $0.retiredAt == nil && $0.revokedAt == nil }) {
                    contents.keys[index].retiredAt = Timestamp(now)
                    change.retired = contents.keys[index].id
                }
                let key = try Self.newKey(organizationId: organizationId, purpose: purpose, now: now, in: contents)
                contents.keys.append(key)
                change.created = key.id
                changes.append(change)
            }
        }
        return changes
    }

    /// Revokes a key (it leaked): its passes are refused everywhere from the next look at the
    /// file; a current key is replaced by a new one, and the server re-issues the passes it signed.
    public func revoke(keyId: String, now: Date) throws -> Change {
        var result: Change?
        try change { contents in
            guard let index = contents.keys.firstIndex(where: { $0.id == keyId }) else {
                throw ConfigurationError(message: "no pass key has the id \(TerminalText.visible(String(keyId.prefix(8))))")
            }
            let key = contents.keys[index]
            guard key.revokedAt == nil else {
                throw ConfigurationError(message: "the pass key \(keyId) was revoked already at \(key.revokedAt!)")
            }
            var change = Change(organizationId: key.organizationId, purpose: key.purpose, revoked: key.id)
            let wasCurrent = key.retiredAt == nil
            contents.keys[index].revokedAt = Timestamp(now)
            if wasCurrent {
                let replacement = try Self.newKey(organizationId: key.organizationId, purpose: key.purpose, now: now, in: contents)
                contents.keys.append(replacement)
                change.created = replacement.id
            }
            result = change
        }
        return result!
    }

    /// Records that the passes of the revoked key `keyId` were re-issued.
    func markReissued(keyId: String, now: Date) throws {
        try change { contents in
            for index in contents.keys.indices where contents.keys[index].id == keyId && contents.keys[index].reissuedAt == nil {
                contents.keys[index].reissuedAt = Timestamp(now)
            }
        }
    }

    private static func newKey(organizationId: String, purpose: PassKeyPurpose, now: Date, in contents: Contents) throws -> StoredKey {
        // Ids count up in base 36 across the file: short (they are in every QR code) and never reused.
        let highest = contents.keys.compactMap { Int($0.id, radix: 36) }.max() ?? 0
        let id = String(highest + 1, radix: 36).uppercased()
        guard SignedPassText.isKeyId(id) else { throw ConfigurationError(message: "the pass keys file has used every key id") }
        let pair = try Ed25519.generate()
        return StoredKey(organizationId: organizationId, id: id, purpose: purpose, privateKey: Base64URL.encode(pair.privateKey),
                         createdAt: Timestamp(now))
    }

    // MARK: - The file

    /// Reads the file under the lock, lets `body` change it, writes it back (if changed) and reloads.
    private func change(_ body: (inout Contents) throws -> Void) throws {
        try withFileLock {
            var contents = try readOrCreate()
            let before = contents
            try body(&contents)
            if contents != before { try write(contents) }
        }
        try reload()
    }

    private func refreshIfChanged() throws {
        let now = ContinuousClock.now
        let due = snapshot.withLock { state -> Bool in
            if let checked = state.checkedAt, now - checked < .seconds(1) { return false }
            state.checkedAt = now
            return true
        }
        guard due else { return }
        if try Self.identity(of: path) != snapshot.withLock({ $0.identity }) { try reload() }
    }

    private func reload() throws {
        let identity = try Self.identity(of: path)
        let contents = try Self.decode(try Self.readPrivateFile(path), path: path)
        var loaded: [LoadedKey] = []
        for key in contents.keys {
            guard let privateKey = Base64URL.decode(key.privateKey), privateKey.count == Ed25519.keyLength else {
                throw ConfigurationError(message: "the pass key \(key.id) in \(path) is not a 32-byte Ed25519 key")
            }
            loaded.append(LoadedKey(stored: key, privateKey: privateKey, publicKey: try Ed25519.publicKey(of: privateKey)))
        }
        snapshot.withLock { $0 = Snapshot(keys: loaded, identity: identity, checkedAt: ContinuousClock.now) }
    }

    private func readOrCreate() throws -> Contents {
        if access(path, F_OK) != 0 {
            guard errno == ENOENT else { throw ConfigurationError(message: "cannot read the pass keys file \(path)") }
            let empty = Contents(version: Contents.currentVersion, keys: [])
            try write(empty)
            return empty
        }
        return try Self.decode(try Self.readPrivateFile(path), path: path)
    }

    static func decode(_ data: Data, path: String) throws -> Contents {
        let contents: Contents
        do {
            contents = try JSONDecoder().decode(Contents.self, from: data)
        } catch {
            throw ConfigurationError(message: "\(path) does not hold Gate Pass pass keys (\(error))")
        }
        guard contents.version == Contents.currentVersion else {
            throw ConfigurationError(message: "\(path) is pass keys file version \(contents.version); this build reads version 1")
        }
        var ids = Set<String>()
        for key in contents.keys {
            guard SignedPassText.isKeyId(key.id), ids.insert(key.id).inserted else {
                throw ConfigurationError(message: "\(path) holds a key id that is malformed or used twice")
            }
        }
        return contents
    }

    private static func readPrivateFile(_ path: String) throws -> Data {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else {
            throw ConfigurationError(message: "cannot read the pass keys file \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw ConfigurationError(message: "cannot read the pass keys file \(path)") }
        try PrivateFileMode.check(status, path: path, what: "the pass keys file",
                                  advice: ", and revoke its keys (gatepass keys revoke)")
        return FileHandle(fileDescriptor: descriptor, closeOnDealloc: false).readDataToEndOfFile()
    }

    /// A new file beside the old, private from its first byte, synced, renamed over it.
    private func write(_ contents: Contents) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let bytes = Array(try encoder.encode(contents)) + [0x0A]
        let temporary = path + ".new"
        unlink(temporary)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw ConfigurationError(message: "cannot create \(temporary)") }
        let written = Glibc.write(descriptor, bytes, bytes.count)
        let synced = fsync(descriptor)
        close(descriptor)
        guard written == bytes.count, synced == 0, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw ConfigurationError(message: "cannot write the pass keys file \(path)")
        }
        let folder = open((path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent,
                          O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 { fsync(folder); close(folder) }
    }

    private func withFileLock<T>(_ body: () throws -> T) throws -> T {
        let lockPath = path + ".lock"
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw ConfigurationError(message: "cannot open \(lockPath)") }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX) == 0 else { throw ConfigurationError(message: "cannot lock \(lockPath)") }
        defer { flock(descriptor, LOCK_UN) }
        return try body()
    }

    private static func identity(of path: String) throws -> FileIdentity {
        var status = stat()
        guard stat(path, &status) == 0 else { throw ConfigurationError(message: "cannot read the pass keys file \(path)") }
        return FileIdentity(inode: UInt64(status.st_ino),
                            modified: Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec),
                            size: Int64(status.st_size))
    }
}
