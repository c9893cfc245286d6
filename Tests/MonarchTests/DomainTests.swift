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

    @Test("domains are bits: any holds every bit")
    func bits() {
        #expect(RequestDomain(bit: 0).rawValue == 1)
        #expect(RequestDomain(bit: 63).rawValue == 1 << 63)
        #expect(RequestDomain.any.rawValue == .max)
        for bit in 0..<64 { #expect(RequestDomain.any.contains(RequestDomain(bit: bit))) }
        #expect(!RequestDomain.api.contains(.assets))
        #expect(!RequestDomain.api.contains(.any))
        #expect(RequestDomain([.api, .assets]).rawValue == 0b11)
    }

    @Test("a domain describes itself")
    func description() {
        #expect(RequestDomain.any.description == "any")
        #expect(RequestDomain.assets.description == "domain(0x2)")
        #expect(RequestDomain([.api, .docs]).description == "domain(0x5)")
    }

    @Test("DomainNames gives each name one bit, in order, and any every bit")
    func namesToDomains() {
        let names = DomainNames(["api", "assets", "static"])
        #expect(names.domain(named: "api") == RequestDomain(bit: 0))
        #expect(names.domain(named: "assets") == RequestDomain(bit: 1))
        #expect(names.domain(named: "static") == RequestDomain(bit: 2))
        #expect(names.domain(named: "any") == .any)
        #expect(names.domain(named: "nope") == nil)
        #expect(names.domain(named: "API") == nil)
    }

    @Test("DomainNames names the bits of a domain in bit order")
    func domainsToNames() throws {
        let names = DomainNames(["api", "assets", "static"])
        #expect(names.names(of: .any) == ["any"])
        #expect(names.names(of: RequestDomain(bit: 1)) == ["assets"])
        #expect(names.names(of: [RequestDomain(bit: 2), RequestDomain(bit: 0)]) == ["api", "static"])
        #expect(names.names(of: RequestDomain(bit: 5)) == [])
        #expect(names.names(of: []) == [])
        for name in names.names {
            let domain = try #require(names.domain(named: name))
            #expect(names.names(of: domain) == [name])
        }
    }

    @Test("DomainNames holds up to 64 names")
    func sixtyFourNames() {
        let names = DomainNames((0..<64).map { "d\($0)" })
        #expect(names.domain(named: "d63") == RequestDomain(bit: 63))
        #expect(names.names(of: RequestDomain(bit: 63)) == ["d63"])
        #expect(DomainNames([]).names(of: .api) == [])
        #expect(DomainNames([]).domain(named: "any") == .any)
    }
}
