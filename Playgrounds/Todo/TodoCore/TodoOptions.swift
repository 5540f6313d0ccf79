/// The command line of `todo`: which file to use, whether the piped mode is quiet, and whether to print
/// the help.
///
/// ```swift
/// let options = try TodoOptions.parse(["--file", "/tmp/list.json"])
/// print(options.file ?? "default", options.showsHelp)
/// // Prints "/tmp/list.json false"
/// ```
public struct TodoOptions: Equatable, Sendable {
    /// The file given with `--file`, or `nil` for ``TodoFile/defaultPath``.
    public var file: String?
    /// Whether `--help` (or `-h`) was given.
    public var showsHelp = false
    /// Whether `--quiet` (or `-q`) was given: the piped mode prints each command's one-line outcome
    /// only, not the list after it.
    public var isQuiet = false

    /// Options with the defaults: the default file, not quiet, no help.
    public init(file: String? = nil, showsHelp: Bool = false, isQuiet: Bool = false) {
        self.file = file
        self.showsHelp = showsHelp
        self.isQuiet = isQuiet
    }

    /// The options in `arguments` (without the program name): `--file PATH`, `--file=PATH`, `-f PATH`,
    /// `--quiet`, `-q`, `--help`, `-h`.
    ///
    /// - Throws: ``OptionError`` for an unknown argument, or `--file` without a path.
    public static func parse(_ arguments: [String]) throws(OptionError) -> TodoOptions {
        var options = TodoOptions()
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            switch argument {
            case "--help", "-h":
                options.showsHelp = true
            case "--quiet", "-q":
                options.isQuiet = true
            case "--file", "-f":
                guard let path = remaining.popFirst(), !path.isEmpty else { throw .missingPath(argument) }
                options.file = path
            case _ where argument.hasPrefix("--file="):
                let path = String(argument.dropFirst("--file=".count))
                guard !path.isEmpty else { throw .missingPath("--file") }
                options.file = path
            default:
                throw .unknown(argument)
            }
        }
        return options
    }

    /// What `todo --help` prints: both modes, the keys, the commands, and the file.
    public static let usage = """
        todo — a terminal todo list built on Stillwater

        usage: todo [--file PATH] [--quiet]
               todo --help

        In a terminal, todo opens a full-screen list:
        \(Keymap.reference.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))

        When its input is not a terminal (a pipe or a file), or its output is redirected, todo reads
        one command per line, prints the list after each change with the number of rows the change
        redrew, and exits at the end of the input:
        \(TodoCommand.reference.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
          example: printf 'add milk\\nadd eggs\\ntoggle 1\\n' | todo --file /tmp/list.json

        A command that is not understood, or names an item that is not on the list, prints why and
        changes nothing; todo then exits with status 1 at the end (0 when every command worked).

        options:
          -f, --file PATH   keep the list in PATH (default: ~/.stillwater-todo.json)
          -q, --quiet       when piped, print only what each command did (one line each), not the
                            list and the redraw count after every change; list and help still print
          -h, --help        print this help

        In a terminal the list is saved 0.4 s after the last change, and before todo ends: on q,
        at the end of the input, and on SIGINT, SIGTERM or SIGHUP (saved, then the signal ends
        todo); piped, each change is saved before its line's output. Saves are atomic (a
        temporary file renamed over the old one). A file that is not a todo list (no "format":
        "stillwater-todo") is never touched: todo says what it found and exits. A damaged todo
        list is renamed to PATH.corrupt-<time>, and todo starts with an empty list and says so.
        When another todo saved the same file in the meantime, both lists' changes are merged.
        A read-only file or folder is not written: the status line says "not saved" and why,
        the changes stay in memory, w saves them to another file, and q asks before losing them
        (piped mode reports the failed save on its line and exits with status 1). Fields todo
        does not know are kept.
        """
}

/// Why the command line of `todo` was refused.
public enum OptionError: Error, Equatable, Sendable, CustomStringConvertible {
    /// An argument that is not an option of `todo`.
    case unknown(String)
    /// `--file` without a path after it.
    case missingPath(String)

    /// One line saying what was wrong, and where to look.
    public var description: String {
        switch self {
        case .unknown(let argument): "unknown argument \"\(argument)\"; see todo --help"
        case .missingPath(let option): "\(option) needs a path, like \(option) ~/todo.json"
        }
    }
}
