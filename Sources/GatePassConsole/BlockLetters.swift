/// The outcome words in letters five rows tall, so a guard reads the decision from across
/// the gate. Only the letters of the headlines are drawn; a word with another letter has no
/// block form and is drawn as text.
enum BlockLetters {
    /// Each letter as five rows of three cells (M and N need more to read as themselves);
    /// `#` is ink.
    static let glyphs: [Character: [String]] = [
        "A": [".#.", "#.#", "###", "#.#", "#.#"],
        "C": ["###", "#..", "#..", "#..", "###"],
        "D": ["##.", "#.#", "#.#", "#.#", "##."],
        "E": ["###", "#..", "##.", "#..", "###"],
        "F": ["###", "#..", "##.", "#..", "#.."],
        "I": ["###", ".#.", ".#.", ".#.", "###"],
        "L": ["#..", "#..", "#..", "#..", "###"],
        "M": ["#...#", "##.##", "#.#.#", "#...#", "#...#"],
        "N": ["#..#", "##.#", "#.##", "#..#", "#..#"],
        "O": ["###", "#.#", "#.#", "#.#", "###"],
        "P": ["##.", "#.#", "##.", "#..", "#.."],
        "Q": ["###", "#.#", "#.#", "###", "..#"],
        "R": ["##.", "#.#", "##.", "#.#", "#.#"],
        "S": ["###", "#..", "###", "..#", "###"],
        "T": ["###", ".#.", ".#.", ".#.", ".#."],
        "U": ["#.#", "#.#", "#.#", "#.#", "###"],
        "V": ["#.#", "#.#", "#.#", "#.#", ".#."],
        " ": ["...", "...", "...", "...", "..."],
    ]

    /// `word` as five rows (letters one cell apart), or nil when a letter has no glyph.
    static func rows(_ word: String) -> [String]? {
        var rows = Array(repeating: "", count: 5)
        for (index, letter) in word.enumerated() {
            guard let glyph = glyphs[letter] else { return nil }
            for row in 0..<5 {
                if index > 0 { rows[row] += " " }
                rows[row] += String(glyph[row].map { $0 == "#" ? Character("█") : Character(" ") })
            }
        }
        return rows
    }
}
