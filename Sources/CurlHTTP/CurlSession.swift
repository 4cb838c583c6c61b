import CCurl
import Foundation
import Synchronization

/// A request for `CurlSession`.
public struct CurlRequest: Sendable {
    public var method: String
    public var url: String
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]?

    public init(method: String, url: String, headers: [(name: String, value: String)] = [], body: [UInt8]? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

public struct CurlResponse: Sendable {
    public var status: Int
    /// Header names in lower case; a repeated header keeps its last value.
    public var headers: [String: String]
    public var body: [UInt8]

    public init(status: Int, headers: [String: String], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Why a request got no HTTP answer at all. The raw libcurl code is kept for logs.
public enum TransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// DNS failure, connection refused, host unreachable: the server cannot be reached.
    case cannotConnect(url: String, detail: String)
    /// Connected (or trying) but no complete answer in time.
    case timedOut(url: String)
    /// TLS failed: certificate not trusted, name mismatch, handshake error.
    case tls(url: String, detail: String)
    /// The connection broke mid-exchange, or another transfer error.
    case failed(url: String, code: Int32, detail: String)
    /// The URL is malformed or uses a protocol other than http/https.
    case invalidURL(String)

    public var description: String {
        switch self {
        case .cannotConnect(let url, let detail): "cannot connect to \(url): \(detail)"
        case .timedOut(let url): "\(url) did not answer in time"
        case .tls(let url, let detail): "TLS failed for \(url): \(detail)"
        case .failed(let url, let code, let detail): "transfer with \(url) failed (curl \(code)): \(detail)"
        case .invalidURL(let url): "\(url) is not an http:// or https:// URL"
        }
    }
}

/// An HTTP client on one libcurl easy handle, so connections are kept alive and reused
/// between requests (libcurl's connection cache lives in the handle; see curl_easy_reset(3),
/// which keeps it).
///
/// Thread-safe: requests on one session are serialized by a lock.
public final class CurlSession: @unchecked Sendable {
    public struct Options: Sendable {
        /// libcurl's CURLOPT_CONNECTTIMEOUT_MS.
        public var connectTimeout: Duration = .seconds(3)
        /// libcurl's CURLOPT_TIMEOUT_MS (whole request).
        public var requestTimeout: Duration = .seconds(10)
        /// A PEM file of CA certificates to trust instead of the system's (CURLOPT_CAINFO).
        /// Verification itself can never be turned off.
        public var caFile: String?

        public init(connectTimeout: Duration = .seconds(3), requestTimeout: Duration = .seconds(10), caFile: String? = nil) {
            self.connectTimeout = connectTimeout
            self.requestTimeout = requestTimeout
            self.caFile = caFile
        }
    }

    public let options: Options
    // @unchecked: `handle` is used only while `lock` is held.
    private let handle: UnsafeMutableRawPointer
    private let lock = NSLock()

    static let globalInit: Bool = {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK
    }()

    public init(options: Options = Options()) {
        precondition(Self.globalInit, "curl_global_init failed")
        guard let handle = curl_easy_init() else { fatalError("curl_easy_init failed: out of memory") }
        self.handle = handle
        self.options = options
    }

    deinit { curl_easy_cleanup(handle) }

    /// Performs `request` and returns the answer, whatever its status.
    public func perform(_ request: CurlRequest) throws(TransportError) -> CurlResponse {
        let collector = Collector()
        try transfer(request, collector: collector, streaming: nil)
        return CurlResponse(status: collector.status, headers: collector.headers, body: collector.body)
    }

    /// Performs a streaming request: `onData` gets each chunk of the body as it arrives and
    /// returns false to stop. Used for server-sent events; the request timeout does not apply,
    /// a low-speed limit does (no byte for `idleTimeout` ends the transfer).
    ///
    /// `shouldStop` is asked about once a second even while no byte arrives (libcurl's
    /// CURLOPT_XFERINFOFUNCTION), so another thread can end an idle stream promptly; a
    /// stop ends the call without an error, like `onData` returning false.
    public func stream(_ request: CurlRequest, idleTimeout: Duration,
                       shouldStop: @escaping () -> Bool = { false },
                       onResponse: @escaping (Int, [String: String]) -> Bool,
                       onData: @escaping ([UInt8]) -> Bool) throws(TransportError) {
        let collector = Collector()
        collector.streaming = Collector.Streaming(onResponse: onResponse, onData: onData, shouldStop: shouldStop)
        try transfer(request, collector: collector, streaming: idleTimeout)
    }

    private func transfer(_ request: CurlRequest, collector: Collector, streaming idleTimeout: Duration?) throws(TransportError) {
        guard request.url.hasPrefix("http://") || request.url.hasPrefix("https://") else {
            throw .invalidURL(request.url)
        }
        lock.lock()
        defer { lock.unlock() }
        curl_easy_reset(handle)
        var headerList: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headerList) }
        for header in request.headers {
            headerList = curl_slist_append(headerList, "\(header.name): \(header.value)")
        }
        // libcurl sends "Expect: 100-continue" for larger bodies; the API never needs it.
        headerList = curl_slist_append(headerList, "Expect:")
        let body = request.body ?? []
        let code: CURLcode = body.withUnsafeBufferPointer { bodyBytes in
            withExtendedLifetime(collector) {
                setup(request, headerList: headerList, body: bodyBytes, collector: collector, idleTimeout: idleTimeout)
                return curl_easy_perform(handle)
            }
        }
        if collector.aborted { return }
        guard code == CURLE_OK else { throw Self.transportError(code, url: request.url) }
        var status = 0
        _ = gatepass_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        collector.status = status
    }

    private func setup(_ request: CurlRequest, headerList: UnsafeMutablePointer<curl_slist>?,
                       body: UnsafeBufferPointer<UInt8>, collector: Collector, idleTimeout: Duration?) {
        _ = gatepass_curl_setopt_string(handle, CURLOPT_URL, request.url)
        _ = gatepass_curl_setopt_long(handle, CURLOPT_PROTOCOLS, Int(CURLPROTO_HTTP | CURLPROTO_HTTPS))
        _ = gatepass_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = gatepass_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(options.connectTimeout))
        if let idleTimeout {
            _ = gatepass_curl_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, 1)
            _ = gatepass_curl_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, max(1, Self.milliseconds(idleTimeout) / 1000))
        } else {
            _ = gatepass_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, Self.milliseconds(options.requestTimeout))
        }
        // TLS verification stays on; a private CA is trusted by naming its file.
        _ = gatepass_curl_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 1)
        _ = gatepass_curl_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 2)
        if let caFile = options.caFile { _ = gatepass_curl_setopt_string(handle, CURLOPT_CAINFO, caFile) }
        _ = gatepass_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList)
        switch request.method {
        case "GET": _ = gatepass_curl_setopt_long(handle, CURLOPT_HTTPGET, 1)
        case "HEAD": _ = gatepass_curl_setopt_long(handle, CURLOPT_NOBODY, 1)
        default: _ = gatepass_curl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, request.method)
        }
        if request.body != nil || request.method == "POST" {
            _ = gatepass_curl_setopt_off_t(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count))
            _ = gatepass_curl_setopt_pointer(handle, CURLOPT_POSTFIELDS,
                                             UnsafeMutableRawPointer(mutating: body.baseAddress ?? UnsafePointer(bitPattern: 1)!))
        }
        let context = Unmanaged.passUnretained(collector).toOpaque()
        _ = gatepass_curl_setopt_callback(handle, CURLOPT_WRITEFUNCTION, writeCallback)
        _ = gatepass_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, context)
        _ = gatepass_curl_setopt_callback(handle, CURLOPT_HEADERFUNCTION, headerCallback)
        _ = gatepass_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, context)
        if collector.streaming != nil {
            _ = gatepass_curl_setopt_long(handle, CURLOPT_NOPROGRESS, 0)
            _ = gatepass_curl_setopt_xferinfo(handle, progressCallback)
            _ = gatepass_curl_setopt_pointer(handle, CURLOPT_XFERINFODATA, context)
        }
    }

    static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds) * 1000 + Int(duration.components.attoseconds / 1_000_000_000_000_000)
    }

    static func transportError(_ code: CURLcode, url: String) -> TransportError {
        let detail = String(cString: curl_easy_strerror(code))
        switch code {
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return .cannotConnect(url: url, detail: detail)
        case CURLE_OPERATION_TIMEDOUT:
            return .timedOut(url: url)
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
             CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_PINNEDPUBKEYNOTMATCH:
            return .tls(url: url, detail: detail)
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL:
            return .invalidURL(url)
        default:
            return .failed(url: url, code: Int32(code.rawValue), detail: detail)
        }
    }
}

