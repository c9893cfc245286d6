// libFuzzer entry point for the frame decoder and the message codec.
import Foundation
// Built by scripts/fuzz together with Sources/MonarchWire as one module (no SwiftPM target),
// so a plain `swift build` never needs the fuzzer runtime.

/// Feeds the input through the frame decoder in chunks whose sizes come from the input
/// itself, decodes every frame as a message, and checks three properties; a violation traps:
/// - the decoder gives the same frames and the same error whether fed whole or in chunks;
/// - every message that decodes re-encodes to a payload that decodes to the same message, and
///   on a connection with raw bodies (protocol section 2.1) also in the other form;
/// - the fast path for the hot messages agrees with the full decoder whenever it reads one;
/// - nothing crashes, whatever the bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func wireFuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let codec = MessageCodec(maxFrameBytes: 1 << 16)
    let rawCodec = MessageCodec(maxFrameBytes: 1 << 16, rawBodies: true)

    let whole = decodeFrames(bytes, chunkSizes: [bytes.count])
    let chunkSizes = bytes.prefix(8).map { Int($0 % 17) + 1 }
    let chunked = decodeFrames(bytes, chunkSizes: chunkSizes)
    precondition(whole == chunked, "chunked feeding changed the outcome")

    for payload in whole.frames + [bytes] {
        if String(validating: payload, as: UTF8.self) != nil,
            let fast = payload.withUnsafeBytes({ HotMessageCodec.decode($0) })
        {
            let full = try? JSONDecoder().decode(WireMessage.self, from: Data(payload))
            precondition(full == fast, "the fast path read a message the full decoder reads otherwise (or refuses)")
        }
        if let message = try? rawCodec.decode(payload) {
            // Whatever form it came in, it goes out in both and comes back the same.
            for (encoder, decoder) in [(rawCodec, rawCodec), (codec, codec), (codec, rawCodec)] {
                guard let reparsed = try? decoder.decode(encoder.encode(message)) else {
                    preconditionFailure("a decoded message re-encoded to an undecodable payload")
                }
                precondition(reparsed == message, "round trip changed the message")
            }
        }
        if payload.first != 0x01 {
            // Without raw bodies a payload decodes as it does with them (only 0x01 payloads differ).
            let plain = try? codec.decode(payload)
            precondition(plain == (try? rawCodec.decode(payload)), "raw bodies changed how a JSON payload decodes")
        }
    }
    return 0
}

/// What decoding a stream produced: its frames, and the error that stopped it, if any.
struct FrameOutcome: Equatable {
    var frames: [[UInt8]] = []
    var error: FrameError?
}

/// Decodes `bytes` fed in chunks of the given sizes (cycled), then declares the end.
func decodeFrames(_ bytes: [UInt8], chunkSizes: [Int]) -> FrameOutcome {
    var decoder = FrameDecoder(maxFrameBytes: 1 << 16)
    var outcome = FrameOutcome()
    var offset = 0
    var turn = 0
    let sizes = chunkSizes.isEmpty ? [1] : chunkSizes
    do {
        while offset < bytes.count {
            let size = max(1, sizes[turn % sizes.count])
            turn += 1
            let end = min(bytes.count, offset + size)
            decoder.append(contentsOf: bytes[offset..<end])
            offset = end
            while let frame = try decoder.nextFrame() { outcome.frames.append(frame) }
        }
        try decoder.finish()
    } catch {
        outcome.error = error
    }
    return outcome
}
