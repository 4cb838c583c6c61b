import COpenSSL

/// A failure of libcrypto (only the random generator can fail in practice).
public struct CryptoError: Error, Sendable, CustomStringConvertible {
    public var operation: String
    public var description: String { "libcrypto failed: \(operation)" }
}

/// HMAC-SHA256 through OpenSSL's one-shot `HMAC()` (see HMAC(3ssl)).
public enum HMACSHA256 {
    public static let outputLength = 32

    public static func authenticate(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 32
        let produced = key.withUnsafeBytes { keyBytes in
            message.withUnsafeBytes { messageBytes in
                output.withUnsafeMutableBytes { outputBytes in
                    HMAC(gatepass_sha256(), keyBytes.baseAddress, Int32(keyBytes.count),
                         messageBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), messageBytes.count,
                         outputBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), &length)
                }
            }
        }
        // HMAC() fails only on allocation failure or a missing digest: a broken runtime.
        precondition(produced != nil && length == 32, "HMAC-SHA256 failed")
        return output
    }

    public static func authenticate(key: [UInt8], message: String) -> [UInt8] {
        authenticate(key: key, message: Array(message.utf8))
    }
}

/// SHA-256 through OpenSSL's one-shot `EVP_Digest` (see EVP_DigestInit(3ssl)).
public enum SHA256 {
    public static func hash(_ message: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 32
        let status = message.withUnsafeBytes { messageBytes in
            output.withUnsafeMutableBytes { outputBytes in
                EVP_Digest(messageBytes.baseAddress, messageBytes.count,
                           outputBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), &length, gatepass_sha256(), nil)
            }
        }
        precondition(status == 1 && length == 32, "SHA-256 failed")
        return output
    }
}

/// SHA-256 over data given piece by piece (`EVP_DigestInit_ex`, `EVP_DigestUpdate`,
/// `EVP_DigestFinal_ex`; see EVP_DigestInit(3ssl)), for inputs too large to hold at once,
/// such as every row of a table.
///
/// Not `Sendable`: one owner feeds it. The context is freed in `deinit` (it holds no lock,
/// file or connection, only memory).
public final class SHA256Hasher {
    private let context: OpaquePointer
    private var finished = false

    public init() {
        guard let context = EVP_MD_CTX_new() else { preconditionFailure("EVP_MD_CTX_new failed: out of memory") }
        precondition(EVP_DigestInit_ex(context, gatepass_sha256(), nil) == 1, "EVP_DigestInit_ex failed")
        self.context = context
    }

    deinit { EVP_MD_CTX_free(context) }

    public func update(_ bytes: [UInt8]) {
        precondition(!finished, "SHA256Hasher fed after finalize()")
        let status = bytes.withUnsafeBytes { EVP_DigestUpdate(context, $0.baseAddress, $0.count) }
        precondition(status == 1, "EVP_DigestUpdate failed")
    }

    /// The digest of everything fed so far; the hasher takes nothing more afterwards.
    public func finalize() -> [UInt8] {
        precondition(!finished, "SHA256Hasher finalized twice")
        finished = true
        var output = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 32
        let status = output.withUnsafeMutableBytes {
            EVP_DigestFinal_ex(context, $0.baseAddress?.assumingMemoryBound(to: UInt8.self), &length)
        }
        precondition(status == 1 && length == 32, "EVP_DigestFinal_ex failed")
        return output
    }
}

/// Bytes from OpenSSL's CSPRNG (`RAND_bytes`, see RAND_bytes(3ssl)).
public enum SecureRandom {
    public static func bytes(_ count: Int) throws(CryptoError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: count)
        let status = output.withUnsafeMutableBytes {
            RAND_bytes($0.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(count))
        }
        guard status == 1 else { throw CryptoError(operation: "RAND_bytes") }
        return output
    }
}

/// Comparison whose time does not depend on where the inputs differ (`CRYPTO_memcmp`),
/// for OTPs and signatures.
public func constantTimeEquals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
    guard lhs.count == rhs.count else { return false }
    if lhs.isEmpty { return true }
    return lhs.withUnsafeBytes { left in
        rhs.withUnsafeBytes { right in
            CRYPTO_memcmp(left.baseAddress, right.baseAddress, left.count) == 0
        }
    }
}

