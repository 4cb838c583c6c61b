import Foundation
import GatePassCore
import HTTPServer

/// What one CSV export writes: its header, a row's line, and where the page after a row starts.
struct CSVTable<Row: Sendable>: Sendable {
    var header: String
    var line: @Sendable (Row) -> String
    var cursorAfter: @Sendable (Row) -> ListCursor
}

/// A row of the scan-history export: the scan with its names, and the clock of its site.
struct ScanExportRow: Sendable {
    var scan: ExportedScan
    var site: SiteClock
}

extension CSVTable where Row == ScanExportRow {
    /// `GET /api/admin/scan-history.csv`.
    static var scanHistory: Self {
        Self(header: ScanHistoryCSV.header, line: { ScanHistoryCSV.row($0.scan.named, site: $0.site) },
             cursorAfter: { ListCursor.after($0.scan) })
    }
}

enum CSVExport {
    /// Rows read from the store at a time.
    static let pageSize = 500
}

/// The body of a CSV export (`GET /api/admin/scan-history.csv`, `audit.csv`): rows are read
/// from the store one page at a time, when libmicrohttpd asks for more bytes (that is, as the socket drains), so an
/// export of 100,000 scans holds one page in memory, never the whole file, and no reader
/// connection is held between pages.
///
/// Each page is its own read transaction: a scan committed during a long export may appear
/// in it if it sorts after the rows already sent (the keyset cursor never repeats or skips
/// a row that was there when the export started).
final class CSVExportStream<Row: Sendable>: HTTPStreamBody, @unchecked Sendable {
    /// Reads one page after a cursor; the production one asks the store.
    typealias PageReader = @Sendable (_ after: ListCursor?, _ limit: Int) throws -> [Row]

    private let table: CSVTable<Row>
    private let readPage: PageReader
    private let rowLimit: Int
    private let pageSize: Int
    private let onError: @Sendable (any Error) -> Void

    // `lock` guards everything below: libmicrohttpd calls `read` from its pool threads, one
    // at a time per connection, but `finished` may come from another.
    private let lock = NSLock()
    private var pending: [UInt8]
    private var offset = 0
    private var cursor: ListCursor?
    private var rowsWritten = 0
    private var exhausted = false
    private var pages = 0

    /// How many pages have been read from the store so far (the first one included).
    var pagesRead: Int { lock.withLock { pages } }

    /// - Parameters:
    ///   - firstPage: rows already read by the handler (so that a bad filter or a broken
    ///     database is still a proper error answer, before the 200 is sent).
    ///   - onError: a page that cannot be read after the answer has started ends the body
    ///     early; the error is handed here to be logged.
    init(_ table: CSVTable<Row>, firstPage: [Row], rowLimit: Int, pageSize: Int = CSVExport.pageSize,
         readPage: @escaping PageReader, onError: @escaping @Sendable (any Error) -> Void) {
        self.table = table
        self.readPage = readPage
        self.rowLimit = rowLimit
        self.pageSize = pageSize
        self.onError = onError
        pending = Array(table.header.utf8)
        pages = 1
        append(firstPage)
    }

    /// Encodes `rows` into `pending` (up to the row limit) and moves the cursor past them.
    private func append(_ rows: [Row]) {
        let room = rowLimit - rowsWritten
        for row in rows.prefix(room) { pending += table.line(row).utf8 }
        rowsWritten += min(rows.count, room)
        if let last = rows.last { cursor = table.cursorAfter(last) }
        if rows.count < pageSize || rowsWritten >= rowLimit { exhausted = true }
    }

    // MARK: HTTPStreamBody

    // Never waits for anything but the store, so `wake` is never needed.
    func start(wake: @escaping @Sendable () -> Void) {}

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        lock.lock()
        defer { lock.unlock() }
        if offset == pending.count {
            guard !exhausted else { return nil }
            pending.removeAll(keepingCapacity: true)
            offset = 0
            do {
                let rows = try readPage(cursor, min(pageSize, rowLimit - rowsWritten))
                pages += 1
                append(rows)
            } catch {
                exhausted = true
                onError(error)
                return nil
            }
            if pending.isEmpty { return nil }
        }
        let count = min(buffer.count, pending.count - offset)
        pending.withUnsafeBytes { source in
            buffer.baseAddress!.copyMemory(from: source.baseAddress!.advanced(by: offset), byteCount: count)
        }
        offset += count
        return count
    }

    func finished() {
        lock.withLock {
            exhausted = true
            pending = []
            offset = 0
        }
    }
}
