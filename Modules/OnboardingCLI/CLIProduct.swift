import Foundation
import TourRuntime

/// What a product's executable hands the shared CLI.
public struct CLIProduct: Sendable {
    /// The executable's name: `finite`, `lockedin`, ...
    public var executable: String
    public var displayName: String
    /// Builds the product for one run, from what the run knows about its device.
    public var make: @Sendable (RunEnvironment) -> Product

    public init(
        executable: String, displayName: String, make: @escaping @Sendable (RunEnvironment) -> Product
    ) {
        self.executable = executable
        self.displayName = displayName
        self.make = make
    }
}

/// What one CLI run tells the product about its device.
public struct RunEnvironment: Sendable {
    /// The database file (or ":memory:"); stubs of remote services keep their files beside it.
    public var databasePath: String
    /// `--offline`: stubs of network services answer as if there were no network.
    public var offline: Bool
    public var user: String

    public init(databasePath: String, offline: Bool, user: String) {
        self.databasePath = databasePath
        self.offline = offline
        self.user = user
    }
}

enum CLIEnvironment {
    @TaskLocal static var product: CLIProduct?

    static var current: CLIProduct {
        guard let product else { fatalError("OnboardingCLI.main(_:) sets the product before parsing") }
        return product
    }
}

/// The entry point every product's `main.swift` calls.
public enum OnboardingCLI {
    public static func main(_ product: CLIProduct, arguments: [String]? = nil) async {
        await CLIEnvironment.$product.withValue(product) {
            await RootCommand.main(arguments)
        }
    }
}
