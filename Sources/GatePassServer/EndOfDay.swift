import Foundation
import GatePassCore

extension GatePassApplication {
    /// The end-of-day check-out (api.md `autoCheckoutAt`): for each organization whose latest
    /// due moment (`AutoCheckout.latestDue`, in its zone, on the injected clock) has passed and
    /// not yet been run for, every visitor still CHECKED_IN who arrived by then is checked out
    /// at that moment, by `system`, with `visitor.departed` (no checkpoint). The day is recorded
    /// in the same transaction, so it runs once a day however often it is called; run at start
    /// it catches up after downtime.
    /// - Returns: how many visitors were checked out.
    @discardableResult
    public func runAutoCheckout() -> Int {
        let now = clock.now()
        do {
            let checkedOut = try store.write { tx -> Int in
                var total = 0
                for scheduled in try tx.autoCheckout.scheduled() {
                    let zone = scheduled.timeZone.flatMap(TimeZone.init(identifier:)) ?? self.timeZone
                    guard let due = AutoCheckout.latestDue(clockTime: scheduled.clockTime, zone: zone, now: now) else {
                        continue
                    }
                    // Days compare as text (YYYY-MM-DD): a clock set back never runs a day twice.
                    if let done = scheduled.doneOn, done >= due.day { continue }
                    total += try self.checkOutEveryone(organizationId: scheduled.organizationId, arrivedBy: due.instant,
                                                       now: now, tx)
                    try tx.autoCheckout.recordRun(organizationId: scheduled.organizationId, day: due.day)
                }
                return total
            }
            if checkedOut > 0 {
                eventHub.committed()
                moveAuditHead()
            }
            return checkedOut
        } catch {
            logSink.log("the automatic check-out failed (it is tried again within a minute): \(error)")
            return 0
        }
    }

    private func checkOutEveryone(organizationId: String, arrivedBy due: Date, now: Date, _ tx: any Transaction) throws -> Int {
        var departing: [VisitorRecord] = []
        var cursor: ListCursor?
        repeat {
            let page = try tx.visitors.onSite(organizationId: organizationId, after: cursor, limit: 500)
            departing += page.filter { ($0.visitor.checkedInAt ?? now) <= due }
            cursor = page.count == 500
                ? page.last.map { ListCursor(time: $0.visitor.checkedInAt?.milliseconds ?? 0, seq: $0.seq) } : nil
        } while cursor != nil
        for record in departing {
            let (result, updated) = CheckOut.decide(visitor: record.visitor, at: due)
            guard result == .checkedOut else { continue }
            try tx.visitors.changeState(updated, from: record.visitor)
            try audit(.visitorCheckOut, id: updated.id, .changed(from: record.visitor, to: updated), by: .system,
                      organizationId: organizationId, at: now, tx)
            try tx.events.appendVisitorEvent(.visitorDeparted, visitor: updated, organizationId: organizationId,
                                             checkpointId: nil, now: now)
        }
        return departing.count
    }
}
