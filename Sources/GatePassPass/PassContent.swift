/// What a pass says, as plain strings from the outside world: nothing here is trusted.
///
/// ```swift
/// let content = PassContent(siteName: "Acme Works", visitorName: "Ada Lovelace",
///                           hostName: "Grace Hopper",
///                           validity: "01 Dec 2026 09:00–17:00 (Europe/Berlin)",
///                           shortId: "7K3QX9MZ", qrPayload: "GP1:7K3QX9MZ")
/// ```
public struct PassContent: Sendable, Equatable {
    /// The organization's name.
    public var siteName: String
    public var visitorName: String
    /// The host's name; empty when the visitor has none.
    public var hostName: String
    /// The validity window, already formatted in the site's time zone by the caller (the pass
    /// draws text; it knows neither clocks nor zones).
    public var validity: String
    /// The short id, for typing when the scan fails.
    public var shortId: String
    /// The QR code's text: `GP1:<shortId>` today, a signed GP2 text later. Encoded as given, in
    /// 8-bit mode; it is made by our own code, so a NUL in it (where libqrencode would stop
    /// reading) is a bug and traps in ``PassLayout``.
    public var qrPayload: String

    public init(siteName: String, visitorName: String, hostName: String, validity: String,
                shortId: String, qrPayload: String) {
        self.siteName = siteName
        self.visitorName = visitorName
        self.hostName = hostName
        self.validity = validity
        self.shortId = shortId
        self.qrPayload = qrPayload
    }
}

/// Turns an outside string into one safe line of text for the pass.
///
/// Dropped: control characters (C0, C1, DEL), format characters (bidi marks and overrides such
/// as U+200F and U+202E, zero-width joiners), surrogates, private-use and unassigned code
/// points; runs of white space (tabs, new lines, line and paragraph separators) become one
/// space; combining marks beyond two on one character are dropped (no "Zalgo" towers); the
/// result is at most `limit` scalars, ending in "…" when cut. The layout then shrinks or cuts the
/// line further to fit its width.
public enum PassText {
    public static let ellipsis: Unicode.Scalar = "\u{2026}"

    public static func cleaned(_ text: String, limit: Int = 160) -> String {
        var out = String.UnicodeScalarView()
        var pendingSpace = false
        var marksInARow = 0
        var kept = 0
        for scalar in text.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .spaceSeparator, .lineSeparator, .paragraphSeparator:
                pendingSpace = true
                continue
            case .control:
                if scalar == "\t" || scalar == "\n" || scalar == "\r" { pendingSpace = true }
                continue
            case .format, .surrogate, .privateUse, .unassigned:
                continue
            case .nonspacingMark, .enclosingMark, .spacingMark:
                guard kept > 0, marksInARow < 2 else { continue }
                marksInARow += 1
            default:
                marksInARow = 0
            }
            let space = pendingSpace && kept > 0
            if kept + (space ? 1 : 0) >= limit - 1 {
                out.append(ellipsis)
                return String(out)
            }
            if space {
                out.append(" ")
                kept += 1
            }
            pendingSpace = false
            out.append(scalar)
            kept += 1
        }
        return String(out)
    }
}
