import Monarch
import Testing

@Suite struct DomainTests {
    let log = CallLog()

    /// A chain of one provider per domain, each named after its domain.
    private func chain(_ registrations: [(String, RequestDomain)]) -> ProviderChain {
        var chain = ProviderChain()
        for (name, domain) in registrations {
            chain.register(StubProvider(name, .miss(reason: nil), log: log), for: domain)
        }
        return chain
    }

    private func asked(_ chain: ProviderChain, for domain: RequestDomain) -> [String] {
        chain.providers(for: domain).map(\.name)
    }

    @Test("a provider registered with a domain is asked only for requests of that domain")
    func selection() {
        let chain = chain([("api", .api), ("assets", .assets), ("all", .any), ("both", [.api, .assets])])
        #expect(asked(chain, for: .api) == ["api", "all", "both"])
        #expect(asked(chain, for: .assets) == ["assets", "all", "both"])
        #expect(asked(chain, for: .docs) == ["all"])
    }

    @Test("a request in any reaches only providers registered with any")
    func anyRequest() {
        let chain = chain([("api", .api), ("all", .any), ("both", [.api, .assets]), ("all-again", .any)])
        #expect(asked(chain, for: .any) == ["all", "all-again"])
    }

    @Test("registration defaults to any, and the order of registration is kept")
    func defaultRegistration() {
        var chain = ProviderChain()
        chain.register(StubProvider("first", .miss(reason: nil), log: log))
        chain.register(StubProvider("second", .miss(reason: nil), log: log), for: .api)
        chain.register(StubProvider("third", .miss(reason: nil), log: log))
        #expect(chain.registrations.map(\.domain) == [.any, .api, .any])
        #expect(asked(chain, for: .api) == ["first", "second", "third"])
        #expect(asked(chain, for: .assets) == ["first", "third"])
    }

    @Test("performing a request asks only the providers of its domain, in order")
    func performSelects() async {
        let chain = chain([("api", .api), ("all", .any), ("assets", .assets), ("api-2", .api)])
        let error = await chainError { () async throws(ChainError) in try await chain.perform(Request(path: "a", domain: .assets)) }
        #expect(error?.code == .exhausted)
        #expect(error?.attempts.map(\.provider) == ["all", "assets"])
        #expect(await log.calls == ["all", "assets"])
    }

    @Test("domains are names: any contains every domain, a union its members")
    func names() throws {
        #expect(RequestDomain.any.contains(.api))
        #expect(RequestDomain.any.contains([.api, .assets]))
        #expect(!RequestDomain.api.contains(.assets))
        #expect(!RequestDomain.api.contains(.any))
        #expect(RequestDomain(union: [.api, .assets]).contains(.api))
        #expect(!RequestDomain(union: [.api, .assets]).contains([.api, .docs]))
        #expect(RequestDomain(union: [.api, .any]) == .any)
        #expect(RequestDomain("api") == .api)
    }

    @Test("descriptions and wire names: one name goes on the wire, any none, a union is refused")
    func wireNames() throws {
        #expect(RequestDomain.any.description == "any")
        #expect(RequestDomain.assets.description == "assets")
        #expect(RequestDomain(union: [.docs, .api]).description == "[api, docs]")
        #expect(try RequestDomain.api.wireName() == "api")
        #expect(try RequestDomain.any.wireName() == nil)
        #expect(throws: MonarchError.self) { try RequestDomain(union: [.api, .docs]).wireName() }
        #expect(RequestDomain(wireName: "api") == .api)
        #expect(RequestDomain(wireName: nil) == .any)
    }
}
