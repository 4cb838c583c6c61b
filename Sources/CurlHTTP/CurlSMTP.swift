import CCurl
import Foundation

/// The step of an SMTP exchange an error happened in, as libcurl walks it (lib/smtp.c):
/// connect, (TLS for smtps://), greeting, EHLO, STARTTLS, TLS, EHLO, AUTH, MAIL FROM, RCPT TO,
/// DATA. (A failed QUIT fails nothing, so it is no stage.)
public enum SMTPStage: String, Sendable, Equatable {
    /// TCP connection (DNS, refused, unreachable): what a mail queue retries.
    case connect
    /// The TLS handshake (implicit for smtps://, after STARTTLS for smtp://), certificate checks.
    case tls
    /// Connected, no command sent yet: the server's 220 greeting.
    case greeting
    case ehlo
    /// The server does not offer STARTTLS or refused it; with CURLUSESSL_ALL libcurl never
    /// continues in plain text.
    case startTLS
    case auth
    case mailFrom
    case recipient
    case data
}

/// Why an SMTP exchange failed. Carries libcurl's code, the stage and the server's last reply;
/// never the password (the AUTH lines are not recorded, and the password is cut out of any
/// text that might echo it).
public struct SMTPError: Error, Sendable, Equatable, CustomStringConvertible {
    public var url: String
    public var stage: SMTPStage
    /// libcurl's CURLcode (see libcurl-errors(3)); 0 when the request was refused before
    /// libcurl was asked (an address that cannot be put in an SMTP command).
    public var curlCode: Int32
    /// curl_easy_strerror's text, or why the input was refused.
    public var detail: String
    /// The last reply line the server sent (e.g. "535 5.7.8 Authentication failed"), if any.
    public var serverReply: String?

    public init(url: String, stage: SMTPStage, curlCode: Int32, detail: String, serverReply: String? = nil) {
        self.url = url
        self.stage = stage
        self.curlCode = curlCode
        self.detail = detail
        self.serverReply = serverReply
    }

    /// The SMTP reply code of `serverReply` (e.g. 535), if there was one: 4xx is temporary,
    /// 5xx permanent (RFC 5321 §4.2.1), which a queue can use to stop retrying.
    public var replyCode: Int? { serverReply.flatMap { Int($0.prefix(3)) } }

    /// The server could not be reached or did not answer in time: worth retrying later as is.
    public var isConnectionFailure: Bool {
        let code = CURLcode(rawValue: UInt32(curlCode))
        return code == CURLE_COULDNT_CONNECT || code == CURLE_COULDNT_RESOLVE_HOST || code == CURLE_OPERATION_TIMEDOUT
    }

    public var description: String {
        let reply = serverReply.map { "; server said \"\($0)\"" } ?? ""
        return "SMTP with \(url) failed at \(stage.rawValue) (curl \(curlCode)): \(detail)\(reply)"
    }
}

/// Sends already-built messages over SMTP with libcurl (smtp:// with STARTTLS, or smtps://).
///
/// TLS is always required (CURLOPT_USE_SSL = CURLUSESSL_ALL): a server that does not offer
/// STARTTLS, or a failed handshake, ends the exchange before AUTH or MAIL, never a fallback to
/// plain text. Certificates are always verified; a private CA is trusted by naming its file
/// (CURLOPT_CAINFO).
///
/// A value type: each call uses its own easy handle (mail is sent seldom, so no connection
/// is kept), so it is safe from any thread.
public struct CurlSMTP: Sendable {
    public struct Options: Sendable {
        /// `smtp://host:port` (STARTTLS) or `smtps://host:port` (TLS from the first byte).
        public var url: String
        /// CURLOPT_USERNAME; nil sends no AUTH (libcurl also skips AUTH when the server offers none).
        public var username: String?
        /// CURLOPT_PASSWORD, as the caller read it from its password file. Never printed.
        public var password: SMTPPassword?
        /// A PEM file of CA certificates to trust instead of the system's (CURLOPT_CAINFO).
        public var caFile: String?
        /// For a relay on this machine only (api.md: STARTTLS is required "always unless the
        /// host is loopback"): a server that does not offer STARTTLS is spoken to in plain text
        /// (CURLUSESSL_TRY). One that offers it is still spoken to over TLS, and a failed
        /// handshake still ends the exchange.
        public var plainTextWithoutSTARTTLS: Bool = false
        /// CURLOPT_CONNECTTIMEOUT_MS.
        public var connectTimeout: Duration
        /// CURLOPT_TIMEOUT_MS, the whole exchange.
        public var timeout: Duration

