import Foundation

/// Decides which of the codes a camera sees should be acted on, so that a pass held up to the
/// camera is checked in once, not once per frame.
///
/// The kiosk calls ``observe(_:at:)`` with the set of codes decoded from each frame and acts on
/// what it returns; around each check-in it calls ``beginProcessing(_:)`` and
/// ``finishProcessing(_:at:)``. No I/O, no threads, no clock of its own: every time is passed
/// in, so a test can play a frame sequence with made-up times.
///
/// ```swift
/// var deduplicator = CodeDeduplicator(cooldown: 3)
/// for code in deduplicator.observe(Set(decoded), at: clock.now()) where deduplicator.beginProcessing(code) {
///     checkIn(code)   // …then, when the answer is in:
///     deduplicator.finishProcessing(code, at: clock.now())
/// }
/// ```
///
/// ## The rules
///
/// - **New code**: a code with nothing remembered about it is reported in the first frame it
///   is in view.
/// - **Held code**: a code that stays in view is not reported again, however long it is held.
/// - **Out of view** starts at the time of the first frame in which the code is absent.
/// - **Return**: a code that comes back into view is reported again only if it was out of
///   view for at least `cooldown` (`frame time − first absent frame time ≥ cooldown`). A
///   shorter absence — one frame where zbar missed the code, a hand passing in front of it —
///   does not report it, and the code counts as held again from that frame: the next
///   absence has to last a full cooldown on its own.
/// - **In progress**: between ``beginProcessing(_:)`` and ``finishProcessing(_:at:)`` the code
///   is never reported, whether it stays, leaves or comes back.
/// - **After processing** the cooldown runs from the *later* of "left view" and "processing
///   finished". Why the later: the guard learns the result when processing finishes. A visitor
///   who lowers the pass while the check-in is in flight and raises it again to look at the
///   screen must not be checked in a second time, so the quiet period has to follow the
///   answer, not the moment the pass left the frame. A pass still in view when processing
///   finishes is simply held; its cooldown starts when it leaves.
/// - **Cooldown 0** reports a code on every reappearance, but still once while it is held.
///
/// ## Memory
///
/// A code that is out of view, not in progress and whose cooldown has fully run is forgotten
/// at the next frame. Forgetting it then loses nothing: it would be reported on its return
/// whether remembered or not. So memory follows what is in view and what was seen within the
/// last cooldown, not a day of traffic. On top of that at most `capacity` codes (default 256)
/// are remembered; when a new code would exceed that, the one seen least recently is
/// evicted (codes in progress are never evicted — forgetting one could check a pass in twice;
/// their number is bounded by the caller's check-ins in flight). The cap matters only for a
/// flood of distinct codes, e.g. a hostile screen cycling through them: an evicted code that
/// shows up again is reported again, which is the safe direction for a gate (the server
/// refuses a second check-in).
///
/// Codes are stored as they are, whatever their length (zbar decodes up to ~3 KB from one QR);
/// with the cap that is at most a few hundred kilobytes. Strings are compared the way Swift
/// compares them (canonical equivalence), so two spellings of the same Unicode text count as
/// one code.
///
/// Times should come from one clock that does not jump. If a frame's time is earlier than an
/// earlier frame's (a wall clock stepped back), absences look shorter: codes are held longer
/// and remembered longer (still within the cap), never reported early.
public struct CodeDeduplicator: Sendable {
    /// How long a code must be out of view before it is reported again, in seconds.
    public let cooldown: TimeInterval
    /// The most codes remembered at once (codes in progress aside).
    public let capacity: Int

    private struct Entry: Sendable {
        /// In view in the last observed frame.
        var inView: Bool
        /// The time of the first frame it was absent in; nil while in view.
        var leftViewAt: Date?
        /// Between `beginProcessing` and `finishProcessing`.
        var inProgress: Bool
        /// When processing last finished; cleared when the code is reported again.
        var finishedAt: Date?
        /// When it was last seen or begun, in `tick`s, for least-recently-seen eviction.
        var lastSeen: UInt64
    }

    private var entries: [String: Entry] = [:]
    /// Counts sightings and begin calls. Unlike frame times it never ties (a frame with several
    /// codes counts each in turn), so which code is evicted is always the same for the same input.
    private var tick: UInt64 = 0

