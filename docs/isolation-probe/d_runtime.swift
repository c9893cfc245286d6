final class Conn: @unchecked Sendable { var onMessage: ((Int) -> Void)? }
final class Session { var n = 0; func received(_ m: Int) { n += m } }
actor Core {
    var s = Session()
    var count = 0
    func register(_ c: Conn) {
        let session = s
        c.onMessage = { [unowned self] m in self.count += m }  // actor state, mutated from any thread
    }
}
@main struct Main {
    static func main() async {
        let core = Core(); let c = Conn()
        await core.register(c)
        await Task.detached { c.onMessage?(1); print("an actor-isolated closure ran off its actor: nothing checked it") }.value
    }
}
