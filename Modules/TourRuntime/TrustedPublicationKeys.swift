import AccountSync
import TourCodec
import TourCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The publication keys a product's binary trusts (Docs/Security.md): the files of its
/// `Apps/<Folder>/Onboarding/publication-keys/` folder, compiled in. Each is
/// `{"app", "id", "publicKey", "retiredAt"?}`: the public half of an Ed25519 key made by
/// `onboarding-server keys new`, and, once it is retired, from when (`YYYY-MM-DDTHH:MM:SSZ`).
/// A device runs a published catalog only when one of these, unretired, signed it.
public enum TrustedPublicationKeys {
    /// The keys of `files` for `app`, and a problem for each file that is not one (a build's
    /// tests fail on any; a device leaves such a file out, which can only refuse more).
    public static func parse(_ files: [RecordedCatalog], app: String) -> (
        keys: [PublicationKey], problems: [String]
    ) {
        var keys: [PublicationKey] = []
        var problems: [String] = []
        for file in files {
            guard let object = (try? TourValue(jsonText: file.text))?.objectValue,
                let publicKey = object["publicKey"]?.stringValue
            else {
                problems.append(
                    "\(file.file): not a trusted key file ({\"app\", \"id\", \"publicKey\", \"retiredAt\"?})")
                continue
            }
            guard object["app"]?.stringValue == app else {
                problems.append(
                    "\(file.file): a key of \(object["app"]?.stringValue ?? "no app"), not of \(app)")
                continue
            }
            var retiredAt: Double?
            if let text = object["retiredAt"]?.stringValue {
                guard let time = ISOTime.secondsSince1970(instant: text) else {
                    problems.append(
                        "\(file.file): retiredAt is a time as YYYY-MM-DDTHH:MM:SSZ (got \(text.prefix(40)))")
                    continue
                }
                retiredAt = time
            }
            do {
                let key = try PublicationKey(app: app, publicKey: publicKey, retiredAt: retiredAt)
                if let id = object["id"]?.stringValue, id != key.id {
                    problems.append("\(file.file): its id is \(id), but the key's own id is \(key.id)")
                    continue
                }
                keys.append(key)
            } catch {
                problems.append("\(file.file): \(error)")
            }
        }
        return (keys, problems)
    }
}
