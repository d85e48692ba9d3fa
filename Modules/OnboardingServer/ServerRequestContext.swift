import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The context of every request: Hummingbird's, with the address of the connection's peer (the
/// client, or the balancer in front of it; ``ClientAddress`` tells which).
public struct ServerRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}

/// Where a request came from, for rate limits and the audit trail: the connection's peer, unless
/// that peer is a proxy this server trusts (`ONBOARDING_TRUSTED_PROXIES`), in which case the
/// nearest address in `X-Forwarded-For` that is not one of those proxies. Without trusted proxies
/// the header is ignored: any client can write it.
public struct ClientAddress: Sendable {
    /// Peer addresses (exact, as `SocketAddress.ipAddress` writes them) of trusted proxies.
    public var trustedProxies: Set<String>

    public init(trustedProxies: Set<String> = []) { self.trustedProxies = trustedProxies }

    public func of(_ request: Request, _ context: ServerRequestContext) -> String {
        let peer = context.remoteAddress?.ipAddress ?? "unknown"
        guard trustedProxies.contains(peer), let forwarded = request.headers[HTTPField.Name("X-Forwarded-For")!] else {
            return peer
        }
        // Each proxy appends the address it heard from: read from the right, past our proxies.
        let hops = forwarded.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        for hop in hops.reversed() where !trustedProxies.contains(hop) { return String(hop.prefix(64)) }
        return peer
    }
}
