import AccountSync
import ArgumentParser
import CatalogDocuments
import Foundation
import OnboardingServer
import ServerControlPlane
import TourCodec
import TourCore

/// `keys`: the Ed25519 keys that sign an app's publications (Docs/Security.md). The private half is
/// made here, on the publisher's machine, and never reaches the server; the public half is
/// registered with the server (which then accepts what it signs) and compiled into the app (whose
/// devices then run what it signs).
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract:
            """
            Publication signing keys: make one, register or retire its public half, list them, \
            sign a document.
            """,
        subcommands: [New.self, Register.self, Retire.self, List.self, Sign.self])

    static func app(_ app: String) throws -> String {
        guard SyncAPI.isValidName(app) else { throw ValidationError("the app must be \(SyncAPI.nameRule)") }
        return app
    }

    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                """
                Make a signing key: its private half in a file of yours only, its public half as the app's \
                trusted key file.
                """
        )

        @Option(help: "The app it signs for.") var app: String
        @Option(
            help: "The folder to write both files to (made, readable by you only, if it does not exist).",
            completion: .directory)
        var out: String
        @Option(
            help: ArgumentHelp(
                """
                Also put the public half where the product's build compiles it in: \
                PRODUCT/Onboarding/publication-keys/ (PRODUCT: Apps/<Folder>).
                """,
                valueName: "PRODUCT"),
            completion: .directory)
        var product: String?

        /// The product's trusted-keys folder (made if missing), after checking that `product` is a
        /// product's folder and that the private half will not land inside it (its build compiles
        /// that folder in, and its files go to git).
        func productKeysFolder(_ product: String, privateFolder: URL) throws -> URL {
            let root = URL(fileURLWithPath: product).standardizedFileURL
            var isFolder: ObjCBool = false
            let onboarding = root.appendingPathComponent("Onboarding")
            guard FileManager.default.fileExists(atPath: onboarding.path, isDirectory: &isFolder),
                isFolder.boolValue
            else {
                throw Refusal(
                    """
                    --product is a product's folder (Apps/<Folder>, with an Onboarding folder); \
                    \(product) has no Onboarding folder
                    """
                )
            }
            let privatePath = privateFolder.standardizedFileURL.path
            if privatePath == root.path || privatePath.hasPrefix(root.path + "/") {
                throw Refusal(
                    """
                    --out is inside \(product), whose files are compiled in and committed: \
                    keep the private half outside the repository (--out ~/keys)
                    """
                )
            }
            let keys = onboarding.appendingPathComponent("publication-keys")
            do { try FileManager.default.createDirectory(at: keys, withIntermediateDirectories: true) } catch
            {
                throw Refusal("cannot create \(keys.path): \(error.localizedDescription)")
            }
            return keys
        }

        func run() throws {
            let app = try KeysCommand.app(app)
            let key = PublicationSigningKey(newFor: app)
            let folder = URL(fileURLWithPath: out)
            let productKeys = try product.map { try productKeysFolder($0, privateFolder: folder) }
            var isFolder: ObjCBool = false
            if !FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder) {
                // A new folder is its owner's only: it holds a private key.
                do {
                    try FileManager.default.createDirectory(
                        at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                } catch {
                    throw Refusal("cannot create the folder \(out): \(error.localizedDescription)")
                }
            } else if !isFolder.boolValue {
                throw Refusal("--out names a file, not a folder: \(out)")
            }
            let privateFile = folder.appendingPathComponent("\(key.id).signing-key.json")
            let publicFile = folder.appendingPathComponent("\(key.id).json")
            try writeSecretFile(privateFile.path, key.fileText)
            try TrustedKeyFile.text(key.publicKey).write(to: publicFile, atomically: true, encoding: .utf8)
            print(key.id)
            if let productKeys {
                let compiledIn = productKeys.appendingPathComponent("\(key.id).json")
                try TrustedKeyFile.text(key.publicKey).write(
                    to: compiledIn, atomically: true, encoding: .utf8)
                note(
                    """
                    signing key \(key.id) for \(app):
                      private: \(privateFile.path) (mode 0600). Keep it with the publisher: \
                    a password manager or
                               a secrets store; never in git, never on the server. Whoever holds it can \
                    publish to
                               every device of \(app).
                      public:  \(compiledIn.path) (compiled into \(app) at its next build: commit it;
                               its devices run what this key signs once that build ships)
                    next:
                      1. build and ship: swift build (devices of builds without it refuse what it signs)
                      2. register it with the server: onboarding-server keys register --app \(app) \
                    \(compiledIn.path)
                      3. publish signed: onboarding-server publish --app \(app) --key \(privateFile.path) \
                    DOCUMENT
                    """)
                return
            }
            note(
                """
                signing key \(key.id) for \(app):
                  private: \(privateFile.path) (mode 0600; keep it with the publisher, never on the server, \
                never in git)
                  public:  \(publicFile.path)
                next:
                  1. compile it into the app: copy the public file to \
                Apps/<Folder>/Onboarding/publication-keys/
                  2. register it with the server: onboarding-server keys register --app \(app) \
                \(publicFile.path)
                  3. publish signed: onboarding-server publish --app \(app) --key \(privateFile.path) DOCUMENT
                """)
        }
    }

    struct Register: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                """
                Register a key's public half (its trusted key file): the server then accepts what it signs \
                for the app.
                """
        )
        @Option(help: "The app.") var app: String
        @Argument(help: "The public key file `keys new` wrote.", completion: .file(extensions: ["json"]))
        var file: String
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let app = try KeysCommand.app(app)
            let key = try TrustedKeyFile.read(file, app: app)
            let outcome = try await database.withClient { client, logger in
                try await PublicationKeyStore(client: client, logger: logger).register(
                    key, by: .commandLine(), at: Date().timeIntervalSince1970)
            }
            switch outcome {
            case .registered(let key): print("\(app) publication key \(key.id) registered")
            case .unchanged(let key), .retired(let key):
                print("\(app) publication key \(key.id) was registered already")
            case .refused(let why): throw Refusal(why)
            }
        }
    }

    struct Retire: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                """
                Retire a key for good: the server refuses what it signs from now, and devices that hear of \
                it do too.
                """
        )
        @Option(help: "The app.") var app: String
        @Option(help: "The key's id (keys list).") var key: String
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let app = try KeysCommand.app(app)
            let key = key
            let outcome = try await database.withClient { client, logger in
                try await PublicationKeyStore(client: client, logger: logger).retire(
                    app: app, id: key, by: .commandLine(), at: Date().timeIntervalSince1970)
            }
            switch outcome {
            case .retired(let key): print("\(app) publication key \(key.id) retired")
            case .unchanged(let key), .registered(let key):
                print("\(app) publication key \(key.id) was retired already")
            case .refused(let why): throw Refusal(why)
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List an app's registered publication keys.")
        @Option(help: "The app.") var app: String
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let app = try KeysCommand.app(app)
            let keys = try await database.withClient { client, logger in
                try await PublicationKeyStore(client: client, logger: logger).all(app: app)
            }
            if keys.isEmpty { print("\(app) has no publication key registered") }
            for stored in keys {
                let retired = stored.key.retiredAt.map { " · retired \(ISOTime.wholeSeconds($0))" } ?? ""
                print(
                    """
                    \(stored.key.id) \(stored.key.publicKey) · registered by \(stored.registeredBy)\(retired)
                    """
                )
            }
        }
    }

    struct Sign: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                """
                Sign a catalog document's canonical form and print the signature ({\"key\", \"signature\"}), \
                for the API.
                """
        )
        @Option(help: "The signing key file (`keys new`).", completion: .file(extensions: ["json"])) var key:
            String
        @Argument(help: "The catalog document.", completion: .file(extensions: ["json"])) var file: String

        func run() throws {
            let signing = try SigningKeys.read([key])[0]
            let text = try canonical(documentText(file))
            print(try signing.sign(document: text).tourValue.jsonText())
        }
    }
}

