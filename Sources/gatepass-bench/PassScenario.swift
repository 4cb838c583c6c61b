import CMagickWand
import Foundation
import GatePassAPI
import GatePassPass
import GatePassServer
import LoopbackHTTP

// MARK: - The passes scenario (issue 11: the pass in three forms)

struct PassReport: Codable, Sendable {
    var renders: Int
    /// The anchor: ImageMagick encoding a blank page of the pass's size as PNG, the floor of the PNG form.
    var blankPNGAnchorP50Milliseconds: Double
    var svgP50Milliseconds: Double
    var pngP50Milliseconds: Double
    var pngP95Milliseconds: Double
    var pageP50Milliseconds: Double
    var pngRatioToAnchor: Double
    var pngBytes: Int
    var svgBytes: Int
    /// Over HTTP, one connection: GET pass.png against GET /api/healthz in turn.
    var httpPassPNGP50Milliseconds: Double
    var httpHealthzP50Milliseconds: Double
}

/// Times each form of one realistic pass `--passes K` times (default 200), interleaved with
/// the anchor, then GET pass.png against GET /api/healthz on an in-process server.
func runPassScenario(_ options: Options) throws -> PassReport {
    let fonts = try PassFonts.dejaVu()
    let content = PassContent(siteName: "Acme Works — Bucharest", visitorName: "Ana-Maria Popescu-Ionescu",
                              hostName: "Olivia Owner", validity: "Tue 1 Dec 2026 09:00–17:00 (Europe/Bucharest)",
                              shortId: "K7Q2M9XD", qrPayload: "GP1:K7Q2M9XD")
    let layout = try PassLayout(content: content, fonts: fonts)
    MagickWandGenesis()
    func blankPNG() -> Int {
        let wand = NewMagickWand()!
        defer { DestroyMagickWand(wand) }
        let white = NewPixelWand()!
        defer { DestroyPixelWand(white) }
        PixelSetColor(white, "#ffffff")
        MagickNewImage(wand, PassLayout.pageWidth, PassLayout.pageHeight, white)
        MagickSetImageFormat(wand, "PNG")
        var length = 0
        let blob = MagickGetImageBlob(wand, &length)
        MagickRelinquishMemory(blob)
        return length
    }
    func time(_ body: () throws -> Void) rethrows -> Double {
        let start = monotonicNanoseconds()
        try body()
        return Double(monotonicNanoseconds() - start) / 1e6
    }
    var anchor: [Double] = [], svg: [Double] = [], png: [Double] = [], page: [Double] = []
    var pngBytes = 0, svgBytes = 0
    progress("passes: \(options.passes) renders of each form, interleaved with the anchor")
    for _ in 0..<options.passes {
        anchor.append(time { _ = blankPNG() })
        svg.append(time { svgBytes = PassSVG.document(layout, fonts: fonts).utf8.count })
        png.append(try time { pngBytes = try PassPNG.data(layout, fonts: fonts).count })
        page.append(time { _ = PassHTML.page(layout, fonts: fonts) })
    }

    // Over HTTP: the route reads the visitor, draws after the read.
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatepass-bench-passes-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var configuration = ServerConfiguration()
    // It seeds and scans at machine speed with one user and one scanner token, far beyond the
    // per-principal limits meant for people and gates (tested apart in RateLimitTests).
    configuration.limits.enabled = false
    configuration.database = directory + "/server.db"
    configuration.port = 0
    let server = try GatePassServer(configuration: configuration, devMode: true, logSink: SilentLog())
    defer { server.stop() }
    try DemoData.seed(store: server.store, now: Date(), timeZone: .current)
    let token = try login(email: "owner@demo.gatepass", port: server.port)
    let http = LoopbackHTTPClient(host: "127.0.0.1", port: server.port, timeoutSeconds: 30)
    let created = try http.send("POST", Endpoint.visitorsCreate.path(), token: token,
                                json: ["name": content.visitorName, "hostName": content.hostName])
    guard let id = created.json?["id"] as? String else { throw BenchFailure("POST /api/visitors answered \(created.status)") }
    var viaHTTP: [Double] = [], healthz: [Double] = []
    for _ in 0..<max(options.passes / 4, 10) {
        try viaHTTP.append(time {
            let answer = try http.get(Endpoint.visitorsPassPNG.path(id), token: token)
            guard answer.status == 200 else { throw BenchFailure("pass.png answered \(answer.status)") }
        })
        try healthz.append(time { _ = try http.get(Endpoint.healthz.path()) })
    }
    let anchorMedian = percentile(anchor, 0.5)
    return PassReport(renders: options.passes, blankPNGAnchorP50Milliseconds: anchorMedian,
                      svgP50Milliseconds: percentile(svg, 0.5), pngP50Milliseconds: percentile(png, 0.5),
                      pngP95Milliseconds: percentile(png, 0.95), pageP50Milliseconds: percentile(page, 0.5),
                      pngRatioToAnchor: percentile(png, 0.5) / anchorMedian, pngBytes: pngBytes, svgBytes: svgBytes,
                      httpPassPNGP50Milliseconds: percentile(viaHTTP, 0.5), httpHealthzP50Milliseconds: percentile(healthz, 0.5))
}

func printPassReport(_ report: PassReport) {
    func ms(_ value: Double) -> String { String(format: "%.2f ms", value) }
    print("""
    passes (\(report.renders) renders of each form)
      anchor: blank 1240x1748 PNG encode  p50 \(ms(report.blankPNGAnchorP50Milliseconds))
      pass.svg                            p50 \(ms(report.svgP50Milliseconds))  (\(report.svgBytes) bytes)
      pass.png                            p50 \(ms(report.pngP50Milliseconds))  p95 \(ms(report.pngP95Milliseconds))  (\(report.pngBytes) bytes)  ratio to anchor \(String(format: "%.2f", report.pngRatioToAnchor))
      pass page (HTML)                    p50 \(ms(report.pageP50Milliseconds))
      GET pass.png over HTTP              p50 \(ms(report.httpPassPNGP50Milliseconds))  (GET /api/healthz p50 \(ms(report.httpHealthzP50Milliseconds)))
    """)
}