        public init(url: String, username: String? = nil, password: SMTPPassword? = nil, caFile: String? = nil,
                    connectTimeout: Duration = .seconds(10), timeout: Duration = .seconds(60)) {
            self.url = url
            self.username = username
            self.password = password
            self.caFile = caFile
            self.connectTimeout = connectTimeout
            self.timeout = timeout
        }
    }

    public let options: Options

    public init(options: Options) {
        precondition(CurlSession.globalInit, "curl_global_init failed")
        self.options = options
    }

    /// Sends `message` (RFC 5322 bytes, CRLF line ends) from `from` to each of `recipients`
    /// (the envelope: MAIL FROM and RCPT TO; the message's own headers are not read).
    /// libcurl dot-stuffs the body (lines starting with ".").
    ///
    /// - Throws: `SMTPError` with the stage that failed; every recipient must be accepted.
    public func send(from: String, to recipients: [String], message: [UInt8]) throws(SMTPError) {
        guard Self.isEnvelopeAddress(from) else {
            throw SMTPError(url: displayURL, stage: .mailFrom, curlCode: 0, detail: "the sender is not an address SMTP can carry")
        }
        guard !recipients.isEmpty else {
            throw SMTPError(url: displayURL, stage: .recipient, curlCode: 0, detail: "no recipient")
        }
        for recipient in recipients where !Self.isEnvelopeAddress(recipient) {
            throw SMTPError(url: displayURL, stage: .recipient, curlCode: 0, detail: "a recipient is not an address SMTP can carry")
        }
        try perform { handle, exchange in
            _ = gatepass_curl_setopt_string(handle, CURLOPT_MAIL_FROM, "<\(from)>")
            for recipient in recipients {
                exchange.recipients = curl_slist_append(exchange.recipients, "<\(recipient)>")
            }
            _ = gatepass_curl_setopt_slist(handle, CURLOPT_MAIL_RCPT, exchange.recipients)
            exchange.body = message
            _ = gatepass_curl_setopt_long(handle, CURLOPT_UPLOAD, 1)
            _ = gatepass_curl_setopt_off_t(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(message.count))
            _ = gatepass_curl_setopt_callback(handle, CURLOPT_READFUNCTION, readCallback)
            _ = gatepass_curl_setopt_pointer(handle, CURLOPT_READDATA, Unmanaged.passUnretained(exchange).toOpaque())
        }
    }

    /// Connects, reads the greeting, says EHLO, STARTTLS (smtp://), EHLO again and AUTH, and
    /// hangs up: checks the settings without sending anything.
    ///
    /// Uses CURLOPT_CONNECT_ONLY ("all the required … connection setup, but no data transfer",
    /// CURLOPT_CONNECT_ONLY(3), SMTP among its protocols): for SMTP, libcurl's connect phase is
    /// the whole session set-up (greeting → EHLO → STARTTLS → EHLO → AUTH, lib/smtp.c), so
    /// curl_easy_perform returns after AUTH's reply. curl_easy_cleanup then closes the
    /// connection without QUIT (measured with libcurl 7.88.1: the test sink records exactly
    /// EHLO, STARTTLS, EHLO, AUTH; servers log it as a dropped connection). A NOOP or VRFY
    /// through CURLOPT_CUSTOMREQUEST would add a command the server may refuse or log as a
    /// probe of its users (VRFY), for nothing the connect phase does not already check.
    public func probe() throws(SMTPError) {
        try perform { handle, _ in
            _ = gatepass_curl_setopt_long(handle, CURLOPT_CONNECT_ONLY, 1)
        }
    }

