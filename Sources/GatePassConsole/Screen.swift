import Foundation
import GatePassCore

/// What a screen asks the console shell to do after a key or an event.
public enum ScreenAction: Sendable, Equatable {
    /// Nothing visible changed.
    case none
    /// Draw again.
    case redraw
    /// Draw again and ring the terminal bell (a new pending visitor, a denial).
    case alert
    /// Open the detail of this visitor over the current screen.
    case openVisitor(id: String)
    /// Close this screen (Esc on a detail) and go back to the one under it.
    case back
    /// The session started (login screen) or ended (logout): the shell rebuilds its tabs.
    case sessionChanged
    /// Leave the console.
    case quit
}

/// One screen of the console: a view model over plain values. It holds no curses calls:
/// `render` draws on a `Canvas`, `handle` takes a `Key`, so tests drive it directly.
///
/// Screens are used from the console's one UI thread only. Network calls go through
/// `ConsoleServices`, which the shell backs with the client core (and tests with a fake).
public protocol ConsoleScreen: AnyObject {
    /// The tab or window title.
    var title: String { get }
    /// Every key the screen understands, for the `?` help: (key, what it does).
    var keyHelp: [(key: String, action: String)] { get }
    /// True while a text field or prompt has the keyboard: the shell then passes digits,
    /// `q`, `?` and Tab to the screen instead of treating them as its own keys.
    var isCapturingText: Bool { get }
    /// Draws the screen inside `area` of `canvas`.
    func render(into canvas: inout Canvas, area: Area)
    func handle(_ key: Key) -> ScreenAction
    /// A live event from the stream (already decoded); most screens refresh a list.
    func receive(_ event: ServerEvent) -> ScreenAction
    /// Called when the screen becomes visible (load or refresh its data).
    func appear() -> ScreenAction
    /// Called by the shell about every 100 ms with the current time, whether or not a key
    /// came: for highlights that fade, ages that tick, periodic refreshes. Return `.redraw`
    /// only when something visible changed.
    func tick(now: Date) -> ScreenAction
}

extension ConsoleScreen {
    public var isCapturingText: Bool { false }
    public func receive(_ event: ServerEvent) -> ScreenAction { .none }
    public func appear() -> ScreenAction { .none }
    public func tick(now: Date) -> ScreenAction { .none }
}
