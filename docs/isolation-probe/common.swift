// Stand-ins for MonarchLoop: a loop with a serial executor, and a libuv-like handle whose
// callback properties are non-Sendable closures on an @unchecked Sendable class.
final class Loop: SerialExecutor, @unchecked Sendable {
    func enqueue(_ job: consuming ExecutorJob) {}
    func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }
    func checkIsolated() {}
}
final class Connection: @unchecked Sendable {
    let loop: Loop
    init(loop: Loop) { self.loop = loop }
    var onMessage: ((Int) -> Void)?
    func whenEnded(_ body: @escaping (String) -> Void) {}
    func send(_ m: Int) {}
}
