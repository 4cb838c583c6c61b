import Foundation
import GatePassCore

extension ShortID {
    /// A short id as this server stores it: canonical already. Any other spelling was not
    /// written by us, so it is not understood (even if a person's typing of it would be).
    init?(stored text: String) {
        guard let id = ShortID(text), id.rawValue == text else { return nil }
        self = id
    }
}

/// Conversions between the domain's types and the columns. Times are read back through the
/// row decoder (`SQLRow.date(named:)`), which refuses a value outside `StoredTime.range`.
extension Date {
    /// The stored form of a time. A date the server holds comes from its clock, from the API
    /// (RFC 3339, years 0000 to 9999) or from a stored time read within `StoredTime.range`,
    /// plus periods of days, so it is far inside what an Int64 of milliseconds holds
    /// (±292 million years); the conversion traps only beyond that.
    var milliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded(.down)) }
}

/// The counts the store keeps (a mail's attempts, an OTP's wrong tries): never negative, and
/// far below this in use. A value outside it was not written by this code (a negative count
/// of wrong tries would grant guesses beyond the limit), so it is refused as unreadable.
enum StoredCount {
    static let range = 0...Int(Int32.max)
}

/// A new UUID, version 7 (RFC 9562): 48 bits of Unix milliseconds, then 74 random bits
/// from the kernel's CSPRNG (getrandom, no file to open). Time-ordered ids land at the end
/// of their indexes instead of on random pages, which keeps inserts cheap.
func newIdentifier(now: Date = Date()) -> String {
    var generator = SystemRandomNumberGenerator()
    let milliseconds = UInt64(max(0, now.timeIntervalSince1970 * 1000))
    let random = generator.next() as UInt64
    let more = generator.next() as UInt64
    var bytes = [UInt8](repeating: 0, count: 16)
    for index in 0..<6 { bytes[index] = UInt8(truncatingIfNeeded: milliseconds >> (40 - 8 * UInt64(index))) }
    bytes[6] = 0x70 | UInt8(truncatingIfNeeded: random >> 60)          // version 7
    bytes[7] = UInt8(truncatingIfNeeded: random >> 52)
    bytes[8] = 0x80 | (UInt8(truncatingIfNeeded: random >> 44) & 0x3F)  // RFC 9562 variant
    for index in 9..<16 { bytes[index] = UInt8(truncatingIfNeeded: more >> (8 * UInt64(index - 9))) }
    let hex = Array("0123456789abcdef")
    var text = ""
    text.reserveCapacity(36)
    for (index, byte) in bytes.enumerated() {
        if index == 4 || index == 6 || index == 8 || index == 10 { text.append("-") }
        text.append(hex[Int(byte >> 4)])
        text.append(hex[Int(byte & 0x0F)])
    }
    return text
}
