// swift-tools-version:6.0
import PackageDescription

// Layers, bottom to top (a target depends only on targets above it in this list):
//   C system libraries (CSQLite, CMicroHTTPD, COpenSSL, CQREncode, CFreeType, …)
//   GatePassCore       — the domain: no I/O, shared by server and clients
//   GatePassAPI        — the contract's endpoints (method, path, action), shared by server and clients
//   thin wrappers      — SQLite, Postgres (and LocalPostgres, a cluster of one's own), HTTPServer, GatePassCrypto, QRCode, GatePassPass (the pass drawn),
//                        GatePassMail (MIME builder; SMTP and .eml-folder transports)
//   GatePassServer     — the API service on top of the wrappers
//   GatePassConsole    — the console's screens over plain values (GatePassCore only); its
//                        adapters to the client core, files and camera are GatePassConsoleServices
//   GatePassCommands   — the command line (`gatepass …`)
//   executables        — gatepass, gatepass-bench (with WrkOutput, wrk's output read back), and
//                        gatepass-ceiling (C on libmicrohttpd alone: the bench's anchor)
let package = Package(
    name: "GatePass",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "gatepass", targets: ["gatepass"]),
        .executable(name: "gatepass-bench", targets: ["gatepass-bench"]),
        // The bench's C ceiling: a bare libmicrohttpd responder (Sources/gatepass-ceiling/main.c).
        .executable(name: "gatepass-ceiling", targets: ["gatepass-ceiling"]),
        // For the fuzzing package in Tests/Fuzz: another package reaches our modules only through products.
        .library(name: "GatePassFuzzable",
                 targets: ["GatePassCore", "GatePassServer", "GatePassClient", "GatePassScanner", "SQLite"]),
    ],
    targets: [
        // MARK: - C system libraries (Debian -dev packages, found through pkg-config)
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd",
                       providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto",
                       providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CQREncode", pkgConfig: "libqrencode",
                       providers: [.apt(["libqrencode-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl",
                       providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CZBar", pkgConfig: "zbar",
                       providers: [.apt(["libzbar-dev"])]),
        .systemLibrary(name: "CV4L2", pkgConfig: "libv4l2",
                       providers: [.apt(["libv4l-dev"])]),
        .systemLibrary(name: "CMagickWand", pkgConfig: "MagickWand",
                       providers: [.apt(["libmagickwand-dev"])]),
        .systemLibrary(name: "CFreeType", pkgConfig: "freetype2",
                       providers: [.apt(["libfreetype-dev"])]),
        .systemLibrary(name: "CNcursesw", pkgConfig: "ncursesw",
                       providers: [.apt(["libncurses-dev"])]),
        .systemLibrary(name: "CPostgres", pkgConfig: "libpq",
                       providers: [.apt(["libpq-dev"])]),
        // glibc's posix_spawn extensions (libc itself: nothing to install or link).
        .systemLibrary(name: "CSpawn"),
        // zxing-cpp 1.4 (libzxing-dev) behind a plain C header: C++17 inside, every exception caught,
        // so no Swift module needs C++ interop. The scanner's second decoder (issue 15).
        .target(name: "CZXingShim", linkerSettings: [.linkedLibrary("ZXing"), .linkedLibrary("stdc++")]),

        // MARK: - Domain
        .target(name: "GatePassCore"),
        // The contract: every endpoint's method, path and domain action, shared by server and client.
        .target(name: "GatePassAPI", dependencies: ["GatePassCore"]),

        // MARK: - Thin wrappers over the C libraries
        // The values bound to and read from SQL statements, and the shape of a transaction, shared by both
        // database wrappers.
        .target(name: "SQLBinding"),
        .target(name: "SQLite", dependencies: ["CSQLite", "SQLBinding"]),
        // The same API shape over libpq, so the store's repositories run one SQL text on either.
        .target(name: "Postgres", dependencies: ["CPostgres", "SQLBinding"]),
        // A PostgreSQL cluster started from the installed server binaries (initdb, pg_ctl through
        // posix_spawn) on a free loopback port: the tests' throw-away server and the bench's.
        .target(name: "LocalPostgres", dependencies: ["Postgres", "CSpawn"]),
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD", "GatePassCore"]),
        .target(name: "GatePassCrypto", dependencies: ["COpenSSL"]),
        .target(name: "QRCode", dependencies: ["CQREncode"]),
        .target(name: "CurlHTTP", dependencies: ["CCurl"]),
        // The pass in three forms (SVG, PNG, HTML page) from one layout; glyph outlines through
        // FreeType, the PNG through MagickWand.
        .target(name: "GatePassPass", dependencies: ["QRCode", "CFreeType", "CMagickWand"]),
        // GatePassCrypto: Ed25519 verification of GP2 passes for the kiosk's offline decisions.
        .target(name: "GatePassClient", dependencies: ["GatePassCore", "GatePassAPI", "CurlHTTP", "SQLite", "GatePassCrypto"]),
        .target(name: "GatePassScanner", dependencies: ["GatePassCore", "CZBar", "CV4L2", "CMagickWand", "CZXingShim"]),
        // Generated hard cases for the scanner (rotation, keystone, blur + noise + JPEG, light-on-dark,
        // small modules) and non-QR decoys, from a seed: shared by the scanner's tests and the bench.
        .target(name: "GatePassScannerCorpus", dependencies: ["GatePassScanner", "QRCode"]),
        // The console's screens: view models, keys and drawing over plain values (no HTTP, SQLite or files).
        .target(name: "GatePassConsole", dependencies: ["GatePassCore"]),
        .target(name: "CursesTerminal", dependencies: ["CNcursesw", "GatePassConsole", "GatePassCore"]),
        // What the screens ask of the world, over the client core, the file system and the camera.
        .target(name: "GatePassConsoleServices",
                dependencies: ["GatePassConsole", "GatePassClient", "GatePassCore", "GatePassScanner", "QRCode"]),

        // MARK: - Services and app
        .target(name: "GatePassServer",
                dependencies: ["GatePassCore", "GatePassAPI", "SQLite", "Postgres", "HTTPServer", "GatePassCrypto", "QRCode", "CSpawn",
                               "GatePassMail", "GatePassPass"]),
        .target(name: "GatePassCommands", dependencies: ["GatePassCore", "GatePassServer", "GatePassClient", "CurlHTTP",
                                                        "GatePassScanner", "GatePassConsole", "GatePassConsoleServices", "CursesTerminal",
                                                        "QRCode"]),
        .target(name: "LoopbackHTTP"),
        // Mail: the MIME builder (pure), the SMTP transport on CurlHTTP and the .eml folder of --dev.
        .target(name: "GatePassMail", dependencies: ["CurlHTTP"]),
        .executableTarget(name: "gatepass", dependencies: ["GatePassCommands"]),
        // The bare libmicrohttpd responder in C that `gatepass-bench server` measures the API against
        // (issue 15). CMicroHTTPD only for pkg-config's flags; it includes <microhttpd.h> itself.
        .executableTarget(name: "gatepass-ceiling", dependencies: ["CMicroHTTPD"]),
        // wrk's output read back into numbers (standard library only, so its test stays light).
        .target(name: "WrkOutput"),
        .executableTarget(name: "gatepass-bench",
                          dependencies: ["GatePassServer", "LoopbackHTTP", "HTTPServer", "GatePassCore", "GatePassAPI", "GatePassClient",
                                         "CurlHTTP", "GatePassScanner", "QRCode", "GatePassCommands", "CZBar",
                                         "GatePassConsole", "GatePassConsoleServices", "CursesTerminal",
                                         "GatePassPass", "CMagickWand", "Postgres", "LocalPostgres", "WrkOutput",
                                         "GatePassScannerCorpus",
                                         // Built with the bench, so the bench finds it beside itself.
                                         "gatepass-ceiling"]),

        // MARK: - Tests
        // What several test targets share: the SMTP sink (smtp_sink.py, python3-aiosmtpd) and the
        // external renderers (rsvg-convert, ImageMagick, cairosvg, Chromium) run one at a time.
        // LocalPostgres: the test process's one throw-away PostgreSQL cluster, shared by its tests.
        .target(name: "GatePassTestSupport", dependencies: ["GatePassCore", "GatePassScanner", "LocalPostgres"], path: "Tests/GatePassTestSupport",
                exclude: ["smtp_sink.py"]),
        .testTarget(name: "GatePassCoreTests", dependencies: ["GatePassCore"]),
        .testTarget(name: "GatePassServerTests",
                    dependencies: ["GatePassServer", "GatePassCore", "GatePassAPI", "LoopbackHTTP", "SQLite",
                                   "GatePassCrypto", "QRCode", "HTTPServer", "GatePassMail", "CurlHTTP",
                                   "GatePassScanner", "GatePassTestSupport", "LocalPostgres"]),
        .testTarget(name: "GatePassClientTests",
                    dependencies: ["GatePassClient", "GatePassServer", "GatePassCore", "CurlHTTP", "LoopbackHTTP",
                                   "HTTPServer", "SQLite", "GatePassCrypto"]),
        .testTarget(name: "CursesTerminalTests", dependencies: ["CursesTerminal", "GatePassConsole", "GatePassCore"]),
        .testTarget(name: "GatePassConsoleTests",
                    dependencies: ["GatePassConsole", "GatePassConsoleServices", "GatePassCore", "GatePassClient", "GatePassScanner",
                                   "QRCode"]),
        .testTarget(name: "GatePassScannerTests",
                    dependencies: ["GatePassScanner", "GatePassCore", "QRCode", "CQREncode", "GatePassScannerCorpus", "CZXingShim"]),
        .testTarget(name: "GatePassPassTests",
                    dependencies: ["GatePassPass", "QRCode", "GatePassScanner", "GatePassTestSupport"]),
        .testTarget(name: "GatePassCommandsTests",
                    dependencies: ["GatePassCommands", "GatePassServer", "GatePassClient", "GatePassCore", "CurlHTTP", "LoopbackHTTP",
                                   "HTTPServer", "GatePassScanner", "QRCode", "GatePassConsoleServices",
                                   // PostgresCluster, for gatepass db copy into a real PostgreSQL database.
                                   "GatePassTestSupport", "LocalPostgres"]),
        .testTarget(name: "PostgresTests", dependencies: ["Postgres", "SQLBinding", "GatePassTestSupport", "LocalPostgres"]),
        .testTarget(name: "WrkOutputTests", dependencies: ["WrkOutput"]),
        .testTarget(name: "GatePassMailTests", dependencies: ["GatePassMail", "CurlHTTP", "GatePassCore", "GatePassTestSupport"]),
    ],
    swiftLanguageModes: [.v6],
    // CZXingShim: zxing-cpp 1.4's headers need C++17.
    cxxLanguageStandard: .cxx17
)