/// A trusted key file (`Apps/<Folder>/Onboarding/publication-keys/ID.json`): the public half, its
/// app and id, and when it was retired (an ISO 8601 time, or absent).
enum TrustedKeyFile {
    static func text(_ key: PublicationKey) -> String {
        let value: TourValue = [
            "app": .string(key.app), "id": .string(key.id), "publicKey": .string(key.publicKey),
        ]
        return ((try? value.jsonText()) ?? "") + "\n"
    }

    static func read(_ path: String, app: String) throws -> PublicationKey {
        guard let data = FileManager.default.contents(atPath: path),
            let object = (try? TourValue(jsonText: String(decoding: data, as: UTF8.self)))?.objectValue,
            let publicKey = object["publicKey"]?.stringValue
        else { throw Refusal("\(path) is not a public key file of onboarding-server keys new") }
        guard object["app"]?.stringValue == app else {
            throw Refusal("\(path) is a key of \(object["app"]?.stringValue ?? "no app"), not \(app)")
        }
        do { return try PublicationKey(app: app, publicKey: publicKey) } catch {
            throw Refusal("\(path): \(error)")
        }
    }
}

/// Signing key files, read for signing (never printed, never sent).
enum SigningKeys {
    static func read(_ paths: [String]) throws -> [PublicationSigningKey] {
        try paths.map { path in
            guard let data = FileManager.default.contents(atPath: path) else {
                throw Refusal("cannot read the key file \(path)")
            }
            do { return try PublicationSigningKey(fileText: String(decoding: data, as: UTF8.self)) } catch {
                throw Refusal("\(path): \(error)")
            }
        }
    }
}

/// The canonical text of a catalog document (what the server stores and devices verify), or the
/// text as given when it is not a document (the publish check then says why).
func canonical(_ text: String) -> String {
    (try? CatalogDocument(text: text).text()) ?? text
}
