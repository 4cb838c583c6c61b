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
