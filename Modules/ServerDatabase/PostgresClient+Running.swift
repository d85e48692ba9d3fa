import Logging
import PostgresNIO
import ServiceLifecycle

extension PostgresClient {
    /// Runs `body` while the pool runs: `run()` begins first, and `body` only once it has (a lease
    /// before `run()` makes PostgresNIO warn that it was not called yet, a race every command
    /// lost now and then). `run()` ends when `body` does.
    public func running<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let started = SchemaReady()
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                started.open()
                await self.run()
                return nil
            }
            await started.wait()
            // `run()` marks the pool running in its first statement; the child is on its way there.
            try await Task.sleep(for: .milliseconds(20))
            do {
                let result = try await body()
                group.cancelAll()
                return result
            } catch {
                group.cancelAll()
                throw error
            }
        }
    }
}

/// A pool as one of the server's services that says when it runs (``started``): the migrations
/// lease nothing before.
public struct PoolService: Service {
    public let client: PostgresClient
    public let started = SchemaReady()

    public init(_ client: PostgresClient) { self.client = client }

    public func run() async throws {
        started.open()
        await client.run()
    }

    /// Returns once the pool runs.
    public func waitUntilRunning() async {
        await started.wait()
        try? await Task.sleep(for: .milliseconds(20))
    }
}
