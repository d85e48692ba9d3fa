import AccountSync
import Foundation
import OnboardingServer
import ServerInsights
import ServerTokens
import TestThreads
import Testing
import TourCodec
import TourCore

/// The sync wire's one form: written by TourCodec on devices and on the server alike, with the keys
/// and shapes that releases before 0.11 sent (their synthesized `Codable`), so old and new devices
/// and servers keep talking.
@Suite("Sync wire forms", .ownThread)
struct WireFormTests {
    static let record = AccountFlowRecord(
        epoch: 1, standing: .completed, version: "2.5", at: 1_767_603_600_000, device: "d1")

    @Test func aPushBatchHasTheFormItAlwaysHad() throws {
        let batch = PushBatch(
            device: "d1",
            items: [
                PushItem(
                    seq: 7, time: 1_767_603_600.5, event: "next", catalogVersion: 3,
                    facts: [["fact": "stepEntered", "flow": "app_tour", "step": "welcome", "index": 1]],
                    records: ["app_tour": Self.record])
            ])
        let text = try batch.tourValue.jsonText()
        #expect(
            text
                == #"""
                {"device":"d1","items":[{"catalogVersion":3,"event":"next","facts":[{"fact":"stepEntered\#
                ","flow":"app_tour","index":1,"step":"welcome"}],"records":{"app_tour":{"at":17676036000\#
                00,"device":"d1","epoch":1,"standing":"completed","version":"2.5"}},"seq":7,"time":17676\#
                03600.5}]}
                """#
        )
        #expect(try PushBatch(jsonText: text) == batch)
        // Foundation's coders go through the same one form.
        #expect(try JSONDecoder().decode(PushBatch.self, from: Data(text.utf8)) == batch)
    }

    /// The display budget's exchange (0.16): a day is a number of UTC days since 1970; a count
    /// without a start leaves `lastStart` out.
    @Test func aBudgetExchangeHasItsOneForm() throws {
        let exchange = BudgetExchange(
            device: "d1", since: BudgetDay(number: 20_457),
            counts: [
                BudgetDayCount(device: "d1", day: BudgetDay(number: 20_457), starts: 0, lastStart: nil),
                BudgetDayCount(
                    device: "d1", day: BudgetDay(number: 20_458), starts: 2,
                    lastStart: Date(timeIntervalSince1970: 1_767_603_600.5)),
            ])
        let text = try exchange.tourValue.jsonText()
        #expect(
            text
                == #"""
                {"counts":[{"day":20457,"device":"d1","starts":0},{"day":20458,"device":"d1","lastStart"\#
                :1767603600.5,"starts":2}],"device":"d1","since":20457}
                """#
        )
        #expect(try BudgetExchange(jsonText: text) == exchange)
        #expect(SyncAPI.problem(with: exchange) == nil)
        let answer = AccountBudget(account: "ann", since: exchange.since, counts: exchange.counts)
        #expect(try AccountBudget(jsonText: answer.tourValue.jsonText()) == answer)
        // The counts join as the ledger the engine reads.
        let ledger = BudgetLedger(exchange.counts)
        #expect(ledger.starts(on: BudgetDay(number: 20_458)) == 2)
        #expect(ledger.lastStart == Date(timeIntervalSince1970: 1_767_603_600.5))
    }

    static let recordJSON =
        #"{"at":1767603600000,"device":"d1","epoch":1,"standing":"completed","version":"2.5"}"#

    /// The texts 0.10's `JSONEncoder` (sorted keys) wrote for each answer, written and read the same now.
    @Test func answersHaveTheFormsTheyAlwaysHad() throws {
        let ack = PushAck(applied: 2, duplicates: 1, records: ["app_tour": Self.record])
        let ackText = #"{"applied":2,"duplicates":1,"records":{"app_tour":"# + Self.recordJSON + "}}"
        #expect(try ack.tourValue.jsonText() == ackText)
        #expect(try PushAck(jsonText: ackText) == ack)

        let records = AccountRecords(app: "finite", account: "ann", flows: ["app_tour": Self.record])
        let recordsText = #"{"account":"ann","app":"finite","flows":{"app_tour":"# + Self.recordJSON + "}}"
        #expect(try records.tourValue.jsonText() == recordsText)
        #expect(try AccountRecords(jsonText: recordsText) == records)

        let reportText =
            #"""
            {"accounts":3,"app":"finite","devices":4,"flows":[{"accounts":{"completed":1,"shown":2},"com\#
            pletedHere":1,"devices":4,"flow":"walkthrough","skippedHere":0,"started":3,"steps":[{"accoun\#
            ts":3,"index":1,"step":"welcome"}]}]}
            """#
        let report = try AppReport(jsonText: reportText)
        #expect(report.flows.first?.steps.first?.step == "welcome")
        #expect(report.flows.first?.accounts == ["completed": 1, "shown": 2])
        #expect(try report.tourValue.jsonText() == reportText)

        let claimsText =
            #"{"app":"finite","exp":4000000000,"iat":1767603600.25,"kid":"k1","scope":"account","sub":"ann"}"#
        var claims = TokenClaims(
            subject: "ann", scope: .account, app: "finite", issuedAt: 1_767_603_600.25, expires: 4_000_000_000
        )
        claims.keyID = "k1"
        #expect(try TokenClaims(jsonText: claimsText) == claims)
        #expect(try claims.tourValue.jsonText() == claimsText)
    }

    @Test func answersReadBackAsWritten() throws {
        let ack = PushAck(applied: 2, duplicates: 1, records: ["app_tour": Self.record])
        #expect(try PushAck(jsonText: ack.tourValue.jsonText()) == ack)
        let records = AccountRecords(app: "finite", account: "ann", flows: ["app_tour": Self.record])
        #expect(try AccountRecords(jsonText: records.tourValue.jsonText()) == records)
        let error = ErrorBody(code: "forbidden", message: "not yours")
        #expect(try error.tourValue.jsonText() == #"{"error":{"code":"forbidden","message":"not yours"}}"#)
        #expect(try ErrorBody(jsonText: error.tourValue.jsonText()) == error)
    }

    @Test func aMalformedBodyNamesWhatIsWrong() {
        #expect(throws: DecodingError.self) {
            try PushBatch(jsonText: #"{"device":"d1","items":[{"seq":"one"}]}"#)
        }
        #expect(throws: DecodingError.self) { try PushBatch(jsonText: #"{"items":[]}"#) }
        #expect(throws: JSONTextError.self) { try PushBatch(jsonUTF8: [0x7B, 0xFF, 0x7D]) }
    }

    @Test func tokenClaimsReadBackAsSigned() async throws {
        let signer = try TokenSigner(keys: [TokenKey(id: "k1", secret: String(repeating: "s", count: 32))])
        let claims = TokenClaims(
            subject: "ann", scope: .account, app: "finite", issuedAt: 1_767_603_600.25, expires: 4_000_000_000
        )
        var expected = claims
        expected.keyID = "k1"
        #expect(
            try await signer.verify(
                await signer.sign(claims), now: Date(timeIntervalSince1970: 1_767_603_601)) == expected)
    }
}
