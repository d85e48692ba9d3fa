#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Line editing and history for the interactive session on a terminal: ← → Home End (Ctrl-A,
/// Ctrl-E), Backspace, Delete, Ctrl-U (clear), Ctrl-W (delete a word), ↑ ↓ through this session's
/// earlier lines, Ctrl-C (drop the line), Ctrl-D (quit on an empty line).
///
/// In-house and small on purpose: the package mirror has no line-editing library (no linenoise
/// or readline binding), and linking the system's libedit or readline would add a C dependency
/// every machine must install, for a debugging session. Off a terminal, the session reads plain
/// lines and this type is not used.
final class LineReader {
    private let prompt: String
    private var history: [String] = []
    private var original = termios()
    private var raw = false

    init(prompt: String) {
        self.prompt = prompt
    }

    /// One edited line, or nil at end of input (Ctrl-D on an empty line, or input closed).
    func readLine() -> String? {
        guard enterRawMode() else {
            write(prompt)
            return Swift.readLine()
        }
        defer { leaveRawMode() }
        var buffer: [Character] = []
        var cursor = 0
        var browsing = history.count
        var draft: [Character] = []
        write(prompt)
        func redraw() {
            write("\r\u{1B}[K" + prompt + String(buffer))
            let back = buffer.count - cursor
            if back > 0 { write("\u{1B}[\(back)D") }
        }
        while let byte = readByte() {
            switch byte {
            case 0x0D, 0x0A:  // Enter
                write("\r\n")
                let line = String(buffer)
                if !line.allSatisfy(\.isWhitespace), history.last != line { history.append(line) }
                return line
            case 0x04:  // Ctrl-D
                if buffer.isEmpty {
                    write("\r\n")
                    return nil
                }
                if cursor < buffer.count { buffer.remove(at: cursor) }
            case 0x03:  // Ctrl-C: drop the line
                write("^C\r\n")
                buffer = []
                cursor = 0
                write(prompt)
                continue
            case 0x7F, 0x08:  // Backspace
                if cursor > 0 {
                    buffer.remove(at: cursor - 1)
                    cursor -= 1
                }
            case 0x01: cursor = 0  // Ctrl-A
            case 0x05: cursor = buffer.count  // Ctrl-E
            case 0x15:  // Ctrl-U
                buffer.removeFirst(cursor)
                cursor = 0
            case 0x17:  // Ctrl-W
                var start = cursor
                while start > 0, buffer[start - 1] == " " { start -= 1 }
                while start > 0, buffer[start - 1] != " " { start -= 1 }
                buffer.removeSubrange(start..<cursor)
                cursor = start
            case 0x1B:  // an escape sequence: arrows, Home, End, Delete
                guard let introducer = readByte(), introducer == 0x5B || introducer == 0x4F,
                    let final = readByte()
                else { continue }
                switch final {
                case 0x44: cursor = max(0, cursor - 1)  // ←
                case 0x43: cursor = min(buffer.count, cursor + 1)  // →
                case 0x48: cursor = 0  // Home
                case 0x46: cursor = buffer.count  // End
                case 0x41, 0x42:  // ↑ ↓
                    if browsing == history.count { draft = buffer }
                    browsing = final == 0x41 ? max(0, browsing - 1) : min(history.count, browsing + 1)
                    buffer = browsing == history.count ? draft : Array(history[browsing])
                    cursor = buffer.count
                case 0x33:  // Delete: ESC [ 3 ~
                    _ = readByte()
                    if cursor < buffer.count { buffer.remove(at: cursor) }
                case 0x31, 0x34, 0x37, 0x38:  // Home/End as ESC [ 1 ~, ESC [ 4 ~, ...
                    _ = readByte()
                    cursor = final == 0x31 || final == 0x37 ? 0 : buffer.count
                default: break
                }
            default:
                guard byte >= 0x20, let character = readCharacter(startingWith: byte) else { continue }
                buffer.insert(character, at: cursor)
                cursor += 1
            }
            redraw()
        }
        write("\r\n")
        return buffer.isEmpty ? nil : String(buffer)
    }

    func close() { leaveRawMode() }

    // MARK: - Terminal

    private func enterRawMode() -> Bool {
        guard tcgetattr(STDIN_FILENO, &original) == 0 else { return false }
        var settings = original
        settings.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG | IEXTEN)
        settings.c_iflag &= ~tcflag_t(IXON | ICRNL)
        guard tcsetattr(STDIN_FILENO, TCSANOW, &settings) == 0 else { return false }
        raw = true
        return true
    }

    private func leaveRawMode() {
        guard raw else { return }
        var settings = original
        tcsetattr(STDIN_FILENO, TCSANOW, &settings)
        raw = false
    }

    private func readByte() -> UInt8? {
        var byte: UInt8 = 0
        while true {
            let count = read(STDIN_FILENO, &byte, 1)
            if count == 1 { return byte }
            if count < 0, errno == EINTR { continue }
            return nil
        }
    }

    /// A UTF-8 character whose first byte is `first`.
    private func readCharacter(startingWith first: UInt8) -> Character? {
        let length = first < 0x80 ? 1 : first < 0xE0 ? 2 : first < 0xF0 ? 3 : 4
        var bytes = [first]
        while bytes.count < length, let next = readByte() { bytes.append(next) }
        return String(validating: bytes, as: UTF8.self)?.first
    }

    private func write(_ text: String) {
        Output.write(text)
    }
}
