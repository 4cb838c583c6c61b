import Foundation

/// The chain's latest link, kept outside the database (api.md: "the latest link is also written
/// outside the database, so removing the newest entries is detected too"): `<database>.audit-head`,
/// one line `<seq> <link in hex>`, 0600 from its first byte, replaced whole (written, synced, renamed).
///
/// It is written after the commit that added the entry, never before: after a crash it can only
/// lag behind the database (entries after it still chain from it), never claim an entry that
/// was not committed.
struct AuditHead: Sendable, Equatable {
    var seq: Int64
    var link: [UInt8]

    static func path(forDatabase database: String) -> String { database + ".audit-head" }

    /// The head in `path`; nil when there is no file yet (no entry was ever written).
    /// A file that is not exactly one head line is an error, never read as "no head".
    static func read(path: String) throws(AuditHeadError) -> AuditHead? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw AuditHeadError(path: path, problem: "cannot be read")
        }
        let parts = text.trimmingCharacters(in: .newlines).split(separator: " ")
        guard parts.count == 2, let seq = Int64(parts[0]), seq > 0, let link = hexBytes(parts[1]), link.count == 32 else {
            throw AuditHeadError(path: path, problem: "is not one line \"<seq> <64 hex digits>\"")
        }
        return AuditHead(seq: seq, link: link)
    }

    func save(path: String) throws(AuditHeadError) {
        let temporary = path + ".partial"
        let line = Array("\(seq) \(link.map { String(format: "%02x", $0) }.joined())\n".utf8)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw AuditHeadError(path: temporary, problem: String(cString: strerror(errno))) }
        let written = line.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        let synced = written == line.count && fsync(descriptor) == 0
        close(descriptor)
        guard synced, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw AuditHeadError(path: path, problem: "could not be written whole")
        }
    }

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
