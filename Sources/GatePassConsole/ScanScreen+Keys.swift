import Foundation
import GatePassCore

// The Scan screen's keys: the short-id field, the approval question and the recent list.

extension ScanScreen {
    public func handle(_ key: Key) -> ScreenAction {
        if showingHelp {
            // Any key closes the help, like the shell's.
            showingHelp = false
            return .redraw
        }
        if key == .resize { return .redraw }
        if walkIn != nil { return handleWalkIn(key) }
        if lookup != nil { return handleLookup(key) }
        if question != nil { return handleQuestion(key) }
        switch focus {
        case .shortId: return handleShortIdField(key)
        case .recent: return handleRecentList(key)
        }
    }

    private func handleQuestion(_ key: Key) -> ScreenAction {
        switch key {
        case .character("y"), .character("Y"): return answerQuestion(request: true)
        case .character("n"), .character("N"), .escape: return answerQuestion(request: false)
        case .character("?"):
            showingHelp = true
            return .redraw
        default:
            let reminder = Notice.error("Press y to ask an approver, or n not to.")
            guard notice != reminder else { return .none }
            notice = reminder
            return .redraw
        }
    }

    /// Short ids are typed in Crockford base32 (`I L O` are read as `1 1 0`), with hyphens,
    /// and `:` for a `GP1:` code; anything else cannot be part of one.
    static func isShortIdCharacter(_ character: Character) -> Bool {
        guard character.isASCII else { return false }
        return character.isLetter || character.isNumber || character == "-" || character == ":"
    }

    private func handleShortIdField(_ key: Key) -> ScreenAction {
        switch key {
        case .character(let character):
            if shortId.text.isEmpty {
                switch character {
                case "q": return .quit
                case "w": return openWalkIn()
                default: break
                }
            }
            switch character {
            case "?":
                showingHelp = true
                return .redraw
            case "/":
                return openLookup()
            default:
                return typeShortId(character)
            }
        case .enter:
            return submitShortId()
        case .backspace, .delete:
            guard shortId.deleteBackward() else { return .none }
            notice = nil
            return .redraw
        case .control("u"):
            guard !shortId.text.isEmpty else { return .none }
            shortId.text = ""
            notice = nil
            return .redraw
        case .control("r"):
            loadStats()
            return .redraw
        case .escape:
            if shortId.text.isEmpty {
                focus = .recent
            } else {
                shortId.text = ""
            }
            notice = nil
            return .redraw
        case .tab, .backTab:
            focus = .recent
            notice = nil
            return .redraw
        case .up, .down, .home, .end, .pageUp, .pageDown:
            focus = .recent
            _ = moveRecent(key)
            return .redraw
        default:
            return .none
        }
    }

    private func typeShortId(_ character: Character) -> ScreenAction {
        guard TextInput.isPrintable(character) else {
            notice = .error("Control characters cannot be typed into the short id; nothing was changed.")
            return .redraw
        }
        guard Self.isShortIdCharacter(character) else {
            notice = .error("A short id has only letters and digits, like K7Q2M9XD; that character was not typed.")
            return .redraw
        }
        guard shortId.insert(character) else {
            notice = .error("A short id has 8 characters; the field takes at most \(Self.shortIdLimit), so the rest was not typed. Press Enter to check it, or Ctrl-U to clear it.")
            return .redraw
        }
        notice = nil
        return .redraw
    }

    private func submitShortId() -> ScreenAction {
        let typed = shortId.text
        guard !typed.isEmpty else {
            notice = .error("Type a short id (8 letters and digits, like K7Q2M9XD), then press Enter.")
            return .redraw
        }
        let id: ShortID
        do {
            id = try QRPayload.shortID(from: typed)
        } catch {
            // Kept as typed, so the guard can fix one character instead of typing it all again.
            notice = .error("“\(ConsoleFormat.fit(typed, width: 40))” is not a short id: 8 characters from 0–9 and A–Z without U (I, L, O count as 1, 1, 0), like K7Q2M9XD. Nothing was sent.")
            return .redraw
        }
        shortId.text = ""
        notice = nil
        return checkIn(code: id.rawValue)
    }

    private func handleRecentList(_ key: Key) -> ScreenAction {
        switch key {
        case .up, .down, .home, .end, .pageUp, .pageDown, .character("j"), .character("k"):
            return moveRecent(key)
        case .enter:
            guard recent.indices.contains(recentSelection) else { return .none }
            guard let visitorId = recent[recentSelection].decision.visitorId else {
                notice = .error("That scan matched no visitor, so there is nothing to open.")
                return .redraw
            }
            return .openVisitor(id: visitorId)
        case .character("/"):
            return openLookup()
        case .character("w"):
            return openWalkIn()
        case .character("r"):
            loadStats()
            return .redraw
        case .character("i"), .escape:
            focus = .shortId
            notice = nil
            return .redraw
        default:
            return .none
        }
    }

    private func moveRecent(_ key: Key) -> ScreenAction {
        recentList.move(key, count: recent.count) == true ? .redraw : .none
    }
}
