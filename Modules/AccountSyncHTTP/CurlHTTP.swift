#if !canImport(Darwin) && canImport(Glibc)
    import AccountSync
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
        }

        /// Sends one request; throws `.unreachable` when there is no answer (or no libcurl).
        static func send(
            method: String, url: String, headers: [String], body: Data?, timeout: Double
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
                            method: method, url: url, headers: headers, body: body, timeout: timeout))
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
                    Unmanaged<Work>.fromOpaque(context!).takeRetainedValue().body()
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
            // `curl_easy_setopt` and `curl_easy_getinfo` are variadic in C; each option's one
            // argument is passed in a general-purpose register, as a fixed argument would be.
            let setPointer: @convention(c) (Handle?, Int32, UnsafeRawPointer?) -> Int32
            let setLong: @convention(c) (Handle?, Int32, Int) -> Int32
            let getLong: @convention(c) (Handle?, Int32, UnsafeMutablePointer<Int>) -> Int32
            let slistAppend: @convention(c) (OpaquePointer?, UnsafePointer<CChar>) -> OpaquePointer?
            let slistFreeAll: @convention(c) (OpaquePointer?) -> Void

            static let shared: Result<Library, SyncError> = load()

            private static func load() -> Result<Library, SyncError> {
                let names: [String] = ["libcurl.so.4", "libcurl.so", "libcurl-gnutls.so.4"]
                guard let handle = names.lazy.compactMap({ name in dlopen(name, RTLD_NOW | RTLD_LOCAL) }).first
                else {
                    return .failure(.unreachable("syncing needs libcurl (Debian: apt-get install libcurl4)"))
                }
                func symbol<T>(_ name: String, as type: T.Type) -> T? {
                    dlsym(handle, name).map { unsafeBitCast($0, to: type) }
                }
                guard let easyInit = symbol("curl_easy_init", as: (@convention(c) () -> Handle?).self),
                    let easyCleanup = symbol("curl_easy_cleanup", as: (@convention(c) (Handle?) -> Void).self),
                    let easyPerform = symbol("curl_easy_perform", as: (@convention(c) (Handle?) -> Int32).self),
                    let easyStrerror = symbol(
                        "curl_easy_strerror", as: (@convention(c) (Int32) -> UnsafePointer<CChar>?).self),
                    let setPointer = symbol(
                        "curl_easy_setopt", as: (@convention(c) (Handle?, Int32, UnsafeRawPointer?) -> Int32).self),
                    let setLong = symbol("curl_easy_setopt", as: (@convention(c) (Handle?, Int32, Int) -> Int32).self),
                    let getLong = symbol(
                        "curl_easy_getinfo",
                        as: (@convention(c) (Handle?, Int32, UnsafeMutablePointer<Int>) -> Int32).self),
                    let slistAppend = symbol(
                        "curl_slist_append",
                        as: (@convention(c) (OpaquePointer?, UnsafePointer<CChar>) -> OpaquePointer?).self),
                    let slistFreeAll = symbol("curl_slist_free_all", as: (@convention(c) (OpaquePointer?) -> Void).self)
                else {
                    return .failure(.unreachable("the libcurl found lacks the easy interface"))
                }
                return .success(
                    Library(
                        easyInit: easyInit, easyCleanup: easyCleanup, easyPerform: easyPerform,
                        easyStrerror: easyStrerror, setPointer: setPointer, setLong: setLong, getLong: getLong,
                        slistAppend: slistAppend, slistFreeAll: slistFreeAll))
            }

            // Option numbers from curl.h (CURLOPTTYPE_LONG 0, OBJECTPOINT 10000, FUNCTIONPOINT 20000).
            private enum Option {
                static let url: Int32 = 10_002
                static let writeData: Int32 = 10_001
                static let writeFunction: Int32 = 20_011
                static let httpHeader: Int32 = 10_023
                static let postFields: Int32 = 10_015
                static let postFieldSize: Int32 = 60
                static let customRequest: Int32 = 10_036
                static let timeoutMS: Int32 = 155
                static let connectTimeoutMS: Int32 = 156
                static let noSignal: Int32 = 99
                static let responseCode: Int32 = 0x20_0002
            }

            /// What the write callback appends to.
            private final class Sink {
                var bytes: [UInt8] = []
            }

            func perform(method: String, url: String, headers: [String], body: Data?, timeout: Double)
                -> Result<Response, SyncError>
            {
                guard let easy = easyInit() else { return .failure(.unreachable("libcurl could not start a request")) }
                defer { easyCleanup(easy) }
                var list: OpaquePointer?
                for header in headers { list = header.withCString { slistAppend(list, $0) } }
                defer { slistFreeAll(list) }
                let sink = Sink()
                let write: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
                    data, size, count, context in
                    guard let data, let context else { return 0 }
                    let sink = Unmanaged<Sink>.fromOpaque(context).takeUnretainedValue()
                    let bytes = UnsafeRawBufferPointer(start: data, count: size * count)
                    sink.bytes.append(contentsOf: bytes)
                    return size * count
                }
                let payload = body.map { [UInt8]($0) } ?? []
                let code: Int32 = url.withCString { urlText in
                    method.withCString { methodText in
                        payload.withUnsafeBytes { payloadBytes in
                            _ = setPointer(easy, Option.url, urlText)
                            _ = setPointer(easy, Option.customRequest, methodText)
                            _ = setPointer(easy, Option.httpHeader, list.map { UnsafeRawPointer($0) })
                            _ = setLong(easy, Option.noSignal, 1)
                            _ = setLong(easy, Option.timeoutMS, Int(timeout * 2_000))
                            _ = setLong(easy, Option.connectTimeoutMS, Int(timeout * 1_000))
                            _ = setPointer(easy, Option.writeFunction, unsafeBitCast(write, to: UnsafeRawPointer.self))
                            _ = setPointer(easy, Option.writeData, Unmanaged.passUnretained(sink).toOpaque())
                            if body != nil {
                                _ = setLong(easy, Option.postFieldSize, payload.count)
                                _ = setPointer(easy, Option.postFields, payloadBytes.baseAddress ?? UnsafeRawPointer(urlText))
                            }
                            return withExtendedLifetime(sink) { easyPerform(easy) }
                        }
                    }
                }
                guard code == 0 else {
                    let reason = easyStrerror(code).map { String(cString: $0) } ?? "error \(code)"
                    return .failure(.unreachable("\(code): \(reason)"))
                }
                var status = 0
                _ = getLong(easy, Option.responseCode, &status)
                return .success(Response(status: status, body: Data(sink.bytes)))
            }
        }
    }
#endif
