import OnboardingServer
import ServerTokens
import Testing

/// `DATABASE_URL` as libpq reads it, several hosts included (for failover).
@Suite struct DatabaseURLTests {
    @Test func severalHostsAreReadInOrderWithTheFirstInUse() throws {
        let url = try DatabaseURL(
            "postgres://app:s3cret@db1:5432,db2:6543/onboarding?target_session_attrs=read-write")
        #expect(url.hosts.map(\.description) == ["db1:5432", "db2:6543"])
        #expect("\(url.host):\(url.port)" == "db1:5432")
        #expect(url.targetSessionAttributes == "read-write")
        #expect(url.user == "app" && url.password == "s3cret" && url.database == "onboarding")
        let moved = url.using(url.hosts[1])
        #expect("\(moved.host):\(moved.port)" == "db2:6543")
        // The password never shows; the host in use is marked.
        #expect(moved.description == "postgres://app:‹redacted›@db1:5432,[db2:6543]/onboarding")
        // A host without a port takes PostgreSQL's.
        #expect(try DatabaseURL("postgres://app@a,b:7/x").hosts.map(\.description) == ["a:5432", "b:7"])
        // One host is as before.
        let one = try DatabaseURL("postgres://app@db:5433/x")
        #expect(one.hosts.map(\.description) == ["db:5433"])
        #expect(one.targetSessionAttributes == "any")
        // A replica's URL may ask for a standby (READ_DATABASE_URL; DATABASE_URL refuses it).
        #expect(
            try DatabaseURL("postgres://app@a:1,b:2/x?target_session_attrs=standby").targetSessionAttributes
                == "standby")
    }

    @Test(arguments: [
        ("postgres://app@a:1,,b:2/x", "lists them as HOST:PORT,HOST:PORT"),
        ("postgres://app@a:1,b:notaport/x", "lists them as HOST:PORT,HOST:PORT"),
        ("postgres://app@a:1,b:70000/x", "lists them as HOST:PORT,HOST:PORT"),
        (
            "postgres://app@a:1,b:2/x?target_session_attrs=prefer-standby",
            "target_session_attrs 'prefer-standby' is not one of any, read-write, standby"
        ),
    ])
    func aBadURLIsRefusedSayingWhatIsAllowed(text: String, words: String) {
        #expect {
            _ = try DatabaseURL(text)
        } throws: { error in
            (error as? ServerConfigurationError)?.description.contains(words) == true
        }
    }
}
