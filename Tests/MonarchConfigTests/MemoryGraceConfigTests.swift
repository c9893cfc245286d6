@testable import MonarchConfig
import Testing

/// `workers.cache.memoryGrace` (issue 26, finding 9).
struct MemoryGraceConfigTests {
    private func cache(_ settings: String) throws -> Configuration.WorkerSettings.Cache? {
        let configuration = try Configuration.parse(yaml: validHead + "workers:\n  cache: \(settings)\n", baseDirectory: "/srv")
        if case .cache(let cache)? = configuration.workers.first?.settings { return cache }
        return nil
    }

    @Test("memoryGrace takes whole milliseconds (0 allowed) for a Redis store; it is refused for a file; absent leaves the worker's default")
    func memoryGrace() throws {
        #expect(try cache("{store: 'redis://cache', memoryGrace: 2s}")?.memoryGrace == .seconds(2))
        #expect(try cache("{store: 'redis://cache', memoryGrace: 0ms}")?.memoryGrace == .zero)
        #expect(try cache("{store: 'redis://cache'}")?.memoryGrace == nil)
        let file = parseError(validHead + "workers:\n  cache: {store: 'sqlite:c.db', memoryGrace: 2s}\n")
        #expect(file?.keyPath == "workers.cache.memoryGrace")
    }
}
