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

/// Base64 with the URL-safe alphabet and no padding (RFC 4648 §5), for tokens and cursors.
public enum Base64URL {
    private static let symbols = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let values: [Int8] = {
        var table = [Int8](repeating: -1, count: 256)
        for (index, symbol) in symbols.enumerated() { table[Int(symbol)] = Int8(index) }
        return table
    }()

    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= bytes.count {
            let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            out += [symbols[Int(chunk >> 18 & 63)], symbols[Int(chunk >> 12 & 63)],
                    symbols[Int(chunk >> 6 & 63)], symbols[Int(chunk & 63)]]
            index += 3
        }
        let rest = bytes.count - index
        if rest == 1 {
            let chunk = UInt32(bytes[index]) << 16
            out += [symbols[Int(chunk >> 18 & 63)], symbols[Int(chunk >> 12 & 63)]]
        } else if rest == 2 {
            let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
            out += [symbols[Int(chunk >> 18 & 63)], symbols[Int(chunk >> 12 & 63)], symbols[Int(chunk >> 6 & 63)]]
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Nil for anything that is not canonical unpadded base64url.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let input = Array(text.utf8)
        guard input.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(input.count * 3 / 4)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in input {
            let value = values[Int(byte)]
            guard value >= 0 else { return nil }
            buffer = buffer << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(buffer >> UInt32(bits) & 0xFF))
            }
        }
        // Leftover bits must be zero, so every byte string has exactly one encoding.
        guard buffer & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return out
    }
}
