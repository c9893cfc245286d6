import Foundation
import Testing
@testable import MonarchWire

/// The fast path for the hot messages against the full decoder and encoder: it must give the
/// same messages, and leave everything else — every invalid payload above all — to the full
/// decoder.
@Suite struct HotMessageCodecTests {
    /// The full decoder alone.
    func fullDecode(_ payload: [UInt8]) -> WireMessage? {
        try? JSONDecoder().decode(WireMessage.self, from: Data(payload))
    }

    func fastDecode(_ payload: [UInt8]) -> WireMessage? {
        payload.withUnsafeBytes { HotMessageCodec.decode($0) }
    }

    /// Every frame payload of every vector.
    static let payloads: [(name: String, payload: [UInt8], valid: Bool)] = {
        var all: [(String, [UInt8], Bool)] = []
        for vector in ProtocolVector.all {
            var decoder = FrameDecoder(maxFrameBytes: vector.maxFrameBytes ?? FrameDecoder.defaultMaxFrameBytes)
            decoder.append(contentsOf: vector.bytes)
            var frames: [[UInt8]] = []
            while let frame = try? decoder.nextFrame() { frames.append(frame) }
            for (index, frame) in frames.enumerated() {
                // The frame at the error is invalid (frames after it are never decoded, and are
                // only compared with the full decoder).
                let valid = vector.expect.error == nil || index != vector.expect.messages.count
                all.append(("\(vector.name)#\(index)", frame, valid))
            }
        }
        return all
    }()

    @Test("Every vector: the fast path gives what the full decoder gives, or leaves it; it never accepts an invalid payload")
    func vectors() throws {
        #expect(Self.payloads.count > 80)
        var fast = 0
        var acceptedInvalid: [String] = []
        for (name, payload, valid) in Self.payloads {
            // The codec checks UTF-8 before anything is read; the fast path reads checked payloads only.
            guard String(validating: payload, as: UTF8.self) != nil else {
                #expect(throws: ProtocolError.self) { try MessageCodec().decode(payload) }
                continue
            }
            guard let decoded = fastDecode(payload) else { continue }
            fast += 1
            if !valid { acceptedInvalid.append(name) }
            #expect(decoded == fullDecode(payload), "\(name)")
        }
        #expect(acceptedInvalid.isEmpty, "the fast path accepted invalid payloads: \(acceptedInvalid)")
        #expect(fast >= 10, "the fast path decoded \(fast) vectors")
    }

    @Test("Odd but valid inputs agree with the full decoder; unusual ones are left to it", arguments: [
        #"{"type":"request","id":1,"path":"caf\u00e9 \ud83d\ude00 \"q\" \\ \/ \n\t"}"#,
        #"  { "id" : 7 , "type" : "response", "status" : 204 , "body" : "" }  "#,
        #"{"type":"response","id":1,"status":200,"body":"aGk=","headers":{"a":"1","B":"\u0000"}}"#,
        #"{"type":"request","id":2,"path":"p","query":[{"name":"a","value":null},{"name":"b","extra":[1,{"x":null}]}]}"#,
        #"{"type":"failure","id":3,"error":{"code":"x","message":"y","attempts":[{"provider":"p","outcome":"miss","code":null}]}}"#,
        #"{"type":"ping"}"#,
        #"{"type":"pong","id":null}"#,
        #"{"type":"miss","id":9007199254740991,"unknown":{"deep":[true,false,null,-1.5e3]}}"#,
        // Left to the full decoder, which decides (and may refuse):
        #"{"type":"request","id":1.0,"path":"p"}"#,
        #"{"type":"request","id":1,"id":2,"path":"p"}"#,
        #"{"type":"response","id":1,"status":200,"body":"aGl="}"#,
        #"{"type":"response","id":1,"status":200,"body":"aG k="}"#,
        #"{"type":"request","id":9007199254740992,"path":"p"}"#,
        #"{"type":"request","id":1,"path":"p","method":"get"}"#,
        #"{"type":"response","id":1,"status":99}"#,
        #"{"type":"request","id":01,"path":"p"}"#,
        #"{"type":"request","id":1,"path":"\ud800"}"#,
        #"{"type":"cancel","id":-1}"#,
        #"{"type":"request","id":1,"path":"p","headers":{"a":"1","a":"2"}}"#,
    ])
    func oddInputs(text: String) {
        let payload = Array(text.utf8)
        let full = fullDecode(payload)
        if let fast = fastDecode(payload) {
            #expect(fast == full, "\(text)")
        }
    }

