import Foundation
import GatePassCore
import HTTPServer
import Testing
@testable import GatePassServer

/// The page's own origin: a second loopback server that serves one HTML page and hears the
/// page's reports (`/report?step=…`). `/hold` is an image of the page that is answered only
/// after `release()`: it keeps the page's load event (and so Chromium's `--dump-dom`) waiting
/// until the test has seen what it waits for, with no timer anywhere.
final class BrowserPageServer: HTTPResponder {
    private let page: [UInt8]
    private let state = Locked<(steps: [String], held: [@Sendable (HTTPResponse) -> Void], released: Bool)>(([], [], false))
    /// Signalled after each report.
    let changes = ChangeSignal()

    init(page: String) { self.page = Array(page.utf8) }

    var steps: [String] { state.withLock { $0.steps } }

    func respond(to request: HTTPRequest, reply: @escaping @Sendable (HTTPResponse) -> Void) {
        switch request.path {
        case "/":
            reply(HTTPResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store")],
                               body: page))
        case "/report":
            let step = request.query["step"] ?? "?"
            state.withLock { $0.steps.append(step) }
            changes.signal()
            reply(HTTPResponse(status: 204))
        case "/hold":
            let answerNow = state.withLock { table -> Bool in
                if !table.released { table.held.append(reply) }
                return table.released
            }
            if answerNow { reply(HTTPResponse(status: 204)) }
        default:
            reply(HTTPResponse(status: 404))
        }
    }

    /// Answers `/hold`, now and from now on: the page finishes loading.
    func release() {
        let held = state.withLock { table -> [@Sendable (HTTPResponse) -> Void] in
            table.released = true
            defer { table.held = [] }
            return table.held
        }
        for reply in held { reply(HTTPResponse(status: 204)) }
    }
}

