import Foundation
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// Where a request came from, for rate limits and the audit trail: the connection's peer, unless
/// that peer is a proxy this server trusts (`ONBOARDING_TRUSTED_PROXIES`), in which case the
/// nearest address in `X-Forwarded-For` that is not one of those proxies. Without trusted proxies
/// the header is ignored: any client can write it.
public struct ClientAddress: Sendable {
    /// Peer addresses (exact, as `SocketAddress.ipAddress` writes them) of trusted proxies.
    public var trustedProxies: Set<String>
    /// Said once: a request came with `X-Forwarded-For` from a peer that is not a trusted proxy
    /// (a balancer in front that nobody named: every client then looks like the balancer).
    private let warned = Once()
    let logger: Logger?

    public init(trustedProxies: Set<String> = [], logger: Logger? = nil) {
        self.trustedProxies = trustedProxies
        self.logger = logger
    }

    /// The client's address, for rate limits and the audit trail. An IPv6 address stands for its
    /// /64 (one host's usual share), so rotating addresses within it gains nothing.
    public func of(_ request: Request, _ context: some RemoteAddressRequestContext) -> String {
        let peer = context.remoteAddress?.ipAddress ?? "unknown"
        // Every line of the header, in order: a balancer may add its own line after the client's.
        let lines = request.headers[values: .xForwardedFor]
        guard !lines.isEmpty else { return Self.subject(peer) }
        guard trustedProxies.contains(peer) else {
            if warned.first() {
                logger?.warning(
                    """
                    a request came with X-Forwarded-For from a peer that is not a trusted proxy; \
                    if a balancer is in front, name it (--trusted-proxy or ONBOARDING_TRUSTED_PROXIES)
                    """,
                    metadata: ["peer": "\(peer)"])
            }
            return Self.subject(peer)
        }
        // Each proxy appends the address it heard from: read from the right, past our proxies.
        let hops = lines.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        for hop in hops.reversed() where !trustedProxies.contains(hop) {
            return Self.subject(String(hop.prefix(64)))
        }
        return Self.subject(peer)
    }

    /// An IPv4 address as it is (an IPv4-mapped IPv6 address too); an IPv6 address as its /64
    /// (`2001:db8:1:2::/64`).
    static func subject(_ address: String) -> String {
        guard address.contains(":") else { return address }
        if address.contains("."), let v4 = address.split(separator: ":").last { return String(v4) }
        let halves = address.components(separatedBy: "::")
        guard halves.count <= 2 else { return address }
        let head = halves[0].split(separator: ":").map(String.init)
        let tail = halves.count == 2 ? halves[1].split(separator: ":").map(String.init) : []
        var groups = head
        if halves.count == 2 { groups += Array(repeating: "0", count: max(0, 8 - head.count - tail.count)) }
        groups += tail
        guard groups.count == 8 else { return address }
        return groups.prefix(4).map { String(Int($0, radix: 16) ?? 0, radix: 16) }.joined(separator: ":")
            + "::/64"
    }
}

/// True the first time it is asked, false ever after.
final class Once: Sendable {
    private let done = Mutex(false)
    func first() -> Bool {
        done.withLock { done in
            defer { done = true }; return !done
        }
    }
}

/// Every answer's `X-Request-ID`: the request's own when it sends a sensible one (a balancer's, a
/// client's retry), else a new one; every log line of the request names it (`request_id`).
package enum RequestID {
    /// 1 to 128 letters, digits, `-`, `_`, `.`, `:`; anything else is replaced, not echoed.
    package static func accepting(_ value: String?) -> String? {
        guard let value, (1...128).contains(value.utf8.count),
            value.unicodeScalars.allSatisfy({
                $0.isASCII
                    && ($0.properties.isAlphabetic || ("0"..."9").contains($0)
                        || "-_.:".unicodeScalars.contains($0))
            })
        else { return nil }
        return value
    }

    package static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(generator.next(), radix: 16) + String(generator.next() & 0xFFFF_FFFF, radix: 16)
    }
}
