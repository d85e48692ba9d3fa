import Foundation
import TourFixtures

#if canImport(Glibc)
    import Glibc
#endif

/// A real headless Chromium (Debian's `chromium`, which `.ci/run` installs), driven over the
/// DevTools protocol through `--remote-debugging-pipe`: the browser reads commands on its file
/// descriptor 3 and answers on 4, each message JSON ended by a NUL byte. One page (target), one
/// profile in a temporary folder, so cookies live as a person's browser keeps them.
final class Browser: @unchecked Sendable {
    let pid: pid_t
    private let toBrowser: Int32
    private let fromBrowser: Int32
    private let profile: URL
    private var nextID = 0
    private var buffer = Data()
    private var session: String = ""

    static var executable: String? {
        ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    /// - Parameter arguments: more of Chromium's switches (`--host-resolver-rules=...`, to give the
    ///   servers of a test names of their own).
    init(arguments extra: [String] = []) throws {
        guard let executable = Self.executable else {
            throw HarnessFailure(
                "the dashboard tests need Debian's chromium: apt-get install chromium (.ci/run does)")
        }
        let profile = Scratch.folder.appendingPathComponent("chromium-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: profile, withIntermediateDirectories: true)
        self.profile = profile
        (pid, toBrowser, fromBrowser) = try ChildProcess.spawning {
            try Self.spawn(executable, profile: profile, extra: extra)
        }
        let target = try call("Target.createTarget", ["url": "about:blank"])
        guard let targetID = target["targetId"] as? String else {
            throw HarnessFailure("no target: \(target)")
        }
        let attached = try call("Target.attachToTarget", ["targetId": targetID, "flatten": true])
        guard let session = attached["sessionId"] as? String else {
            throw HarnessFailure("no session: \(attached)")
        }
        self.session = session
        _ = try call("Page.enable", [:], inPage: true)
        _ = try call("Runtime.enable", [:], inPage: true)
    }

    /// Starts Chromium with its DevTools pipe on descriptors 3 (commands) and 4 (answers), and no
    /// other descriptor of this process: one it inherited (a pipe another test is reading, or the
    /// socket by which `Process` learns that its child exited) would stay open as long as Chromium.
    /// Its own ends are close-on-exec too, so no other child inherits them (dup2 clears the flag on
    /// the copies at 3 and 4, even where a descriptor is already in place).
    private static func spawn(_ executable: String, profile: URL, extra: [String]) throws -> (
        pid: pid_t, commands: Int32, answers: Int32
    ) {
        guard let closeFrom else {
            throw HarnessFailure("glibc 2.34 or later is needed (posix_spawn_file_actions_addclosefrom_np)")
        }
        var commands: [Int32] = [-1, -1]
        var answers: [Int32] = [-1, -1]
        let devNull = Glibc.open("/dev/null", O_WRONLY | O_CLOEXEC)
        var spawned = false
        defer {
            // The child's ends always; ours only when the browser did not start.
            for descriptor in [commands[0], answers[1], devNull] + (spawned ? [] : [commands[1], answers[0]])
            where descriptor >= 0 { close(descriptor) }
        }
        // Swift's Glibc does not declare pipe2; under `ChildProcess.spawning` no child starts
        // between pipe and fcntl.
        guard devNull >= 0, pipe(&commands) == 0, pipe(&answers) == 0,
            (commands + answers).allSatisfy({ fcntl($0, F_SETFD, FD_CLOEXEC) == 0 })
        else { throw HarnessFailure("pipe or /dev/null failed: errno \(errno)") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, commands[0], 3)
        posix_spawn_file_actions_adddup2(&actions, answers[1], 4)
        posix_spawn_file_actions_adddup2(&actions, devNull, 1)
        posix_spawn_file_actions_adddup2(&actions, devNull, 2)
        guard closeFrom(&actions, 5) == 0 else {
            throw HarnessFailure("posix_spawn_file_actions_addclosefrom_np failed")
        }
        let arguments =
            [
                executable, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--no-first-run",
                "--no-default-browser-check", "--remote-debugging-pipe", "--user-data-dir=\(profile.path)",
                "--window-size=1280,900", "--hide-scrollbars",
            ] + extra + ["about:blank"]
        var argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        // Its own temporary files (org.chromium.Chromium.*) in the test run's scratch folder, not
        // in the machine's (the profile itself will not do: Chromium refuses to start).
        let environment =
            ProcessInfo.processInfo.environment.filter { $0.key != "TMPDIR" }.map { "\($0.key)=\($0.value)" }
            + ["TMPDIR=\(Scratch.folder.path)"]
        var envp = environment.map { strdup($0) } + [nil]
        defer { envp.forEach { free($0) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable, &actions, nil, &argv, &envp)
        guard result == 0 else { throw HarnessFailure("chromium did not start: \(result)") }
        spawned = true
        return (child, commands[1], answers[0])
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc
    /// module does not declare; nil on an older glibc.
    private typealias CloseFrom =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private static let closeFrom: CloseFrom? = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map {
        unsafeBitCast($0, to: CloseFrom.self)
    }

    deinit {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        close(toBrowser)
        close(fromBrowser)
        try? FileManager.default.removeItem(at: profile)
    }

    // MARK: - The protocol

    /// Sends one command and waits for its answer (events in between are dropped).
    @discardableResult
    func call(_ method: String, _ parameters: [String: Any], inPage: Bool = false, seconds: Double = 30)
        throws
        -> [String: Any]
    {
        nextID += 1
        var message: [String: Any] = ["id": nextID, "method": method, "params": parameters]
        if inPage { message["sessionId"] = session }
        var bytes = try JSONSerialization.data(withJSONObject: message)
        bytes.append(0)
        try bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            var offset = 0
            while offset < raw.count {
                let written = write(toBrowser, base + offset, raw.count - offset)
                guard written > 0 else { throw HarnessFailure("writing to chromium failed") }
                offset += written
            }
        }
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let answer = try nextMessage(until: deadline)
            guard (answer["id"] as? Int) == nextID else { continue }
            if let error = answer["error"] as? [String: Any] {
                throw HarnessFailure("\(method) failed: \(error["message"] ?? error)")
            }
            return answer["result"] as? [String: Any] ?? [:]
        }
    }

    private func nextMessage(until deadline: Date) throws -> [String: Any] {
        while true {
            if let end = buffer.firstIndex(of: 0) {
                let message = buffer[buffer.startIndex..<end]
                buffer = Data(buffer[(end + 1)...])
                return (try JSONSerialization.jsonObject(with: message)) as? [String: Any] ?? [:]
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw HarnessFailure("chromium did not answer in time") }
            var poller = pollfd(fd: fromBrowser, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(min(remaining, 1) * 1000)) >= 0 else {
                throw HarnessFailure("poll failed")
            }
            guard poller.revents != 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            let count = read(fromBrowser, &chunk, chunk.count)
            guard count > 0 else { throw HarnessFailure("chromium closed its pipe") }
            buffer.append(contentsOf: chunk[0..<count])
        }
    }

    // MARK: - What a person does

    /// The value of a JavaScript expression in the page (returned by value).
    func evaluate(_ expression: String) throws -> Any? {
        let result = try call(
            "Runtime.evaluate", ["expression": expression, "returnByValue": true, "awaitPromise": true],
            inPage: true)
        if let exception = result["exceptionDetails"] { throw HarnessFailure("\(expression): \(exception)") }
        return (result["result"] as? [String: Any])?["value"]
    }

    /// Opens a URL as typed in the address bar and waits for the page to load.
    func open(_ url: URL) throws {
        _ = try call("Page.navigate", ["url": url.absoluteString], inPage: true)
        try waitForLoad(away: nil)
    }

    /// Waits until the document has loaded; with `away`, until it is another document than that one.
    /// Sixty seconds: on a loaded 2-core machine, with the whole suite running beside it, Chromium has
    /// taken over twenty to load a page the server answered at once.
    func waitForLoad(away previous: String?, seconds: Double = 60) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let state = try? evaluate("document.readyState + ' ' + (window.__mark || '')")
            if let state = state as? String, state.hasPrefix("complete"),
                !(previous.map { state.hasSuffix($0) } ?? false)
            {
                return
            }
            usleep(50_000)
        }
        throw HarnessFailure("the page did not load within \(seconds) s")
    }

