import AccountSync
import Foundation
import Hummingbird
import Logging
import PostgresNIO
import ServerControlPlane
import ServerDatabase
import TourCodec

extension SyncRoutes {
    func addFlowArchiveRoutes(to router: RouterGroup<AuthenticatedRequestContext>) {
        for (method, archived) in [(HTTPRequest.Method.post, true), (.delete, false)] {
            let editors = requiring(
                .editor, to: archived ? "archiving a flow" : "restoring a flow", in: router)
            editors.on("/v1/apps/:app/flows/:flow/archive", method: method) { _, context in
                await answer {
                    let app = try Self.name(context, "app")
                    let flow = try Self.name(context, "flow")
                    let actor = try context.actor()
                    let changed = try await
                        (flowArchive.set(
                            app: app, flow: flow, archived: archived, by: actor,
                            at: Date().timeIntervalSince1970))
                    return Self.json(
                        [
                            "app": .string(app), "flow": .string(flow), "archived": .bool(archived),
                            "changed": .bool(changed),
                        ] as TourValue)
                }
            }
        }
    }
}