    /// True for an address that can be put between < and > in MAIL FROM / RCPT TO: printable
    /// ASCII with an @, and nothing that could end the command or start another.
    public static func isEnvelopeAddress(_ address: String) -> Bool {
        guard address.contains("@"), address.utf8.count <= 254 else { return false }
        return address.utf8.allSatisfy { byte in
            byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "<") && byte != UInt8(ascii: ">") && byte != UInt8(ascii: ",")
        }
    }

    private func perform(_ configure: (UnsafeMutableRawPointer, SMTPExchange) -> Void) throws(SMTPError) {
        guard options.url.hasPrefix("smtp://") || options.url.hasPrefix("smtps://") else {
            throw SMTPError(url: displayURL, stage: .connect, curlCode: Int32(CURLE_UNSUPPORTED_PROTOCOL.rawValue),
                            detail: "not an smtp:// or smtps:// URL")
        }
        guard displayURL == options.url else {
            throw SMTPError(url: displayURL, stage: .connect, curlCode: Int32(CURLE_URL_MALFORMAT.rawValue),
                            detail: "the URL carries credentials; set the username and the password file instead")
        }
        guard let handle = curl_easy_init() else { fatalError("curl_easy_init failed: out of memory") }
        let exchange = SMTPExchange()
        let code: CURLcode = withExtendedLifetime(exchange) {
            defer {
                // After a send libcurl says QUIT here; a CONNECT_ONLY session is just closed.
                curl_easy_cleanup(handle)
                curl_slist_free_all(exchange.recipients)
            }
            _ = gatepass_curl_setopt_string(handle, CURLOPT_URL, options.url)
            _ = gatepass_curl_setopt_long(handle, CURLOPT_PROTOCOLS, Int(CURLPROTO_SMTP | CURLPROTO_SMTPS))
            _ = gatepass_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
            _ = gatepass_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, CurlSession.milliseconds(options.connectTimeout))
            _ = gatepass_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, CurlSession.milliseconds(options.timeout))
            // STARTTLS or fail: CURLUSESSL_ALL makes a server without STARTTLS an error
            // (CURLE_USE_SSL_FAILED) instead of a plain-text session. CURLUSESSL_TRY (a loopback
            // relay only) skips TLS when EHLO offers no STARTTLS; a failed handshake still fails.
            let level = options.plainTextWithoutSTARTTLS ? CURLUSESSL_TRY : CURLUSESSL_ALL
            _ = gatepass_curl_setopt_long(handle, CURLOPT_USE_SSL, Int(level.rawValue))
            _ = gatepass_curl_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 1)
            _ = gatepass_curl_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 2)
            if let caFile = options.caFile { _ = gatepass_curl_setopt_string(handle, CURLOPT_CAINFO, caFile) }
            if let username = options.username { _ = gatepass_curl_setopt_string(handle, CURLOPT_USERNAME, username) }
            if let password = options.password { _ = gatepass_curl_setopt_string(handle, CURLOPT_PASSWORD, password.value) }
            // The debug callback is how the stage is known: it sees each command verb and reply.
            _ = gatepass_curl_setopt_long(handle, CURLOPT_VERBOSE, 1)
            _ = gatepass_curl_setopt_debug(handle, debugCallback)
            _ = gatepass_curl_setopt_pointer(handle, CURLOPT_DEBUGDATA, Unmanaged.passUnretained(exchange).toOpaque())
            configure(handle, exchange)
            let code = curl_easy_perform(handle)
            exchange.recording = false
            return code
        }
        guard code == CURLE_OK else { throw error(code, exchange: exchange) }
    }

    private func error(_ code: CURLcode, exchange: SMTPExchange) -> SMTPError {
        let stage: SMTPStage
        switch code {
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            stage = .connect
        case CURLE_USE_SSL_FAILED:
            stage = .startTLS
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
             CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_PINNEDPUBKEYNOTMATCH:
            stage = .tls
        case CURLE_LOGIN_DENIED:
            stage = .auth
        default:
            stage = exchange.lastCommand ?? (exchange.connected ? .greeting : .connect)
        }
        return SMTPError(url: displayURL, stage: stage, curlCode: Int32(code.rawValue),
                         detail: redacted(String(cString: curl_easy_strerror(code))),
                         serverReply: exchange.lastReply.map(redacted))
    }

    /// The URL without any `user:password@` part, for errors and logs.
    var displayURL: String {
        guard let schemeEnd = options.url.range(of: "://") else { return options.url }
        let rest = options.url[schemeEnd.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard let at = authority.lastIndex(of: "@") else { return options.url }
        return String(options.url[..<schemeEnd.upperBound]) + String(options.url[options.url.index(after: at)...])
    }

    private func redacted(_ text: String) -> String {
        guard let password = options.password?.value, !password.isEmpty else { return text }
        return text.replacingOccurrences(of: password, with: "[password]")
    }
}

