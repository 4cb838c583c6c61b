import Testing
@testable import GatePassConsole

@Suite struct ListSelectionTests {
    @Test func theListKeysMoveTheSelectionAndStopAtTheEnds() {
        var list = ListSelection()
        #expect(list.move(.up, count: 30) == false && list.index == 0)
        #expect(list.move(.down, count: 30) == true && list.index == 1)
        #expect(list.move(.character("j"), count: 30) == true && list.index == 2)
        #expect(list.move(.character("k"), count: 30) == true && list.index == 1)
        #expect(list.move(.pageDown, count: 30) == true && list.index == 11, "a page is 10 rows before any render")
        #expect(list.move(.pageUp, count: 30) == true && list.index == 1)
        #expect(list.move(.pageUp, count: 30) == true && list.index == 0, "a page up near the top stops at the first row")
        #expect(list.move(.end, count: 30) == true && list.index == 29)
        #expect(list.move(.down, count: 30) == false && list.index == 29)
        #expect(list.move(.pageDown, count: 30) == false && list.index == 29)
        #expect(list.move(.home, count: 30) == true && list.index == 0)
        #expect(list.move(.home, count: 30) == false)
    }

    @Test func otherKeysAreLeftToTheScreenAndAnEmptyListNeverMoves() {
        var list = ListSelection()
        #expect(list.move(.enter, count: 5) == nil)
        #expect(list.move(.character("r"), count: 5) == nil)
        #expect(list.move(.left, count: 5) == nil)
        for key: Key in [.up, .down, .pageUp, .pageDown, .home, .end, .character("j")] {
            #expect(list.move(key, count: 0) == false && list.index == 0)
        }
        #expect(list.move(to: 3, count: 0) == false)
    }

    @Test func moveToClampsToTheRowsThereAre() {
        var list = ListSelection()
        #expect(list.move(to: 99, count: 4) == true && list.index == 3)
        #expect(list.move(to: -5, count: 4) == true && list.index == 0)
        #expect(list.move(to: 0, count: 4) == false)
    }

    @Test func scrollingKeepsTheSelectionInViewAndNeverPastTheLastRow() {
        var list = ListSelection()
        #expect(list.scroll(visibleRows: 5, count: 20) == 0..<5)
        #expect(list.pageSize == 5, "the rows shown become the page")
        _ = list.move(to: 7, count: 20)
        #expect(list.scroll(visibleRows: 5, count: 20) == 3..<8, "scrolled just enough to show row 7 last")
        _ = list.move(to: 5, count: 20)
        #expect(list.scroll(visibleRows: 5, count: 20) == 3..<8, "a row in view does not scroll")
        _ = list.move(to: 1, count: 20)
        #expect(list.scroll(visibleRows: 5, count: 20) == 1..<6, "scrolled just enough to show row 1 first")
        _ = list.move(.end, count: 20)
        #expect(list.scroll(visibleRows: 5, count: 20) == 15..<20)
        #expect(list.scroll(visibleRows: 10, count: 20) == 10..<20, "a taller view shows no blank rows past the end")
        #expect(list.scroll(visibleRows: 30, count: 20) == 0..<20)
        #expect(list.top == 0)
    }

    @Test func aViewWithNoRowsDrawsNothingAndPagesByOne() {
        var list = ListSelection()
        _ = list.move(to: 4, count: 10)
        #expect(list.scroll(visibleRows: 0, count: 10).isEmpty)
        #expect(list.pageSize == 1)
        #expect(list.move(.pageDown, count: 10) == true && list.index == 5)
    }

    @Test func aFixedPageSizeIgnoresTheView() {
        var list = ListSelection(pageFollowsView: false)
        #expect(list.scroll(visibleRows: 3, count: 40) == 0..<3)
        #expect(list.pageSize == 10)
        #expect(list.move(.pageDown, count: 40) == true && list.index == 10)
        list.setPageSize(0)
        #expect(list.pageSize == 1, "a page is at least one row")
    }

    @Test func selectingAfterTheListChangedClampsTheRowAndTheTop() {
        var list = ListSelection()
        _ = list.move(to: 15, count: 20)
        _ = list.scroll(visibleRows: 5, count: 20)
        #expect(list.top == 11)
        list.select(15, count: 8)
        #expect(list.index == 7 && list.top == 7, "the list shrank: the last row, drawn first")
        list.select(2, count: 8)
        #expect(list.index == 2 && list.top == 2)
        list.select(3, count: 0)
        #expect(list.index == 0 && list.top == 0)
        _ = list.move(to: 5, count: 8)
        _ = list.scroll(visibleRows: 2, count: 8)
        list.reset()
        #expect(list.index == 0 && list.top == 0)
    }

    @Test func theTargetOfAKeyIsWhatTextScrollingMovesBy() {
        #expect(ListSelection.target(of: .down, from: 4, pageSize: 10, last: 50) == 5)
        #expect(ListSelection.target(of: .pageUp, from: 4, pageSize: 10, last: 50) == -6, "clamping is the caller's")
        #expect(ListSelection.target(of: .pageDown, from: 4, pageSize: 0, last: 50) == 5)
        #expect(ListSelection.target(of: .end, from: 4, pageSize: 10, last: 50) == 50)
        #expect(ListSelection.target(of: .home, from: 4, pageSize: 10, last: 50) == 0)
        #expect(ListSelection.target(of: .character("x"), from: 4, pageSize: 10, last: 50) == nil)
    }
}
