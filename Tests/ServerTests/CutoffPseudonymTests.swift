import AccountSync
import Foundation
import OnboardingServer
import ServerTokens
import TestThreads
import Testing
import TourCodec

/// A sign-out or an erasure is remembered under the subject's keyed pseudonym, never its id
/// (`token_cutoffs`): a leaked database does not say who signed out or was erased. A cut-off made
/// while one key signed still holds once another signs; cut-offs an earlier release kept in clear
/// are moved to pseudonyms as the server starts.
@Suite("Cut-offs under pseudonyms", .ownThread)
struct CutoffPseudonymTests {
    static let old = "2026-10=\(TokenTests.oldSecret)"
    static let new = "2026-11=\(TokenTests.newSecret)"

    @Test func cutoffsAreKeptUnderPseudonymsAndHoldAcrossARotationAndAnUpgrade() async throws {
        let oldRing = try TokenSigner(keyRing: Self.old)
        let issued = Date().timeIntervalSince1970 - 60
        func token(_ account: String, issuedAt: Double = issued) async -> String {
            await oldRing.sign(
                TokenClaims(
                    subject: account, scope: .account, app: "growth", issuedAt: issuedAt,
                    expires: Int64(issued) + 3_600))
        }
        let server = try ServerProcess(environment: ["ONBOARDING_SERVER_KEYS": Self.old])
        let ann = await token("ann")
        let signOut = try await HTTP.post(
            server.url.appendingPathComponent("v1/apps/growth/accounts/ann/sign-out"), token: ann,
            body: Data())
        #expect(signOut.status == 200)
        #expect(
            try server.sql("SELECT account FROM token_cutoffs") == [
                oldRing.subjectPseudonym(app: "growth", subject: "ann")
            ])
        // Bob's cut-off as a release before 0.31 kept it: his id in clear.
        _ = try server.sql(
            "INSERT INTO token_cutoffs (app, account, not_before) VALUES ('growth', 'bob', \(issued + 1))")
        let bob = await token("bob")

        // A new key signs from now on; the old one stays in the ring.
        server.stop()
        server.environment["ONBOARDING_SERVER_KEYS"] = "\(Self.new) \(Self.old)"
        try server.start()
        let rotated = try TokenSigner(keyRing: "\(Self.new) \(Self.old)")
        #expect(
            Set(try server.sql("SELECT account FROM token_cutoffs")) == [
                oldRing.subjectPseudonym(app: "growth", subject: "ann"),
                rotated.subjectPseudonym(app: "growth", subject: "bob"),
            ])
        #expect(try server.sql("SELECT count(*) FROM token_cutoffs WHERE account IN ('ann', 'bob')") == ["0"])

        // Both cut-offs still refuse the earlier tokens, on a read and on a push; nothing is stored.
        for (account, earlier) in [("ann", ann), ("bob", bob)] {
            let read = try await HTTP.get(TokenTests.flows(server, account: account), token: earlier)
            #expect(read.status == 401 && read.errorCode == "token_revoked", "\(account): \(read.status)")
            let push = try await HTTP.post(
                server.url.appendingPathComponent("v1/apps/growth/accounts/\(account)/push"), token: earlier,
                body: Data(
                    try PushBatch(
                        device: "phone",
                        items: [
                            PushBatchingTests.item(1, flow: "tour", standing: .completed, device: "phone")
                        ]
                    )
                    .tourValue.jsonUTF8()))
            #expect(
                push.status == 401 && push.errorCode == "token_revoked",
                "\(account): \(push.status) \(String(decoding: push.body, as: UTF8.self))")
        }
        #expect(try server.sql("SELECT count(*) FROM pushes") == ["0"])
        // A token issued after the cut-off, by either key, works.
        let later = Date().timeIntervalSince1970
        #expect(
            try await HTTP.get(
                TokenTests.flows(server, account: "bob"), token: await token("bob", issuedAt: later)
            ).status == 200)
        let fresh = try server.token(account: "ann")
        let pushed = try await HTTP.post(
            server.url.appendingPathComponent("v1/apps/growth/accounts/ann/push"), token: fresh,
            body: Data(
                try PushBatch(
                    device: "phone",
                    items: [PushBatchingTests.item(1, flow: "tour", standing: .completed, device: "phone")]
                )
                .tourValue.jsonUTF8()))
        #expect(pushed.status == 200, "\(String(decoding: pushed.body, as: UTF8.self))")
    }
}