/// A password as read from `smtpPasswordFile`; prints as `[redacted]`.
public struct SMTPPassword: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public let value: String

    public init(_ value: String) { self.value = value }

    /// The file's content without the line end an editor leaves (one trailing "\n" or "\r\n").
    public init(contentsOfFile path: String) throws {
        var text = try String(contentsOfFile: path, encoding: .utf8)
        if text.hasSuffix("\n") { text.removeLast() }
        if text.hasSuffix("\r") { text.removeLast() }
        self.value = text
    }

    public var description: String { "[redacted]" }
    public var debugDescription: String { "[redacted]" }
    /// `dump` and `String(reflecting:)` of a value holding the password show no characters of it.
    public var customMirror: Mirror { Mirror(self, children: []) }
}

/// What the callbacks of one exchange read and record. Used by one curl_easy_perform at a time.
final class SMTPExchange {
    var body: [UInt8] = []
    var offset = 0
    var recipients: UnsafeMutablePointer<curl_slist>?
    var lastCommand: SMTPStage?
    var lastReply: String?
    var connected = false
    /// Cleared at the first 4xx/5xx reply and once curl_easy_perform has returned: what libcurl
    /// says after a refusal (QUIT, within perform or at cleanup) must not hide the stage and the
    /// reply that failed.
    var recording = true
}

private let readCallback: gatepass_curl_data_callback = { buffer, size, count, context in
    guard let buffer, let context else { return 0 }
    let exchange = Unmanaged<SMTPExchange>.fromOpaque(context).takeUnretainedValue()
    let length = min(size * count, exchange.body.count - exchange.offset)
    guard length > 0 else { return 0 } // the end of the message
    exchange.body.withUnsafeBytes { bytes in
        UnsafeMutableRawPointer(buffer).copyMemory(from: bytes.baseAddress! + exchange.offset, byteCount: length)
    }
    exchange.offset += length
    return length
}

private let commandStages: [String: SMTPStage] = [
    "EHLO": .ehlo, "HELO": .ehlo, "STARTTLS": .startTLS, "AUTH": .auth, "MAIL": .mailFrom,
    "RCPT": .recipient, "DATA": .data,
]

/// Keeps only the verb of each command (never its arguments: AUTH PLAIN carries the
/// credentials, and the lines after AUTH LOGIN are the credentials themselves, so a line whose
/// first word is not a known verb is dropped) and the server's last reply line, up to and
/// including the first refusal.
private let debugCallback: curl_debug_callback = { _, type, data, size, context in
    guard let data, let context else { return 0 }
    let exchange = Unmanaged<SMTPExchange>.fromOpaque(context).takeUnretainedValue()
    guard exchange.recording else { return 0 }
    let line = String(decoding: UnsafeRawBufferPointer(start: data, count: size), as: UTF8.self)
        .trimmingCharacters(in: .whitespacesAndNewlines)
    switch type {
    case CURLINFO_HEADER_OUT:
        let verb = line.prefix { $0 != " " }.uppercased()
        if let stage = commandStages[verb] { exchange.lastCommand = stage }
    case CURLINFO_HEADER_IN:
        exchange.connected = true
        exchange.lastReply = String(line.prefix(200))
        if line.first == "4" || line.first == "5" { exchange.recording = false }
    default:
        break
    }
    return 0
}
