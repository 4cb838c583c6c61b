/// How an option reads the command line, as its declaration says once; the parser, the
/// validation and `--help` all read this.
public struct OptionSpec: Sendable {
    public enum Arity: Sendable {
        /// `--json`: present or not; `--json=x` is a usage error.
        case flag
        /// `--note TEXT` or `--note=TEXT`: the next argument is the value, whatever it starts
        /// with (`--note -h` is the note "-h").
        case value
        /// `--image A B C`: the following arguments up to the next one that starts with `-`
        /// (at least one; `--image=-a.png` for a name that starts with `-`). May be repeated;
        /// the values add up in order.
        case values
    }

    /// The long name with its dashes, `--note`.
    public var name: String
    /// What the value is called in help, `TEXT`; nil for a flag.
    public var valueName: String?
    /// A full sentence for `--help`.
    public var help: String
    public var arity: Arity
    /// Absent → `"--name is required"`.
    public var isRequired: Bool
    /// Other names that mean the same option (`--database` for `--db`); the value is read
    /// under `name` whichever was typed, and giving two of them is giving it twice.
    public var aliases: [String] = []

    /// Every name the option answers to, `name` first.
    public var names: [String] { [name] + aliases }

    /// The option's row in `--help`: every name, then the value (`--db, --database PATH`).
    public var helpLabel: String {
        guard !aliases.isEmpty else { return synopsis }
        return ([name] + aliases).joined(separator: ", ") + (valueName.map { " " + $0 } ?? "")
    }

    /// `--note TEXT` as help and usage show it.
    public var synopsis: String {
        switch arity {
        case .flag: name
        case .value: "\(name) \(valueName ?? "VALUE")"
        case .values: "\(name) \(valueName ?? "VALUE")…"
        }
    }
}

/// Anything a command declares as an option (a flag, an option with a value, a list).
public protocol OptionDeclaration: Sendable {
    var spec: OptionSpec { get }
}

/// `--json`: true when given.
public struct Flag: OptionDeclaration {
    public let spec: OptionSpec
    public init(_ name: String, help: String) {
        spec = OptionSpec(name: name, valueName: nil, help: help, arity: .flag, isRequired: false)
    }
}

/// `--port N`: one value, converted and checked by the declaration, so a bad value is a
/// usage error that names the option and what it accepts.
public struct Option<Value: Sendable>: OptionDeclaration {
    public let spec: OptionSpec
    let convert: @Sendable (String) throws(UsageError) -> Value

    /// An option whose value `convert` checks; its error is the whole sentence.
    public init(_ name: String, aliases: [String] = [], value valueName: String, required: Bool = false, help: String,
                convert: @escaping @Sendable (String) throws(UsageError) -> Value) {
        spec = OptionSpec(name: name, valueName: valueName, help: help, arity: .value, isRequired: required, aliases: aliases)
        self.convert = convert
    }
}

extension Option where Value == String {
    /// Any text.
    public init(_ name: String, aliases: [String] = [], value valueName: String, required: Bool = false, help: String) {
        self.init(name, aliases: aliases, value: valueName, required: required, help: help) { (text: String) throws(UsageError) in text }
    }
}

extension Option where Value == Int {
    /// A whole number in `range`: `--port must be a whole number from 0 to 65535` otherwise.
    public init(_ name: String, value valueName: String, in range: ClosedRange<Int>, help: String) {
        self.init(name, value: valueName, help: help) { (text: String) throws(UsageError) -> Int in
            guard let value = Int(text), range.contains(value) else {
                throw UsageError("\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            return value
        }
    }
}

extension Option where Value == Double {
    /// A finite number of seconds in `range`: `--wait must be a number of seconds from 0 to 30` otherwise.
    public init(_ name: String, value valueName: String, seconds range: ClosedRange<Double>, help: String) {
        self.init(name, value: valueName, help: help) { (text: String) throws(UsageError) -> Double in
            guard let value = Double(text), value.isFinite, range.contains(value) else {
                throw UsageError("\(name) must be a number of seconds from \(Self.plain(range.lowerBound)) to \(Self.plain(range.upperBound))")
            }
            return value
        }
    }

    /// `30` rather than `30.0`; `0.2` stays.
    static func plain(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : String(number)
    }
}

/// `--image A B C` (and `--image A --image B`): every value, in order.
public struct ListOption: OptionDeclaration {
    public let spec: OptionSpec
    public init(_ name: String, value valueName: String, help: String) {
        spec = OptionSpec(name: name, valueName: valueName, help: help, arity: .values, isRequired: false)
    }
}

/// A positional argument, `ID`: the parser hands positionals to the declared arguments in order.
public struct Argument<Value: Sendable>: Sendable {
    public let spec: ArgumentSpec
    let convert: @Sendable (String) throws(UsageError) -> Value

    public init(_ name: String, optional: Bool = false, missing: String? = nil, help: String,
                convert: @escaping @Sendable (String) throws(UsageError) -> Value) {
        spec = ArgumentSpec(name: name, help: help, isOptional: optional, missingMessage: missing ?? "\(name) is required")
        self.convert = convert
    }
}

extension Argument where Value == String {
    public init(_ name: String, optional: Bool = false, missing: String? = nil, help: String) {
        self.init(name, optional: optional, missing: missing, help: help) { (text: String) throws(UsageError) in text }
    }
}

/// What the parser and help know of a positional argument.
public struct ArgumentSpec: Sendable {
    public var name: String
    public var help: String
    public var isOptional: Bool
    /// The usage error when a required argument is absent.
    public var missingMessage: String
}
