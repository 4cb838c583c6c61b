import Foundation
import GatePassCore

/// `gatepass kiosk --config FILE`: the kiosk's settings in a JSON file, every key optional
/// (what it leaves out keeps its default), flags overriding it. `Config/kiosk.json` lists
/// every key with its default (a test keeps the two equal).
///
/// Strict: a key this build does not know, a value of the wrong type or out of range, is an
/// error naming it — a gate that silently ignored a misspelt `offlinePolicy` would admit
/// what its site meant it to refuse.
struct KioskConfiguration: Decodable, Equatable {
    /// Seconds a pass must be out of view before it counts again.
    var cooldown: Double = 3
    /// What the kiosk decides by itself while the server does not answer.
    var offlinePolicy: OfflinePolicy = .signed
    /// How long a scan's first try may take before the kiosk decides offline.
    var offlineAfterMs: Int = KioskRunner.defaultOfflineAfterMilliseconds

    static let cooldownRange: ClosedRange<Double> = 0...3600
    static let offlineAfterRange: ClosedRange<Int> = 100...60_000

    init() {}

    enum CodingKeys: String, CodingKey, CaseIterable { case cooldown, offlinePolicy, offlineAfterMs }

    /// Any key, to find the ones this build does not know.
    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        let all = try decoder.container(keyedBy: AnyKey.self)
        let known = Set(CodingKeys.allCases.map(\.rawValue))
        if let unknown = all.allKeys.map(\.stringValue).sorted().first(where: { !known.contains($0) }) {
            throw DecodingError.dataCorruptedError(forKey: AnyKey(stringValue: unknown), in: all,
                                                   debugDescription: NearestName.unknownKey(unknown, among: CodingKeys.allCases.map(\.rawValue)))
        }
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = KioskConfiguration()
        cooldown = try c.decodeIfPresent(Double.self, forKey: .cooldown) ?? defaults.cooldown
        if let policy = try c.decodeIfPresent(String.self, forKey: .offlinePolicy) {
            guard let known = OfflinePolicy(rawValue: policy) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .offlinePolicy, in: c,
                    debugDescription: "offlinePolicy must be one of \(OfflinePolicy.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            offlinePolicy = known
        } else {
            offlinePolicy = defaults.offlinePolicy
        }
        offlineAfterMs = try c.decodeIfPresent(Int.self, forKey: .offlineAfterMs) ?? defaults.offlineAfterMs
        guard Self.cooldownRange.contains(cooldown) else {
            throw DecodingError.dataCorruptedError(forKey: .cooldown, in: c, debugDescription: "cooldown must be 0 to 3600 seconds")
        }
        guard Self.offlineAfterRange.contains(offlineAfterMs) else {
            throw DecodingError.dataCorruptedError(forKey: .offlineAfterMs, in: c,
                                                   debugDescription: "offlineAfterMs must be 100 to 60000")
        }
    }

    /// The file at `path`, or a failure in one sentence naming it.
    static func load(path: String) throws -> KioskConfiguration {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandFailure("cannot read the kiosk configuration file \(path)")
        }
        do {
            return try JSONDecoder().decode(KioskConfiguration.self, from: data)
        } catch let DecodingError.dataCorrupted(context) where !context.codingPath.isEmpty {
            throw CommandFailure("\(path): \(TerminalText.visible(context.debugDescription))")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            let key = context.codingPath.map(\.stringValue).joined(separator: ".")
            throw CommandFailure("\(path): \(key.isEmpty ? "the file" : key) has the wrong type (\(TerminalText.visible(context.debugDescription)))")
        } catch {
            throw CommandFailure("\(path) is not a kiosk configuration: \(TerminalText.visible("\(error)"))")
        }
    }
}