/// A page from another origin, as a browser client of the API would be written: it logs in
/// (dev mode's peek stands in for reading the mail), lists the visitors with `fetch`, registers
/// one twice with one `Idempotency-Key` and reads `Idempotent-Replayed`, reads a 401's body,
/// gets an event ticket and follows `/api/events?ticket=` with `EventSource`. It writes what it
/// saw into the DOM (with `textContent`: server text is never parsed as HTML) and reports
/// `opened` when the stream is open and `done` or `failed` at the end.
let browserClientPage = #"""
<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Gate Pass from another origin</title></head>
<body>
<ul id="visitors"></ul>
<ul id="checks"></ul>
<ul id="events"></ul>
<p id="status">starting</p>
<img src="/hold" alt="" width="1" height="1">
<script>
const settings = new URLSearchParams(location.hash.slice(1));
const api = settings.get('api');
const email = settings.get('email');
function add(list, text) {
  const item = document.createElement('li');
  item.textContent = text;
  document.getElementById(list).appendChild(item);
}
function report(step) { return fetch('/report?step=' + encodeURIComponent(step)); }
async function call(method, path, token, body, extraHeaders) {
  const headers = Object.assign({}, extraHeaders || {});
  if (token) headers['Authorization'] = 'Bearer ' + token;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(api + path, {method, headers, body: body === undefined ? undefined : JSON.stringify(body)});
  const text = await response.text();
  if (!response.ok) throw new Error(method + ' ' + path + ' answered ' + response.status + ': ' + text);
  return {json: text ? JSON.parse(text) : null, headers: response.headers};
}
async function main() {
  await call('POST', '/api/auth/send-otp', null, {email});
  const peek = await call('GET', '/api/auth/dev-peek-otp?email=' + encodeURIComponent(email));
  const login = (await call('POST', '/api/auth/verify-otp', null, {email, otp: peek.json.otp})).json;
  const key = {'Idempotency-Key': 'browser-page-1'};
  await call('POST', '/api/visitors', login.token, {name: 'Browser Guest'}, key);
  const again = await call('POST', '/api/visitors', login.token, {name: 'Browser Guest'}, key);
  add('checks', 'replayed: ' + again.headers.get('Idempotent-Replayed'));
  const denied = await fetch(api + '/api/auth/me');
  add('checks', 'without a token: ' + denied.status + ' ' + (await denied.json()).error.code);
  const list = (await call('GET', '/api/visitors', login.token)).json;
  for (const visitor of list.items) add('visitors', visitor.name);
  const ticket = (await call('POST', '/api/events/ticket', login.token, {})).json;
  const events = new EventSource(api + '/api/events?ticket=' + encodeURIComponent(ticket.ticket));
  events.onopen = () => report('opened');
  events.onerror = () => {
    if (events.readyState === EventSource.CLOSED) {
      document.getElementById('status').textContent = 'failed: the event stream was refused';
      report('failed');
    }
  };
  events.addEventListener('visitor.arrived', (event) => {
    add('events', 'visitor.arrived: ' + JSON.parse(event.data).visitor.name);
    events.close();
    document.getElementById('status').textContent = 'done';
    report('done');
  });
}
main().catch((error) => {
  document.getElementById('status').textContent = 'failed: ' + error.message;
  report('failed');
});
</script>
</body></html>
"""#

/// Headless Chromium, in a profile of its own, for at most two minutes (`timeout` ends one
/// that hangs): its standard output (the DOM, with `--dump-dom`) once it has exited.
final class HeadlessChromium {
    private let process = Process()
    private let output = Pipe()
    private let errors = Pipe()
    private let collected = Locked<(out: Data, err: Data)>((Data(), Data()))
    private let readersDone = DispatchGroup()

    init(arguments: [String], profile: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["timeout", "120", "chromium", "--headless=new", "--no-sandbox", "--disable-gpu",
                             "--no-first-run", "--user-data-dir=\(profile)"] + arguments
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Both pipes are drained as they fill, so Chromium never blocks on a full pipe.
        for (pipe, isOutput) in [(output, true), (errors, false)] {
            readersDone.enter()
            DispatchQueue.global().async { [collected, readersDone] in
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                collected.withLock { if isOutput { $0.out = data } else { $0.err = data } }
                readersDone.leave()
            }
        }
    }

    /// Waits for the process to end; its exit status, standard output and standard error.
    func finish() -> (status: Int32, output: String, errors: String) {
        process.waitUntilExit()
        readersDone.wait()
        let (out, err) = collected.withLock { $0 }
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }
}

/// Chromium, a page from a second loopback origin, and the API with that origin in
/// `corsOrigins` — or, to show that the listing is what lets it in, with another one. One
/// Chromium at a time: it takes both cores for a moment.
@Suite(.serialized) struct BrowserClientTests {
    @Test(arguments: [true, false])
    func aPageFromAnotherOriginListsVisitorsAndFollowsEvents(originIsListed: Bool) throws {
        let pageServer = BrowserPageServer(page: browserClientPage)
        let pages = HTTPServer(configuration: .init(port: 0, threads: 2), responder: pageServer)
        let pagePort = try pages.start()
        defer {
            pageServer.release()
            pages.stop(grace: .seconds(1))
        }
        let pageOrigin = "http://127.0.0.1:\(pagePort)"
        // The unlisted case lists the page's host on another port: same host, another origin.
        let listed = originIsListed ? pageOrigin : "http://127.0.0.1:\(pagePort == 65_535 ? 1 : pagePort + 1)"
        try withSite(configure: { $0.corsOrigins = [listed] }) { server, site in
            try server.addUser("browser@acme.test", role: .admin, name: "Bea Browser")
            let arriving = try server.createVisitor(site.ownerToken, ["name": "Ada Lovelace"])
            _ = try server.createVisitor(site.ownerToken, ["name": "Grace Hopper"])
            let dom = try withTemporaryDirectory { folder in
                let fragment = "api=\(server.server.baseURL)&email=browser@acme.test"
                let chromium = try HeadlessChromium(arguments: ["--dump-dom", "\(pageOrigin)/#\(fragment)"],
                                                    profile: folder + "/profile")
                // Generous bounds that only catch a hang: the page reports each step itself.
                let reported = pageServer.changes.wait(timeout: 90) {
                    pageServer.steps.contains("opened") || pageServer.steps.contains("failed")
                }
                if reported && pageServer.steps.contains("opened") {
                    // The event the page waits for, caused here: the visitor arrives at the gate.
                    #expect(try server.checkIn(site.scanner, arriving["shortId"] as! String).string("result") == "CHECKED_IN")
                    _ = pageServer.changes.wait(timeout: 60) {
                        pageServer.steps.contains("done") || pageServer.steps.contains("failed")
                    }
                }
                pageServer.release()
                let (status, dom, errors) = chromium.finish()
                #expect(status == 0, "chromium exited \(status): \(errors.suffix(2000))")
                return dom
            }
            let lines = server.log.all
            guard originIsListed else {
                // The first request (send-otp's preflight) is refused, and the page stops there.
                #expect(pageServer.steps == ["failed"], "steps: \(pageServer.steps); DOM: \(dom)")
                #expect(dom.contains(#"<p id="status">failed: "#) && !dom.contains("<li>"), "\(dom)")
                #expect(!lines.contains { $0.contains("browser@acme.test") }, "no code was sent: \(lines)")
                #expect(!lines.contains { $0.hasPrefix("OPTIONS (preflight)") })
                return
            }
            #expect(pageServer.steps == ["opened", "done"], "steps: \(pageServer.steps); DOM: \(dom)")
            #expect(dom.contains(#"<p id="status">done</p>"#), "\(dom)")
            for name in ["Ada Lovelace", "Grace Hopper", "Browser Guest"] {
                #expect(dom.contains("<li>\(name)</li>"), "\(name) is listed: \(dom)")
            }
            #expect(dom.contains("<li>replayed: true</li>"), "Idempotent-Replayed is exposed: \(dom)")
            #expect(dom.contains("<li>without a token: 401 UNAUTHORIZED</li>"), "an error's body is readable: \(dom)")
            #expect(dom.contains("<li>visitor.arrived: Ada Lovelace</li>"), "the event arrived: \(dom)")
            #expect(lines.contains { $0.hasPrefix("OPTIONS (preflight) 204 ") }, "the browser asked before its POSTs")
            #expect(lines.contains { $0.hasPrefix("GET /api/events 200 ") })
            #expect(!lines.contains { $0.contains("ticket=") || $0.contains("gpe1.") }, "no ticket in the log")
        }
    }
}
