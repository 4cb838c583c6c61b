import Foundation

/// JSON with sorted keys. Foundation's encoder does not promise a key order, and a replayed
/// request must be byte-for-byte the request first sent: the server fingerprints the body
/// of every `Idempotency-Key`, and a different byte order would read as a different request.
public enum CanonicalJSON {
    public static func encode(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Our own value types always encode.
        return Array(try! encoder.encode(value))
    }

    public static func string(_ value: some Encodable) -> String { String(decoding: encode(value), as: UTF8.self) }
}
