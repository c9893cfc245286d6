final class SConn: @unchecked Sendable { var onMessage: (@Sendable (Int) -> Void)? }
actor Core {
    var count = 0
    func register(_ c: SConn) {
        #if F1
        c.onMessage = { [unowned self] m in self.count += m }
        #endif
        #if F2
        c.onMessage = { [unowned self] m in self.assumeIsolated { $0.count += m } }
        #endif
    }
}