    @Test("Messages written by the fast encoder read back the same through the full decoder, and the other way round")
    func roundTrips() throws {
        var generator = SeededGenerator(seed: 0x4D6F6E61)
        for _ in 0..<500 {
            let message = Self.randomMessage(&generator)
            var fastBytes: [UInt8] = []
            #expect(HotMessageCodec.encode(message, into: &fastBytes))
            #expect(fullDecode(fastBytes) == message, "\(String(decoding: fastBytes, as: UTF8.self))")
            // As the full codec writes them (a `\/` in base64 would send the body to the full decoder).
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.withoutEscapingSlashes]
            let fullBytes = Array(try encoder.encode(message))
            #expect(fastDecode(fullBytes) == message, "\(String(decoding: fullBytes, as: UTF8.self))")
            #expect(try MessageCodec().decode(fastBytes) == message)
        }
    }

    @Test("Other types are left to the full codec")
    func otherTypes() {
        var bytes: [UInt8] = []
        #expect(!HotMessageCodec.encode(.status(StatusMessage(id: 1)), into: &bytes))
        #expect(bytes.isEmpty)
        #expect(fastDecode(Array(#"{"type":"status","id":1}"#.utf8)) == nil)
    }

    static func randomString(_ generator: inout SeededGenerator) -> String {
        let pieces = ["a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1f}", "é", "😀", "?", "&", "=", "%2F"]
        let count = Int.random(in: 0...12, using: &generator)
        return (0..<count).map { _ in pieces.randomElement(using: &generator)! }.joined()
    }

    static func randomMap(_ generator: inout SeededGenerator) -> [String: String]? {
        guard Bool.random(using: &generator) else { return nil }
        var map: [String: String] = [:]
        for _ in 0..<Int.random(in: 0...4, using: &generator) { map[randomString(&generator)] = randomString(&generator) }
        return map
    }

    static func randomBody(_ generator: inout SeededGenerator) -> Data? {
        guard Bool.random(using: &generator) else { return nil }
        return Data((0..<Int.random(in: 0...70, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    static func maybe<T>(_ generator: inout SeededGenerator, _ make: (inout SeededGenerator) -> T) -> T? {
        Bool.random(using: &generator) ? make(&generator) : nil
    }

    static func randomMessage(_ g: inout SeededGenerator) -> WireMessage {
        let id = MessageID.random(in: 0...MessageIDLimit, using: &g)
        switch Int.random(in: 0..<8, using: &g) {
        case 7:
            return .store(StoreMessage(
                id: id, key: randomString(&g), status: Int.random(in: 100...599, using: &g), headers: randomMap(&g),
                body: randomBody(&g), ttlMs: maybe(&g) { g in UInt64.random(in: 0...1_000_000, using: &g) }))
        case 0:
            return .request(RequestMessage(
                id: id, path: randomString(&g), domain: maybe(&g, randomString),
                query: maybe(&g) { g in (0..<Int.random(in: 0...3, using: &g)).map { _ in
                    QueryItem(name: randomString(&g), value: maybe(&g, randomString)) } },
                method: maybe(&g) { g in ["GET", "POST", "HEAD"].randomElement(using: &g)! }, headers: randomMap(&g),
                body: randomBody(&g), policy: maybe(&g) { g in CachePolicy.allCases.randomElement(using: &g)! },
                deadlineMs: maybe(&g) { g in UInt64.random(in: 0...UInt64.max, using: &g) }, params: randomMap(&g),
                upstream: maybe(&g, randomString), ttlMs: maybe(&g) { g in UInt64.random(in: 0...1_000_000, using: &g) },
                key: maybe(&g, randomString)))
        case 1:
            return .response(ResponseMessage(
                id: id, status: Int.random(in: 100...599, using: &g), source: maybe(&g, randomString), headers: randomMap(&g),
                body: randomBody(&g), stale: maybe(&g) { g in Bool.random(using: &g) },
                ageMs: maybe(&g) { g in UInt64.random(in: 0...UInt64.max, using: &g) },
                ttlMs: maybe(&g) { g in UInt64.random(in: 0...99, using: &g) }, cacheable: maybe(&g) { g in Bool.random(using: &g) }))
        case 2:
            return .miss(MissMessage(id: id, source: maybe(&g, randomString), reason: maybe(&g, randomString)))
        case 3:
            let attempts = maybe(&g) { g in (0..<Int.random(in: 0...3, using: &g)).map { _ in
                FailureMessage.Attempt(
                    provider: randomString(&g), outcome: [.miss, .failure, .timeout, .cancelled].randomElement(using: &g)!,
                    code: maybe(&g, randomString).map(FailureCode.init(rawValue:)), message: maybe(&g, randomString)) } }
            return .failure(FailureMessage(id: id, error: .init(code: FailureCode(rawValue: randomString(&g)), message: randomString(&g), attempts: attempts)))
        case 4: return .cancel(CancelMessage(id: id))
        case 5: return .ping(PingMessage(id: maybe(&g) { _ in id }))
        default: return .pong(PongMessage(id: maybe(&g) { _ in id }))
        }
    }
}

/// A small deterministic random number generator (SplitMix64), so failures reproduce.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension HotMessageCodecTests {
    @Test("Strings are scanned eight bytes at a time: every position of a quote, backslash or control byte is found")
    func wordAtATimeScan() {
        for length in 0..<40 {
            for position in 0..<max(length, 1) {
                for special in [UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x01, 0x1F] {
                    var text = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    // Bytes around the special one that trip the word test without being special.
                    if length > 2 { text[0] = 0xC3; text[1] = 0xA9 }
                    guard position < length else { continue }
                    text[position] = special
                    let payload = [UInt8(ascii: "\"")] + text + [UInt8(ascii: "\"")]
                    payload.withUnsafeBytes { bytes in
                        var cursor = JSONCursor(bytes)
                        let skipped = cursor.skipString()
                        if special == UInt8(ascii: "\"") {
                            #expect(skipped && cursor.index == position + 2, "\(length) \(position)")
                        } else {
                            // A control byte or a lone backslash makes the string invalid here.
                            #expect(!skipped || special == UInt8(ascii: "\\"), "\(length) \(position) \(special)")
                        }
                    }
                }
            }
        }
        let long = [UInt8(ascii: "\"")] + [UInt8](repeating: UInt8(ascii: "Q"), count: 100_000) + [UInt8(ascii: "\"")]
        long.withUnsafeBytes { bytes in
            var cursor = JSONCursor(bytes)
            #expect(cursor.plainString()?.count == 100_000)
        }
    }

    @Test("Names are duplicates when their code points are: escapes decoded, canonically equivalent spellings kept apart")
    func duplicateNames() {
        func duplicate(_ json: String) -> Bool? {
            Array(json.utf8).withUnsafeBytes { bytes in
                var cursor = JSONCursor(bytes)
                return cursor.hasDuplicateName()
            }
        }
        #expect(duplicate(#"{"a":1,"b":{"c":[{"d":1,"e":2}]}}"#) == false)
        #expect(duplicate(#"{"a":1,"a":2}"#) == true)
        #expect(duplicate(#"{"a":1,"\u0061":2}"#) == true)
        #expect(duplicate(#"{"x":[{"k":1},{"k":2,"k":3}]}"#) == true, "deep inside an array")
        // "é" precomposed and "e" with a combining accent: equal Swift strings, distinct names.
        #expect(duplicate("{\"caf\u{E9}\":1,\"cafe\u{301}\":2}") == false)
        #expect(duplicate(#"{"a":1,"a""#) == nil, "not read here: left to the full decoder")
        #expect(duplicate(String(repeating: "[", count: 70) + String(repeating: "]", count: 70)) == nil)
    }
}
