import Foundation

/// The known name closest to a misspelt one, for errors such as "unknown key retentionDayz;
/// the nearest known key is retentionDays". Both configuration files (the server's and the
/// kiosk's) refuse a key they do not know with this hint.
public enum NearestName {
    /// The name among `known` with the smallest edit distance (Levenshtein, ignoring case) to
    /// `name`; the first in `known`'s order on a tie, nil when `known` is empty.
    public static func nearest(to name: String, among known: some Sequence<String>) -> String? {
        var best: (name: String, distance: Int)?
        for candidate in known {
            let distance = editDistance(name.lowercased(), candidate.lowercased())
            if best == nil || distance < best!.distance { best = (candidate, distance) }
        }
        return best?.name
    }

    /// The sentence both configuration files use for a key they do not know.
    public static func unknownKey(_ name: String, among known: some Sequence<String>) -> String {
        let shown = TerminalText.visible(name)
        guard let nearest = nearest(to: name, among: known) else { return "unknown key \(shown)" }
        return "unknown key \(shown); the nearest known key is \(nearest)"
    }

    /// Insertions, deletions and substitutions (of characters) that turn `a` into `b`.
    public static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        var previous = Array(0...b.count)
        var current = previous
        for i in 1...a.count {
            current[0] = i
            for j in stride(from: 1, through: b.count, by: 1) {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(substitution, previous[j] + 1, current[j - 1] + 1)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
