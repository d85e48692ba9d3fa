import AccountSync
import CatalogDocuments
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import OnboardingServer
import ServerControlPlane
import ServerInsights

/// What the dashboard reads from a request: ids, the date range, the format and the table, a form
/// field; each refused with a page saying what is allowed.
extension Dashboard {
    // MARK: - Input

    struct DashboardError: Error {
        var status: HTTPResponse.Status
        var message: String
        /// Seconds to wait (a 429), sent as `Retry-After`.
        var retryAfter: Int? = nil
        var title: String {
            switch status {
            case .notFound: "Not found"
            case .forbidden: "Not allowed"
            case .tooManyRequests: "Too many attempts"
            default: "Refused"
            }
        }

        init(_ status: HTTPResponse.Status, _ message: String) {
            self.status = status
            self.message = message
        }

        init(_ status: HTTPResponse.Status, _ message: String, retryAfter: Int?) {
            self.init(status, message)
            self.retryAfter = retryAfter
        }
    }

    /// A path id; with `access`, an app the person holds a role in (at least `role`).
    static func name(
        _ context: some RequestContext, _ parameter: String, access: Access?, role: Role = .viewer
    ) throws -> String {
        let value = context.parameters.get(parameter) ?? ""
        guard SyncAPI.isValidName(value) else {
            throw DashboardError(.badRequest, "The \(parameter) id must be \(SyncAPI.nameRule).")
        }
        if let access, !access.may(role, in: value) {
            let held =
                access.person.role(in: value).map { "a \($0.rawValue) of \(value)" }
                ?? "not a member of \(value)"
            throw DashboardError(
                .forbidden,
                """
                \(access.person.name) is \(held); this page needs the \(role.rawValue) role there. \
                An owner of \(value) can give it.
                """
            )
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
    static let appTables = ["flows", "trend", "catalogs", "unplanned"]
    static let funnelTables = ["stages", "split", "trend", "variants", "funnels"]

    static func table(_ request: Request, format: Format, of tables: [String]) throws -> String {
        guard let given = request.uri.queryParameters.get("table") else { return tables[0] }
        guard format == .csv, tables.contains(given) else {
            throw DashboardError(
                .badRequest,
                """
                table is for CSV exports (format=csv) and takes \(tables.joined(separator: ", ")) on this \
                page.
                """
            )
        }
        return given
    }

    /// The fields of an `application/x-www-form-urlencoded` body, read by Hummingbird's
    /// `URLEncodedFormDecoder`. A field given twice, a nested field (`a[b]`) or a broken
    /// percent-encoding is refused whole, with one message: a form of the dashboard is flat.
    static func form(_ request: inout Request) async throws -> [String: String] {
        let body: ByteBuffer
        let limit = formLimit(request.uri.path)
        do { body = try await request.collectBody(upTo: limit) } catch {
            throw DashboardError(
                .contentTooLarge,
                limit == smallFormBytes
                    ? "The form was too large: a form of the dashboard is at most 16 KiB."
                    : """
                    The form was too large: a translation file is at most \
                    \(TranslationFile.maximumBytes >> 10) KiB.
                    """
            )
        }
        do {
            return try URLEncodedFormDecoder().decode([String: String].self, from: String(buffer: body))
        } catch {
            throw DashboardError(
                .badRequest,
                "The form could not be read: it takes each field once, as name=value, percent-encoded.")
        }
    }

    static let smallFormBytes = 16 * 1024

    /// The most a form may send: 16 KiB, but for the one that carries a translation file
    /// (`…/studio/drafts/N/strings`), percent-encoded (up to three bytes a byte).
    static func formLimit(_ path: String) -> Int {
        let parts = path.split(separator: "/")
        let isTranslationImport =
            parts.count == 7 && parts[0] == "dashboard" && parts[1] == "apps" && parts[3] == "studio"
            && parts[4] == "drafts"
            && parts[6] == "strings"
        return isTranslationImport ? 3 * TranslationFile.maximumBytes + smallFormBytes : smallFormBytes
    }
}
