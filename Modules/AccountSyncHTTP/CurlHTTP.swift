#if !canImport(Darwin) && canImport(Glibc)
    import AccountSync
    import CCurlShim
    import FoundationEssentials
    import Glibc

    /// HTTP through the system's libcurl, loaded with `dlopen` when the first request is sent.
    ///
    /// Why not `URLSession` here: on Linux, FoundationNetworking links libcurl and its thirty-odd
    /// libraries into every process at start-up, which cost each one-shot command of a product's
    /// CLI more than the rest of its work (Docs/Performance.md, the cold start). Loading the same
    /// library on the first request keeps HTTPS and the system's certificates, and costs nothing
    /// to a command that does not sync. On Apple platforms the transport uses `URLSession`.
    enum CurlHTTP {
        struct Response {
            var status: Int
            var body: Data
            /// Where a 3xx answer points (not followed).
            var redirect: String?
            /// The answer's header lines, lowercased names (`cache-control: private, max-age=300`).
            var headers: [String] = []
        }

        /// The largest answer read, in bytes: a longer one is cut off and refused (a server, or
        /// something posing as one, cannot make a device hold an unbounded answer in memory).
        static let defaultMaximumResponseBytes = 32 << 20

        /// Sends one request; throws `.unreachable` when there is no answer (or no libcurl).
        ///
        /// Only http and https are spoken, redirects are not followed (a 3xx is the answer), the
        /// whole exchange times out, and an answer over `maximumResponseBytes` is refused.
        static func send(
            method: String, url: String, headers: [String], body: Data?, timeout: Double,
            maximumResponseBytes: Int = defaultMaximumResponseBytes
        ) async throws(SyncError) -> Response {
            let library: Library
            switch Library.shared {
            case .success(let loaded): library = loaded
            case .failure(let error): throw error
            }
            // libcurl's easy interface blocks: run it on a thread of its own, off the cooperative pool.
            let result: Result<Response, SyncError> = await withCheckedContinuation { continuation in
                onOwnThread {
                    continuation.resume(
                        returning: library.perform(
                            method: method, url: url, headers: headers, body: body, timeout: timeout,
                            maximumResponseBytes: maximumResponseBytes))
                }
            }
            return try result.get()
        }

        /// Runs `body` on a new POSIX thread (Foundation's `Thread` is in swift-corelibs-foundation,
        /// which this module keeps out of the CLI).
        private static func onOwnThread(_ body: @escaping @Sendable () -> Void) {
            final class Work {
                let body: @Sendable () -> Void
                init(_ body: @escaping @Sendable () -> Void) { self.body = body }
            }
            let context = Unmanaged.passRetained(Work(body)).toOpaque()
            var thread = pthread_t()
            let started = pthread_create(
                &thread, nil,
                { context in
                    // pthread_create hands back the pointer given to it below, never nil.
                    guard let context else { return nil }
                    Unmanaged<Work>.fromOpaque(context).takeRetainedValue().body()
                    return nil
                }, context)
            if started == 0 {
                pthread_detach(thread)
            } else {
                Unmanaged<Work>.fromOpaque(context).takeRetainedValue().body()
            }
        }

        /// The few libcurl functions the transport calls, resolved once per process.
        struct Library: @unchecked Sendable {
            typealias Handle = OpaquePointer
            let easyInit: @convention(c) () -> Handle?
            let easyCleanup: @convention(c) (Handle?) -> Void
            let easyPerform: @convention(c) (Handle?) -> Int32
            let easyStrerror: @convention(c) (Int32) -> UnsafePointer<CChar>?
            // `curl_easy_setopt` and `curl_easy_getinfo` are variadic in C: they are called through
            // the CCurlShim functions, which call them through their variadic type.
            let setopt: UnsafeMutableRawPointer
            let getinfo: UnsafeMutableRawPointer
            let slistAppend: @convention(c) (OpaquePointer?, UnsafePointer<CChar>) -> OpaquePointer?
            let slistFreeAll: @convention(c) (OpaquePointer?) -> Void

            static let shared: Result<Library, SyncError> = load()

            private static func load() -> Result<Library, SyncError> {
                let names: [String] = ["libcurl.so.4", "libcurl.so", "libcurl-gnutls.so.4"]
                guard
                    let handle = names.lazy.compactMap({ name in dlopen(name, RTLD_NOW | RTLD_LOCAL) }).first
                else {
                    return .failure(.unreachable("syncing needs libcurl (Debian: apt-get install libcurl4)"))
                }
                func symbol<T>(_ name: String, as type: T.Type) -> T? {
                    dlsym(handle, name).map { unsafeBitCast($0, to: type) }
                }
                guard let easyInit = symbol("curl_easy_init", as: (@convention(c) () -> Handle?).self),
                    let easyCleanup = symbol(
                        "curl_easy_cleanup", as: (@convention(c) (Handle?) -> Void).self),
                    let easyPerform = symbol(
                        "curl_easy_perform", as: (@convention(c) (Handle?) -> Int32).self),
                    let easyStrerror = symbol(
                        "curl_easy_strerror", as: (@convention(c) (Int32) -> UnsafePointer<CChar>?).self),
                    let setopt = dlsym(handle, "curl_easy_setopt"),
                    let getinfo = dlsym(handle, "curl_easy_getinfo"),
                    let slistAppend = symbol(
                        "curl_slist_append",
                        as: (@convention(c) (OpaquePointer?, UnsafePointer<CChar>) -> OpaquePointer?).self),
                    let slistFreeAll = symbol(
                        "curl_slist_free_all", as: (@convention(c) (OpaquePointer?) -> Void).self)
                else {
                    return .failure(.unreachable("the libcurl found lacks the easy interface"))
                }
                return .success(
                    Library(
                        easyInit: easyInit, easyCleanup: easyCleanup, easyPerform: easyPerform,
                        easyStrerror: easyStrerror, setopt: setopt, getinfo: getinfo,
                        slistAppend: slistAppend, slistFreeAll: slistFreeAll))
            }

            // Option numbers from curl.h (CURLOPTTYPE_LONG 0, OBJECTPOINT 10000, FUNCTIONPOINT 20000).
            private enum Option {
                static let url: Int32 = 10_002
                static let writeData: Int32 = 10_001
                static let writeFunction: Int32 = 20_011
                static let headerData: Int32 = 10_029
                static let headerFunction: Int32 = 20_079
                static let httpHeader: Int32 = 10_023
                static let postFields: Int32 = 10_015
                static let postFieldSize: Int32 = 60
                static let customRequest: Int32 = 10_036
                static let timeoutMS: Int32 = 155
                static let connectTimeoutMS: Int32 = 156
                static let noSignal: Int32 = 99
                static let followLocation: Int32 = 52
                static let protocolsText: Int32 = 10_318
                static let redirectProtocolsText: Int32 = 10_319
                static let protocols: Int32 = 181
                static let redirectProtocols: Int32 = 182
                static let maxFileSize: Int32 = 114
                static let responseCode: Int32 = 0x20_0002
                static let redirectURL: Int32 = 0x10_001F
            }

            /// CURLE_UNKNOWN_OPTION: an older libcurl without the option.
            private static let unknownOption: Int32 = 48
            /// CURLPROTO_HTTP | CURLPROTO_HTTPS, for a libcurl older than 7.85.
            private static let httpAndHTTPS = 3

            /// What the write callback appends to, up to `limit` bytes.
            private final class Sink {
                let limit: Int
                var bytes: [UInt8] = []
                var overflowed = false
                init(limit: Int) { self.limit = limit }
            }

            private func set(_ easy: Handle, _ option: Int32, _ value: Int) -> Int32 {
                onboarding_curl_setopt_long(setopt, UnsafeMutableRawPointer(easy), option, value)
            }

            private func set(_ easy: Handle, _ option: Int32, _ value: UnsafeRawPointer?) -> Int32 {
                onboarding_curl_setopt_pointer(setopt, UnsafeMutableRawPointer(easy), option, value)
            }

            func perform(
                method: String, url: String, headers: [String], body: Data?, timeout: Double,
                maximumResponseBytes: Int
            ) -> Result<Response, SyncError> {
                guard let easy = easyInit() else {
                    return .failure(.unreachable("libcurl could not start a request"))
                }
                defer { easyCleanup(easy) }
                var list: OpaquePointer?
                for header in headers { list = header.withCString { slistAppend(list, $0) } }
                defer { slistFreeAll(list) }
                let sink = Sink(limit: maximumResponseBytes)
                let write: onboarding_curl_write_callback = { data, size, count, context in
                    guard let data, let context else { return 0 }
                    let sink = Unmanaged<Sink>.fromOpaque(context).takeUnretainedValue()
                    let length = size * count
                    guard sink.bytes.count + length <= sink.limit else {
                        sink.overflowed = true
                        return 0
                    }
                    sink.bytes.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length))
                    return length
                }
                // Header lines, up to 64 KiB (more is not a header this client reads).
                let headerSink = Sink(limit: 64 << 10)
                let header: onboarding_curl_write_callback = { data, size, count, context in
                    guard let data, let context else { return 0 }
                    let sink = Unmanaged<Sink>.fromOpaque(context).takeUnretainedValue()
                    let length = size * count
                    if sink.bytes.count + length <= sink.limit {
                        sink.bytes.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length))
                    }
                    return length
                }
                let payload = body.map { [UInt8]($0) } ?? []
                let code: Int32 = url.withCString { urlText in
                    method.withCString { methodText in
                        payload.withUnsafeBytes { payloadBytes in
                            // Only http and https, for the request and for any redirect; and no
                            // redirect is followed (the token must not go to another host).
                            if set(easy, Option.protocolsText, "http,https") == Self.unknownOption {
                                _ = set(easy, Option.protocols, Self.httpAndHTTPS)
                            }
                            if set(easy, Option.redirectProtocolsText, "http,https") == Self.unknownOption {
                                _ = set(easy, Option.redirectProtocols, Self.httpAndHTTPS)
                            }
                            _ = set(easy, Option.followLocation, 0)
                            _ = set(easy, Option.maxFileSize, maximumResponseBytes)
                            _ = set(easy, Option.url, urlText)
                            _ = set(easy, Option.customRequest, methodText)
                            _ = set(easy, Option.httpHeader, list.map { UnsafeRawPointer($0) })
                            _ = set(easy, Option.noSignal, 1)
                            _ = set(easy, Option.timeoutMS, Int(timeout * 2_000))
                            _ = set(easy, Option.connectTimeoutMS, Int(timeout * 1_000))
                            _ = onboarding_curl_setopt_write_callback(
                                setopt, UnsafeMutableRawPointer(easy), Option.writeFunction, write)
                            _ = set(easy, Option.writeData, Unmanaged.passUnretained(sink).toOpaque())
                            _ = onboarding_curl_setopt_write_callback(
                                setopt, UnsafeMutableRawPointer(easy), Option.headerFunction, header)
                            _ = set(easy, Option.headerData, Unmanaged.passUnretained(headerSink).toOpaque())
                            if body != nil {
                                _ = set(easy, Option.postFieldSize, payload.count)
                                _ = set(
                                    easy, Option.postFields,
                                    payloadBytes.baseAddress ?? UnsafeRawPointer(urlText))
                            }
                            return withExtendedLifetime((sink, headerSink)) { easyPerform(easy) }
                        }
                    }
                }
                if sink.overflowed || code == 63 {  // 63: CURLE_FILESIZE_EXCEEDED
                    return .failure(HTTPSyncTransport.answerTooLarge(maximumResponseBytes))
                }
                guard code == 0 else {
                    let reason = easyStrerror(code).map { String(cString: $0) } ?? "error \(code)"
                    return .failure(.unreachable("\(code): \(reason)"))
                }
                var status = 0
                _ = onboarding_curl_getinfo_long(
                    getinfo, UnsafeMutableRawPointer(easy), Option.responseCode, &status)
                var location: UnsafePointer<CChar>?
                _ = onboarding_curl_getinfo_string(
                    getinfo, UnsafeMutableRawPointer(easy), Option.redirectURL, &location)
                // By `isNewline`: "\r\n" is one Character, equal to neither "\r" nor "\n".
                let headers = String(decoding: headerSink.bytes, as: UTF8.self).split(
                    whereSeparator: \.isNewline
                )
                .map { line -> String in
                    guard let colon = line.firstIndex(of: ":") else { return String(line) }
                    return line[..<colon].lowercased() + line[colon...]
                }
                return .success(
                    Response(
                        status: status, body: Data(sink.bytes),
                        redirect: location.map { String(cString: $0) }, headers: headers))
            }
        }
    }
#endif
