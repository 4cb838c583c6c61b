import Foundation
import GatePassCrypto

/// The chain's latest link, kept outside the database (api.md: "the latest link is also written
/// outside the database, so removing the newest entries is detected too"): `<database>.audit-head`,
/// one line `<seq> <link in hex> <signature in hex>`, 0600 from its first byte, replaced whole
/// (written, synced, renamed). The signature is an HMAC of the number and link under the audit
/// key (`AuditChain.headSignature`): without the secret, nobody can write a head that names an
/// earlier entry after cutting the log there.
///
/// It is written after the commit that added the entry, never before: after a crash it can only
/// lag behind the database (entries after it still chain from it), never claim an entry that
/// was not committed. Earlier versions wrote `<seq> <link in hex>` without a signature: such a
/// head is read with `signature` nil, and taken over once (`AuditLog.takeOver`).
struct AuditHead: Sendable, Equatable {
    var seq: Int64
    var link: [UInt8]
    /// Nil for a head in the unsigned format of an earlier version.
    var signature: [UInt8]?

    static func path(forDatabase database: String) -> String { database + ".audit-head" }

    /// A head for the entry `seq` whose link is `link`, signed under `chain`'s key.
    static func signed(seq: Int64, link: [UInt8], _ chain: AuditChain) -> AuditHead {
        AuditHead(seq: seq, link: link, signature: chain.headSignature(seq: seq, link: link))
    }

    /// Whether the head carries the signature `chain`'s key gives it.
    func isSigned(by chain: AuditChain) -> Bool {
        guard let signature else { return false }
        return constantTimeEquals(signature, chain.headSignature(seq: seq, link: link))
    }

    /// The head in `path`; nil when there is no file. A file that is not exactly one head line
    /// is an error, never read as "no head".
    /// - Parameter requirePrivate: refuse a file its group or others may read or write (what
    ///   `serve` requires; a command checking a copy does not).
    static func read(path: String, requirePrivate: Bool = false) throws(AuditHeadError) -> AuditHead? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw AuditHeadError(path: path, problem: "cannot be read: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw AuditHeadError(path: path, problem: "cannot be read") }
        if requirePrivate, let problem = PrivateFileMode.problem(status, path: path) {
            throw AuditHeadError(path: path, problem: problem + ", then gatepass audit verify")
        }
        let data = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false).readDataToEndOfFile()
        guard let text = String(data: data, encoding: .utf8) else { throw AuditHeadError(path: path, problem: "cannot be read") }
        let parts = text.trimmingCharacters(in: .newlines).split(separator: " ", omittingEmptySubsequences: false)
        guard (2...3).contains(parts.count), let seq = Int64(parts[0]), seq > 0, String(seq) == parts[0],
              let link = hexBytes(parts[1]), link.count == 32
        else { throw AuditHeadError(path: path, problem: "is not one line \"<seq> <64 hex digits> <64 hex digits>\"") }
        var signature: [UInt8]?
        if parts.count == 3 {
            guard let bytes = hexBytes(parts[2]), bytes.count == 32 else {
                throw AuditHeadError(path: path, problem: "is not one line \"<seq> <64 hex digits> <64 hex digits>\"")
            }
            signature = bytes
        }
        return AuditHead(seq: seq, link: link, signature: signature)
    }

    /// Writes the head whole: a new file made 0600 from its first byte (a stale partial file
    /// is removed first, never reused with its mode), synced, renamed over the old one. The
    /// partial file is this process's own, so servers sharing the head's folder (PostgreSQL)
    /// never write into or rename each other's.
    func save(path: String) throws(AuditHeadError) {
        let temporary = path + ".partial-\(getpid())"
        var line = "\(seq) \(Self.hex(link))"
        if let signature { line += " \(Self.hex(signature))" }
        let bytes = Array((line + "\n").utf8)
        unlink(temporary)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw AuditHeadError(path: temporary, problem: String(cString: strerror(errno))) }
        // O_EXCL: the mode is the one asked here (the umask can only narrow it), never a stale file's.
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        let synced = written == bytes.count && fsync(descriptor) == 0
        close(descriptor)
        guard synced, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw AuditHeadError(path: path, problem: "could not be written whole")
        }
    }

    private static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    private static func hexBytes(_ text: Substring) -> [UInt8]? {
        guard text.count % 2 == 0, text.allSatisfy(\.isHexDigit) else { return nil }
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            guard let byte = UInt8(text[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return bytes
    }
}

struct AuditHeadError: Error, Sendable, CustomStringConvertible {
    var path: String
    var problem: String
    var description: String { "the audit head \(path) \(problem)" }
}
