import Foundation
import TourCore

/// The user's profile in the cloud (Firebase on iOS): where "tour completed or skipped" lives, so it
/// follows the account to any device.
public protocol ProfileStore: Sendable {
    /// The tour status recorded for the user ("completed", "skipped"), or nil.
    func tourStatus(user: String) async throws -> String?
    func setTourStatus(_ status: String, user: String) async throws
}

public struct ProfileStoreOffline: Error, Equatable {}

/// A profile store kept in a JSON file, shared by every database that names the same file (two
/// devices of one account), and switchable offline.
public struct FileProfileStore: ProfileStore {
    public var path: String
    public var online: Bool

    public init(path: String, online: Bool) {
        self.path = path
        self.online = online
    }

    public func tourStatus(user: String) async throws -> String? {
        guard online else { throw ProfileStoreOffline() }
        return try read()[user]
    }

    public func setTourStatus(_ status: String, user: String) async throws {
        guard online else { throw ProfileStoreOffline() }
        var profiles = try read()
        profiles[user] = status
        let data = try JSONEncoder().encode(profiles)
        try data.write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    private func read() throws -> [String: String] {
        guard let data = FileManager.default.contents(atPath: path) else { return [:] }
        return try JSONDecoder().decode([String: String].self, from: data)
    }
}
