import AccountSync
import ServerDatabase
import ServerKit
import TourCodec

/// Whom a push's experiment facts count for: the credential that pushed them, never what the facts
/// say. An account's token counts for `account:A`, an install's credential (the path's `install.H`)
/// for `install:H`, so one credential is at most one subject in each variant, however many subjects
/// its facts name.
///
/// A fact that names another account is refused (`422 fact_subject`, naming its row, which the
/// device sets aside); one that names an install (the device's own id, which the server cannot
/// check) is counted for the credential's subject.
enum PushSubjects {
    /// The facts that carry a subject: an experiment's assignment, exposure and goal.
    static let experimentFacts: Set<String> = ["assigned", "exposed", "goalReached"]

    /// The subject a push under `account` (the path's account segment) counts for.
    static func subject(ofPusher account: String) -> String {
        Installs.isInstall(account)
            ? "install:" + account.dropFirst(Installs.subjectPrefix.count) : "account:" + account
    }

    /// `batch` with every experiment fact's subject set to the pusher's; throws for the first row
    /// with a fact that names another account, or no subject at all.
    static func counted(_ batch: PushBatch, pushedBy account: String) throws(APIError) -> PushBatch {
        let own = subject(ofPusher: account)
        var batch = batch
        for index in batch.items.indices {
            var facts = batch.items[index].facts
            var changed = false
            for (position, fact) in facts.enumerated() {
                guard var body = fact.objectValue, case .string(let kind)? = body["fact"],
                    experimentFacts.contains(kind)
                else { continue }
                guard case .string(let named)? = body["subject"] else {
                    throw refusal(seq: batch.items[index].seq, kind: kind, named: nil, own: own)
                }
                if named == own { continue }
                guard named.hasPrefix("install:") else {
                    throw refusal(seq: batch.items[index].seq, kind: kind, named: named, own: own)
                }
                body["subject"] = .string(own)
                facts[position] = .object(body)
                changed = true
            }
            if changed { batch.items[index].facts = facts }
        }
        return batch
    }

    static func refusal(seq: Int64, kind: String, named: String?, own: String) -> APIError {
        let what = named.map { "names the subject '\(String($0.prefix(80)).oneLine)'" } ?? "names no subject"
        return APIError(
            status: .unprocessableContent, code: "fact_subject",
            message:
                """
                item seq \(seq): its \(kind) fact \(what); a push counts for its own credential's subject (\
                \(own)) only
                """,
            seq: seq)
    }
}
