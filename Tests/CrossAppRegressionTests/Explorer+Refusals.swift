import Foundation
import Persistence
import TourCore
import TourRuntime

/// Refused moves: refused by the engine, and by the runtime on the state's own database.
extension Explorer {
    /// Refused moves. The engine refuses each one in memory (it returned no state); then each
    /// (step, move) not yet tried on a database, and every refused back and skip at a state kept on
    /// file, runs on the state's own database: refused, with the snapshot, the stored state and every
    /// byte of the image (or of the file and its -wal) unchanged.
    func checkRefusals(_ moves: [Move], at node: Node, on database: OnboardingDatabase, stored: Session)
        async throws
    {
        report.refusalsChecked += moves.count
        guard subject.checksRefusalsOnDisk else { return }
        let product = subject.make("", node.world)
        let place = where_(stored.tour, product)
        // Each refused move is tried on a database the first time it is refused at a step; back and
        // skip, the ways out users reach for, at every state kept in a file as well.
        let onFile: Bool
        if case .file = node.store { onFile = true } else { onFile = false }
        let onDisk = moves.filter { move in
            let wayOut = move.actionName == "back" || move.actionName == "skip"
            return diskChecked.insert("\(place) \(move)").inserted || (wayOut && onFile)
        }
        guard !onDisk.isEmpty else { return }
        let bytes = try self.bytes(node.store, database)
        let session = makeSession(
            product, database: database, world: node.world, stored: stored, answers: [:])
        let snapshot = try await session.snapshot()
        for move in onDisk {
            report.refusalsOnDisk += 1
            do {
                _ = try await perform(move, on: session, product: product, stored: stored)
                fail(node.path + [move], place, "was accepted although the engine refuses it here")
                return
            } catch is TourRefusal {
                continue
            }
        }
        let tried = onDisk.map(\.description).joined(separator: "; ")
        if try await session.snapshot() != snapshot {
            fail(node.path, place, "refused moves (\(tried)) changed the state in memory")
        }
        if try database.session(key(for: product), scopes: product.scopes) != stored {
            fail(node.path, place, "refused moves (\(tried)) changed the stored state")
        }
        if try self.bytes(node.store, database) != bytes {
            fail(node.path, place, "refused moves (\(tried)) changed the database's bytes")
        }
    }
}