    /// - Parameters:
    ///   - cooldown: seconds a code must be out of view before it is reported again; finite
    ///     and ≥ 0. A negative cooldown is a bug in the caller (the command line validates
    ///     user input before it gets here), so it traps rather than being clamped silently.
    ///   - capacity: the most codes remembered at once; ≥ 1.
    public init(cooldown: TimeInterval = 3, capacity: Int = 256) {
        precondition(cooldown.isFinite && cooldown >= 0, "the cooldown must be a finite number of seconds ≥ 0")
        precondition(capacity >= 1, "the deduplicator must remember at least one code")
        self.cooldown = cooldown
        self.capacity = capacity
    }

    // MARK: - Frames

    /// Records one frame and returns the codes to act on now, sorted by their text so the same
    /// frame always gives the same order.
    ///
    /// - Parameters:
    ///   - codesInView: every code decoded from the frame (empty when none was).
    ///   - now: the frame's time.
    public mutating func observe(_ codesInView: Set<String>, at now: Date) -> [String] {
        var report: [String] = []
        for code in codesInView.sorted() {
            tick &+= 1
            if var entry = entries[code] {
                if !entry.inView {
                    if !entry.inProgress, hasCooledDown(entry, at: now) {
                        report.append(code)
                        entry.finishedAt = nil
                    }
                    entry.inView = true
                    entry.leftViewAt = nil
                }
                entry.lastSeen = tick
                entries[code] = entry
            } else {
                report.append(code)
                insert(code, Entry(inView: true, leftViewAt: nil, inProgress: false, finishedAt: nil, lastSeen: tick))
            }
        }
        for (code, entry) in entries where entry.inView && !codesInView.contains(code) {
            entries[code]?.inView = false
            entries[code]?.leftViewAt = now
        }
        forgetCooledDown(at: now)
        return report
    }

    // MARK: - Processing lock

    /// Marks `code` as being processed (its check-in is in flight), so that it is not reported
    /// again until ``finishProcessing(_:at:)``.
    ///
    /// - Returns: false if `code` is already in progress — the caller must not process it a
    ///   second time.
    public mutating func beginProcessing(_ code: String) -> Bool {
        tick &+= 1
        if var entry = entries[code] {
            guard !entry.inProgress else { return false }
            entry.inProgress = true
            entry.lastSeen = tick
            entries[code] = entry
        } else {
            // A code begun without being observed (typed in, say) is treated as out of view;
            // its cooldown starts when processing finishes.
            insert(code, Entry(inView: false, leftViewAt: nil, inProgress: true, finishedAt: nil, lastSeen: tick))
        }
        return true
    }

    /// Ends the processing of `code`; from `now` (or from when it leaves view, if later) it
    /// must stay out of view for a cooldown before it is reported again.
    ///
    /// Finishing a code that is not in progress does nothing, so a `defer` on a path that
    /// never began (or already finished) cannot disturb the rules or stop the kiosk.
    public mutating func finishProcessing(_ code: String, at now: Date) {
        guard var entry = entries[code], entry.inProgress else { return }
        entry.inProgress = false
        entry.finishedAt = now
        entries[code] = entry
    }

    // MARK: - Inspection

    /// Whether `code` is between ``beginProcessing(_:)`` and ``finishProcessing(_:at:)``.
    public func isProcessing(_ code: String) -> Bool { entries[code]?.inProgress ?? false }

    /// How many codes are remembered now (in view, cooling down or in progress).
    public var rememberedCount: Int { entries.count }

    // MARK: - Internals

    /// Whether an out-of-view, not-in-progress entry has been quiet for a full cooldown,
    /// counted from the later of "left view" and "processing finished".
    private func hasCooledDown(_ entry: Entry, at now: Date) -> Bool {
        let quietSince: Date? = switch (entry.leftViewAt, entry.finishedAt) {
        case let (left?, finished?): max(left, finished)
        case let (left, finished): left ?? finished
        }
        // Out of view with neither time only happens while in progress, which callers rule
        // out first; if it did happen, reporting the code is better than losing a scan.
        guard let quietSince else { return true }
        return now.timeIntervalSince(quietSince) >= cooldown
    }

    private mutating func forgetCooledDown(at now: Date) {
        let forgettable = entries.compactMap { code, entry in
            entry.inView || entry.inProgress || !hasCooledDown(entry, at: now) ? nil : code
        }
        for code in forgettable { entries[code] = nil }
    }

    private mutating func insert(_ code: String, _ entry: Entry) {
        if entries.count >= capacity {
            var oldest: (code: String, lastSeen: UInt64)?
            for (code, entry) in entries where !entry.inProgress && entry.lastSeen < (oldest?.lastSeen ?? .max) {
                oldest = (code, entry.lastSeen)
            }
            if let oldest { entries[oldest.code] = nil }
        }
        entries[code] = entry
    }
}
