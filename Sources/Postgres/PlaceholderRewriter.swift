/// The store's SQL is written once with SQLite's `?` placeholders; PostgreSQL numbers its
/// parameters (`$1`, `$2`, …). This turns the one into the other, so both wrappers run the
/// same text.
///
/// A `?` is a placeholder only outside single-quoted strings, double-quoted identifiers,
/// `--` line comments and `/* */` block comments. Not handled, because the store never writes
/// them: dollar-quoted strings (`$$…$$`), `E'…'` strings with backslash escapes, and the
/// jsonb operators `?`, `?|`, `?&` (a `?` meant as an operator would be taken for a placeholder).
struct PlaceholderRewriter {
    /// The SQL with numbered parameters, and how many there are.
    struct Rewritten: Equatable {
        var sql: String
        var parameterCount: Int
    }

    static func rewrite(_ sql: String) -> Rewritten {
        enum Context { case code, quotedString, quotedIdentifier, lineComment, blockComment }
        var context = Context.code
        var output = ""
        output.reserveCapacity(sql.utf8.count + 8)
        var count = 0
        let scalars = Array(sql.unicodeScalars)
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            let next: Unicode.Scalar? = index + 1 < scalars.count ? scalars[index + 1] : nil
            switch context {
            case .code:
                switch scalar {
                case "?":
                    count += 1
                    output += "$\(count)"
                    index += 1
                    continue
                case "'": context = .quotedString
                case "\"": context = .quotedIdentifier
                case "-" where next == "-": context = .lineComment
                case "/" where next == "*": context = .blockComment
                default: break
                }
            // A doubled quote inside a string or identifier is an escaped quote: it closes and
            // reopens the context, which the plain rule below already does.
            case .quotedString where scalar == "'": context = .code
            case .quotedIdentifier where scalar == "\"": context = .code
            case .lineComment where scalar == "\n": context = .code
            case .blockComment where scalar == "*" && next == "/":
                output.unicodeScalars.append(scalar)
                output.unicodeScalars.append("/")
                index += 2
                context = .code
                continue
            default: break
            }
            output.unicodeScalars.append(scalar)
            index += 1
        }
        return Rewritten(sql: output, parameterCount: count)
    }
}