/// What the callbacks fill in during one transfer.
final class Collector {
    struct Streaming {
        var onResponse: (Int, [String: String]) -> Bool
        var onData: ([UInt8]) -> Bool
        var shouldStop: () -> Bool
    }
    var status = 0
    var headers: [String: String] = [:]
    var body: [UInt8] = []
    var streaming: Streaming?
    var announced = false
    var aborted = false
}

private let writeCallback: gatepass_curl_data_callback = { data, size, count, context in
    guard let data, let context else { return 0 }
    let collector = Unmanaged<Collector>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    let bytes = UnsafeRawBufferPointer(start: data, count: length)
    guard let streaming = collector.streaming else {
        collector.body.append(contentsOf: bytes)
        return length
    }
    if !streaming.onData(Array(bytes)) {
        collector.aborted = true
        return 0 // makes libcurl stop with CURLE_WRITE_ERROR
    }
    return length
}

private let progressCallback: curl_xferinfo_callback = { context, _, _, _, _ in
    guard let context else { return 0 }
    let collector = Unmanaged<Collector>.fromOpaque(context).takeUnretainedValue()
    guard let streaming = collector.streaming, streaming.shouldStop() else { return 0 }
    collector.aborted = true
    return 1 // makes libcurl stop with CURLE_ABORTED_BY_CALLBACK
}

private let headerCallback: gatepass_curl_data_callback = { data, size, count, context in
    guard let data, let context else { return 0 }
    let collector = Unmanaged<Collector>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    let line = String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
        .trimmingCharacters(in: .whitespacesAndNewlines)
    if line.hasPrefix("HTTP/") {
        // A new response (after a redirect or 100 Continue): start over.
        collector.headers = [:]
        let parts = line.split(separator: " ")
        if parts.count >= 2, let status = Int(parts[1]) { collector.status = status }
    } else if line.isEmpty {
        if let streaming = collector.streaming, !collector.announced, collector.status >= 200 {
            collector.announced = true
            if !streaming.onResponse(collector.status, collector.headers) {
                collector.aborted = true
                return 0
            }
        }
    } else if let colon = line.firstIndex(of: ":") {
        collector.headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    return length
}