    /// Runs an action that leaves the page (a click, a submit) and waits for the next one.
    func leave(_ action: () throws -> Void) throws {
        let mark = UUID().uuidString
        _ = try evaluate("window.__mark = '\(mark)'")
        try action()
        try waitForLoad(away: mark)
    }

    /// Reloads the page while it is the server's "Unavailable" page (a 503: on a machine busy with
    /// the whole suite a page's reads can pass the request's deadline, and its user would reload),
    /// for as long as Patience waits, and only at an address containing `address` (a page a GET
    /// shows, so a reload sends no form again).
    func reloadWhileUnavailable(at address: String) throws {
        let giveUp = ContinuousClock.now + Patience.limit
        while title.hasPrefix("Unavailable"), location.contains(address), ContinuousClock.now < giveUp {
            usleep(500_000)
            try leave { _ = try evaluate("location.reload()") }
        }
    }

    var location: String { ((try? evaluate("location.href")) as? String) ?? "" }
    var title: String { ((try? evaluate("document.title")) as? String) ?? "" }

    /// Presses a key (Tab, Enter) as the keyboard does.
    func press(_ key: String, code: Int, shift: Bool = false) throws {
        for type in ["keyDown", "keyUp"] {
            var event: [String: Any] = ["type": type, "key": key, "code": key, "windowsVirtualKeyCode": code]
            if shift { event["modifiers"] = 8 }
            if key == "Enter", type == "keyDown" { event["text"] = "\r" }
            _ = try call("Input.dispatchKeyEvent", event, inPage: true)
        }
    }

    /// Types text into the focused field.
    func type(_ text: String) throws {
        _ = try call("Input.insertText", ["text": text], inPage: true)
    }

    /// A PNG of the page as it is drawn (the whole page when `fullPage`).
    func screenshot(fullPage: Bool = true) throws -> Data {
        var parameters: [String: Any] = ["format": "png"]
        if fullPage { parameters["captureBeyondViewport"] = true }
        let result = try call("Page.captureScreenshot", parameters, inPage: true)
        guard let base64 = result["data"] as? String, let data = Data(base64Encoded: base64) else {
            throw HarnessFailure("no screenshot")
        }
        return data
    }

    /// The browser's cookies for a URL, as it stores them (flags included).
    func cookies(for url: URL) throws -> [[String: Any]] {
        let result = try call("Network.getCookies", ["urls": [url.absoluteString]], inPage: true)
        return result["cookies"] as? [[String: Any]] ?? []
    }
}
