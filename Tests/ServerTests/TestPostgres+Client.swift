import Logging
import OnboardingServer
import PostgresNIO

extension TestPostgres {
    /// `body` with a client of a fresh database migrated to the newest schema (and the client's
    /// logger, at `.error`); the client runs while `body` does and stops after it.
    static func withMigratedClient(
        maximumConnections: Int = 2, _ body: @escaping @Sendable (PostgresClient, Logger) async throws -> Void
    ) async throws {
        var logger = Logger(label: "test-postgres")
        logger.logLevel = .error
        let url = try DatabaseURL(try freshDatabase())
        let client = PostgresClient(
            configuration: url.clientConfiguration(maximumConnections: maximumConnections), backgroundLogger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            try await PostgresSchema.migrate(client, logger: logger)
            try await body(client, logger)
        }
    }
}
