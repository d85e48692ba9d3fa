import Foundation
import Testing

extension Device {
    /// After a fault: syncs until nothing waits (by time, as Patience waits), then expects every
    /// row of its journal stored exactly once where `sql` queries (the new primary, a standby).
    /// Returns the journal's row count and the device's id, for further checks.
    @discardableResult
    func expectEveryRowStoredOnce(
        _ sql: (String) throws -> [String], _ where: String = "",
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> (rows: Int, id: String) {
        _ = try await Patience.untilAnswered({ () async throws -> Int in
            let waiting = try waiting()
            if waiting != 0 { _ = try run("sync") }
            return waiting
        }) { $0 != 0 }
        #expect(try waiting() == 0, "\(account): rows still waiting", sourceLocation: sourceLocation)
        let journal = try run("journal", "--json", offline: true).stdout
        let rows = try #require(
            try JSONSerialization.jsonObject(with: Data(journal.utf8)) as? [Any],
            sourceLocation: sourceLocation
        ).count
        let id = try #require(
            (try status(offline: true)["sync"] as? [String: Any])?["device"] as? String,
            sourceLocation: sourceLocation)
        #expect(
            try sql(Self.storedOnce(id)) == ["\(rows) \(rows)"],
            "\(account)\(`where`.isEmpty ? "" : " \(`where`)")",
            sourceLocation: sourceLocation)
        return (rows, id)
    }

    /// How many rows of device `id` are stored and how many distinct: "N N" when each is once.
    static func storedOnce(_ id: String) -> String {
        "SELECT count(*) || ' ' || count(DISTINCT seq) FROM pushes WHERE device = '\(id)'"
    }
}
