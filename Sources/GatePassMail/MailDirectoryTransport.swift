import Foundation

/// `--dev` without SMTP: each mail becomes one `.eml` file in a folder, so the demo and tests
/// can read what would have been sent. Files are written whole (a temporary name, then
/// renamed) and private to their owner (0600 in a 0700 folder) from their first byte: they
/// hold login codes and visitors' data.
public struct MailDirectoryTransport: MailTransport {
    public let directory: String

    public init(directory: String) { self.directory = directory }

    /// Where `mail` is (or will be) written: its label and Message-ID, made safe for a file
    /// name (ASCII letters, digits, `@ . _ -`; nothing that could leave the folder).
    public func path(for mail: OutgoingMail) -> String {
        func safe(_ text: String) -> String {
            String(String.UnicodeScalarView(text.unicodeScalars.filter {
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "@._-".unicodeScalars.contains($0))
            }))
        }
        let id = safe(String(mail.messageID.prefix { $0 != "@" }))
        let label = mail.label.map { String(safe($0).drop { $0 == "." }.prefix(100)) + "-" } ?? ""
        return directory + "/" + label + id + ".eml"
    }

    public func send(_ mail: OutgoingMail) throws {
        try makeDirectory()
        let target = path(for: mail)
        let temporary = target + ".partial"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw MailDirectoryError(path: temporary, errno: errno) }
        var offset = 0
        while offset < mail.bytes.count {
            let written = mail.bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                let failure = errno
                close(descriptor)
                unlink(temporary)
                throw MailDirectoryError(path: temporary, errno: failure)
            }
            offset += written
        }
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard synced, rename(temporary, target) == 0 else {
            let failure = errno
            unlink(temporary)
            throw MailDirectoryError(path: target, errno: failure)
        }
    }

    /// The folder exists (or can be made) and takes files.
    public func probe() throws {
        try makeDirectory()
        guard access(directory, W_OK) == 0 else { throw MailDirectoryError(path: directory, errno: errno) }
    }

    private func makeDirectory() throws {
        if mkdir(directory, 0o700) != 0 && errno != EEXIST { throw MailDirectoryError(path: directory, errno: errno) }
    }
}

public struct MailDirectoryError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var errno: Int32
    public var description: String { "cannot write \(path): \(String(cString: strerror(errno)))" }
}
