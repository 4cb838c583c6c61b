import QRCode

/// The visitor's pass page: the pass SVG inline, and the same facts as text for screen readers
/// and for copying the code. Every outside string is cleaned (``PassText``) and HTML-escaped.
///
/// The page loads nothing (no script, image, font or style sheet from elsewhere), so the route
/// that serves it can send a Content-Security-Policy of `default-src 'none'` plus
/// `style-src` with the hash of ``styleSheet`` (the route's work, not yet written).
public enum PassHTML {
    /// The page's only style, inline in `<style>`: a route's CSP names its SHA-256.
    public static let styleSheet = """
    body{margin:0;background:#f2f2f2;font-family:sans-serif;color:#000}\
    main{max-width:105mm;margin:0 auto;padding:8px}\
    svg{display:block;width:100%;height:auto;background:#fff}\
    .facts{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}\
    .code{font:700 1.5em monospace;text-align:center;letter-spacing:.1em}
    """

    public static func page(_ layout: PassLayout, fonts: PassFonts) -> String {
        let content = layout.content
        func text(_ value: String) -> String { XML.escape(PassText.cleaned(value)) }
        let shortId = XML.escape(PassLayout.grouped(PassText.cleaned(content.shortId, limit: 24)))
        return """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="robots" content="noindex">
        <meta name="referrer" content="no-referrer">
        <title>Visitor pass \u{2014} \(text(content.siteName))</title>
        <style>\(styleSheet)</style>
        </head>
        <body>
        <main>
        \(PassSVG.element(layout, fonts: fonts, id: "pass"))\
        <dl class="facts">
        <dt>Site</dt><dd>\(text(content.siteName))</dd>
        <dt>Visitor</dt><dd>\(text(content.visitorName))</dd>
        <dt>Host</dt><dd>\(text(content.hostName))</dd>
        <dt>Valid</dt><dd>\(text(content.validity))</dd>
        </dl>
        <p class="code">\(shortId)</p>
        </main>
        </body>
        </html>

        """
    }
}
