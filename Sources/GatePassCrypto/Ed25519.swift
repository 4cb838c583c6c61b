import COpenSSL

/// Ed25519 signatures through OpenSSL's EVP API (EVP_PKEY_new_raw_private_key(3ssl),
/// EVP_DigestSign(3ssl)): keys are their raw 32 bytes, signatures 64 bytes. Ed25519 hashes the
/// message itself, so the digest given to EVP is none.
public enum Ed25519 {
    public static let keyLength = 32
    public static let signatureLength = 64

    /// A private key and its public key.
    public struct KeyPair: Sendable, Equatable {
        public var privateKey: [UInt8]
        public var publicKey: [UInt8]
    }

    /// A new key pair from OpenSSL's generator.
    public static func generate() throws(CryptoError) -> KeyPair {
        guard let context = EVP_PKEY_CTX_new_id(gatepass_ed25519_type(), nil) else {
            throw CryptoError(operation: "EVP_PKEY_CTX_new_id(Ed25519)")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_keygen(context, &key) == 1, let key else {
            throw CryptoError(operation: "EVP_PKEY_keygen(Ed25519)")
        }
        defer { EVP_PKEY_free(key) }
        let privateKey = try raw(key, EVP_PKEY_get_raw_private_key, "private")
        return KeyPair(privateKey: privateKey, publicKey: try raw(key, EVP_PKEY_get_raw_public_key, "public"))
    }

    /// The public key of a private key.
    public static func publicKey(of privateKey: [UInt8]) throws(CryptoError) -> [UInt8] {
        let key = try privateKeyObject(privateKey)
        defer { EVP_PKEY_free(key) }
        return try raw(key, EVP_PKEY_get_raw_public_key, "public")
    }

    public static func sign(_ message: [UInt8], privateKey: [UInt8]) throws(CryptoError) -> [UInt8] {
        let key = try privateKeyObject(privateKey)
        defer { EVP_PKEY_free(key) }
        guard let context = EVP_MD_CTX_new() else { throw CryptoError(operation: "EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        var signature = [UInt8](repeating: 0, count: signatureLength)
        var length = signatureLength
        let status = message.withUnsafeBytes { bytes in
            signature.withUnsafeMutableBytes { out in
                EVP_DigestSignInit(context, nil, nil, nil, key) == 1
                    ? EVP_DigestSign(context, out.baseAddress?.assumingMemoryBound(to: UInt8.self), &length,
                                     bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count)
                    : 0
            }
        }
        guard status == 1, length == signatureLength else { throw CryptoError(operation: "EVP_DigestSign(Ed25519)") }
        return signature
    }

    /// Whether `signature` is `publicKey`'s signature of `message`. A key or signature of the
    /// wrong length is simply not valid (it comes from outside: a scanned code, a downloaded key).
    public static func verify(_ signature: [UInt8], of message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard signature.count == signatureLength, publicKey.count == keyLength else { return false }
        let key = publicKey.withUnsafeBytes {
            EVP_PKEY_new_raw_public_key(gatepass_ed25519_type(), nil, $0.baseAddress?.assumingMemoryBound(to: UInt8.self), $0.count)
        }
        guard let key else { return false }
        defer { EVP_PKEY_free(key) }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        let status = message.withUnsafeBytes { bytes in
            signature.withUnsafeBytes { sig in
                EVP_DigestVerifyInit(context, nil, nil, nil, key) == 1
                    ? EVP_DigestVerify(context, sig.baseAddress?.assumingMemoryBound(to: UInt8.self), sig.count,
                                       bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count)
                    : 0
            }
        }
        return status == 1
    }

    private static func privateKeyObject(_ privateKey: [UInt8]) throws(CryptoError) -> OpaquePointer {
        guard privateKey.count == keyLength else { throw CryptoError(operation: "an Ed25519 private key is 32 bytes") }
        let key = privateKey.withUnsafeBytes {
            EVP_PKEY_new_raw_private_key(gatepass_ed25519_type(), nil, $0.baseAddress?.assumingMemoryBound(to: UInt8.self), $0.count)
        }
        guard let key else { throw CryptoError(operation: "EVP_PKEY_new_raw_private_key(Ed25519)") }
        return key
    }

    private typealias RawGetter = (OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<Int>?) -> Int32

    private static func raw(_ key: OpaquePointer, _ getter: RawGetter, _ which: String) throws(CryptoError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: keyLength)
        var length = keyLength
        let status = bytes.withUnsafeMutableBufferPointer { getter(key, $0.baseAddress, &length) }
        guard status == 1, length == keyLength else { throw CryptoError(operation: "EVP_PKEY_get_raw_\(which)_key") }
        return bytes
    }
}
