import AccountSync
import Foundation
import HTTPTypes
import Hummingbird

/// What the dashboard reads from a request: ids, the date range, the format and the table, a form
/// field; each refused with a page saying what is allowed.
extension Dashboard {
    // MARK: - Input

    struct DashboardError: Error {
        var status: HTTPResponse.Status
        var message: String
        var title: String {
            switch status {
            case .notFound: "Not found"
            case .forbidden: "Not allowed"
            default: "Refused"
            }
        }

        init(_ status: HTTPResponse.Status, _ message: String) {
            self.status = status
            self.message = message
        }
    }

    static func name(_ context: BasicRequestContext, _ parameter: String, session: DashboardSessions.Session?) throws -> String {
        let value = context.parameters.get(parameter) ?? ""
        guard SyncAPI.isValidName(value) else {
            throw DashboardError(.badRequest, "The \(parameter) id must be \(SyncAPI.nameRule).")
        }
        if let session, let only = session.app, only != value {
            throw DashboardError(.forbidden, "This session's admin token is for \(only) only.")
        }
        return value
    }

    static func range(_ request: Request, today: Date) throws -> DayRange? {
        let query = request.uri.queryParameters
        do {
            return try DayRange(from: query.get("from"), to: query.get("to"), today: today)
        } catch {
            throw DashboardError(.badRequest, "The date range is refused: \(error.message).")
        }
    }

    enum Format: String { case html, csv, json }

    static func format(_ request: Request) throws -> Format {
        let given = request.uri.queryParameters.get("format") ?? "html"
        guard let format = Format(rawValue: given) else {
            throw DashboardError(.badRequest, "format takes html, csv or json.")
        }
        return format
    }

    /// The tables a page exports as CSV, one file each (`?format=csv&table=NAME`); the first is the
    /// one given without `table`. JSON exports carry them all in one document.
    static let overviewTables = ["flows", "apps", "trend"]
    static let appTables = ["flows", "trend", "catalogs"]
    static let funnelTables = ["funnels", "variants"]

    static func table(_ request: Request, format: Format, of tables: [String]) throws -> String {
        guard let given = request.uri.queryParameters.get("table") else { return tables[0] }
        guard format == .csv, tables.contains(given) else {
            throw DashboardError(
                .badRequest,
                "table is for CSV exports (format=csv) and takes \(tables.joined(separator: ", ")) on this page.")
        }
        return given
    }

    /// A field of an `application/x-www-form-urlencoded` body.
    static func formValue(_ body: String, _ name: String) -> String? {
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0] == name else { continue }
            return String(parts[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
        }
        return nil
    }
}
