import CLibUV
import MonarchFraming

/// How a stream's life ended, as reported to ``StreamConnection/onEnd``.
public enum StreamEnd: Sendable, Equatable {
    /// The peer closed its side in order; what was written before is still delivered.
    case endOfFile
    /// This side closed the stream.
    case closedLocally
    /// Reading or writing failed.
    case failed(UVError)
}

/// A connected byte stream over TCP or a Unix-domain socket, on one event loop.
///
/// Reading delivers bytes as they arrive to ``onRead``. The end goes to ``onEnd`` once: at
/// the peer's end of file the stream then closes after its queued writes; after an error it
/// closes at once. Writing never blocks: bytes
/// written during one pass of the loop are gathered and handed to the kernel together just
/// before the loop next waits; what the kernel does not take is queued (partial writes resume
/// where they stopped). ``isWritable`` turns false while more than ``writeHighWatermark``
/// bytes wait, true again at ``writeLowWatermark`` — ``onWritabilityChanged`` reports both.
/// Loop thread only, except ``close()``.
public final class StreamConnection: LoopHandle, @unchecked Sendable {
    /// Bytes that arrived; valid only during the call. Loop thread.
    public var onRead: (@Sendable (UnsafeRawBufferPointer) -> Void)?
    /// Where the next read may land instead of the loop's shared read buffer (the rest of a
    /// large frame under way, say): asked before each read; room it gives receives the bytes,
    /// which then reach ``onRead`` where they lie in it. Nil, or no room: the shared buffer.
    public var readRoom: (@Sendable () -> UnsafeMutableRawBufferPointer?)?
    /// The stream ended, and how. Called once. Loop thread.
    public var onEnd: (@Sendable (StreamEnd) -> Void)?
    /// Writability changed (see ``isWritable``). Loop thread.
    public var onWritabilityChanged: (@Sendable (Bool) -> Void)?

    /// Queued bytes above which ``isWritable`` turns false.
    public var writeHighWatermark = 1 << 20
    /// Queued bytes at or below which ``isWritable`` turns true again.
    public var writeLowWatermark = 256 << 10
    /// Whether writers should go on writing (queued bytes are below the high watermark).
    public private(set) var isWritable = true
    /// Bytes handed to ``write(_:)`` that the kernel has not taken yet.
    public private(set) var queuedWriteBytes = 0
    /// Whether reading is on.
    public private(set) var isReading = false
    /// Whether the stream stays open for writing after the peer's end of file (a half-close),
    /// until its owner closes it; by default it closes once its queued writes are done.
    public var staysOpenAfterEndOfFile = false

    /// Bytes written in this pass of the loop, not yet handed to the kernel.
    private var gathered: [UInt8] = []
    /// The bytes being handed to the kernel by ``flush()``; kept apart from ``gathered`` so
    /// that writes made from callbacks during a flush are never lost.
    private var flushing: [UInt8] = []
    /// Bodies written with ``write(_:then:)`` in this pass, each to go after the bytes of
    /// ``gathered`` before its offset; handed over uncopied by ``flush()``.
    private var heldBodies: [HeldBody] = []
    /// The bodies being handed to the kernel by ``flush()`` (as ``flushing`` for the bytes).
    private var flushingBodies: [HeldBody] = []
    /// Whether the loop will flush ``gathered`` before it next waits.
    private var flushScheduled = false
    /// Queued write requests; the stream closes after them when ``closeAfterWrites()`` asked.
    private var pendingWrites = 0
    private var closeWhenFlushed = false
    /// Whether ``onEnd`` has been called.
    private var reportedEnd = false
    /// Whether reading has ended (end of file or error).
    private var readEnded = false
    /// Whether a write failed; nothing more is written then.
    private var writeFailed = false

    /// The transport under the stream.
    public enum Transport: Sendable { case tcp, unix }
    /// The transport under the stream.
    public let transport: Transport

    init(loop: EventLoop, transport: Transport) throws(UVError) {
        self.transport = transport
        switch transport {
        case .tcp:
            try super.init(loop: loop, size: MemoryLayout<uv_tcp_t>.size) {
                uv_tcp_init(loop.uvLoop, $0.assumingMemoryBound(to: uv_tcp_t.self))
            }
        case .unix:
            try super.init(loop: loop, size: MemoryLayout<uv_pipe_t>.size) {
                uv_pipe_init(loop.uvLoop, $0.assumingMemoryBound(to: uv_pipe_t.self), 0)
            }
        }
    }

    /// The handle as a libuv stream.
    var stream: UnsafeMutablePointer<uv_stream_t> { pointer(as: uv_stream_t.self) }

    /// Turns off Nagle's algorithm on TCP streams, so small frames leave at once.
    func setNoDelay() {
        if transport == .tcp { uv_tcp_nodelay(pointer(as: uv_tcp_t.self), 1) }
    }

    // MARK: Reading

    /// Starts delivering bytes to ``onRead``. Idempotent.
    public func startReading() {
        loop.preconditionInEventLoop()
        guard !isReading, !isClosing, !readEnded else { return }
        let result = uv_read_start(stream, { handle, _, buf in
            guard let connection = LoopHandle.owner(of: UnsafeMutableRawPointer(handle), as: StreamConnection.self)
            else { return }
            var buffer = connection.loop.readBuffer
            if let room = connection.readRoom?(), !room.isEmpty { buffer = room }
            buf!.pointee = uv_buf_init(
                buffer.baseAddress!.assumingMemoryBound(to: CChar.self), UInt32(clamping: buffer.count))
        }, { stream, count, buf in
            guard let connection = LoopHandle.owner(of: UnsafeMutableRawPointer(stream), as: StreamConnection.self)
            else { return }
            connection.didRead(count, at: buf?.pointee.base)
        })
        if result < 0 {
            finish(.failed(UVError(code: result, operation: "start reading")))
        } else {
            isReading = true
        }
    }

    /// Stops delivering bytes until ``startReading()``; the kernel buffers, then the peer waits.
    public func stopReading() {
        loop.preconditionInEventLoop()
        guard isReading, !isClosing else { return }
        uv_read_stop(stream)
        isReading = false
    }

    /// Delivers `count` bytes read at `base` (the buffer the read was given), or ends reading.
    private func didRead(_ count: Int, at base: UnsafeMutablePointer<CChar>?) {
        if count > 0, let base {
            onRead?(UnsafeRawBufferPointer(start: base, count: count))
        } else if count < 0 {
            readEnded = true
            isReading = false
            let code = Int32(count)
            finish(code == UVCode.eof ? .endOfFile : .failed(UVError(code: code, operation: "read")))
        }
        // count == 0 is EAGAIN: nothing to do.
    }

    /// Reports the end once; then closes at once on an error, and at end of file after the
    /// queued writes (unless ``staysOpenAfterEndOfFile``).
    private func finish(_ end: StreamEnd) {
        if !reportedEnd {
            reportedEnd = true
            onEnd?(end)
        }
        if end != .endOfFile { close() } else if !staysOpenAfterEndOfFile { closeAfterWrites() }
    }

    // MARK: Writing

    /// Writes `bytes` after everything written before. Never blocks: the bytes are copied and
    /// leave, with the others written in this pass of the loop, before the loop next waits.
    /// Writing to a closing stream is ignored. A write error ends the stream (``onEnd`` gets it).
    public func write(_ bytes: UnsafeRawBufferPointer) {
        loop.preconditionInEventLoop()
        guard !isClosing, !writeFailed, bytes.count > 0 else { return }
        gathered.append(contentsOf: bytes)
        queued(bytes.count)
    }

    /// Writes `bytes` after everything written before (see ``write(_:)-(UnsafeRawBufferPointer)``).
    public func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { write($0) }
    }

    /// Writes `bytes` after everything written before, taking the array over when nothing else
    /// waits to be written (no copy); `bytes` is left empty, with whatever capacity the stream
    /// hands back.
    public func write(taking bytes: inout [UInt8]) {
        loop.preconditionInEventLoop()
        guard gathered.isEmpty, !isClosing, !writeFailed, !bytes.isEmpty else {
            write(bytes)
            bytes.removeAllKeepingSmallCapacity()
            return
        }
        swap(&gathered, &bytes)
        bytes.removeAllKeepingSmallCapacity()
        queued(gathered.count)
    }

    /// Writes `bytes`, then `body`, after everything written before, without copying `body`:
    /// they leave with the others written in this pass of the loop, in one call to the kernel
    /// where it takes them all, and what it does not take of `body` waits in a queued write
    /// holding `body` (see ``write(_:)-(UnsafeRawBufferPointer)``). `body` counts in
    /// ``queuedWriteBytes`` from now until the kernel has taken it.
    public func write(_ bytes: [UInt8], then body: SharedBytes) {
        write(bytes)
        guard !isClosing, !writeFailed, body.count > 0 else { return }
        heldBodies.append(HeldBody(offset: gathered.count, body: body))
        queued(body.count)
        // The kernel takes a bounded number of buffers in one call.
        if heldBodies.count >= Self.heldBodiesPerFlush { flush() }
    }

    /// Counts `count` more bytes written in this pass: the loop flushes them before it next
    /// waits, and writers are told to hold back once the queue is over the high watermark.
    private func queued(_ count: Int) {
        queuedWriteBytes += count
        if !flushScheduled {
            flushScheduled = true
            loop.scheduleFlush(self)
        }
        if isWritable && queuedWriteBytes > writeHighWatermark {
            isWritable = false
            onWritabilityChanged?(false)
        }
    }

    /// The most bodies of ``write(_:then:)`` gathered for one flush.
    static let heldBodiesPerFlush = 64

    /// The storage the stream's write buffers hold, in bytes (for tests of what an idle
    /// connection keeps).
    package var writeBufferCapacity: Int { gathered.capacity + flushing.capacity }

    /// Hands what was written in this pass to the kernel: directly when nothing is queued
    /// before it, and whatever the kernel does not take (or all, behind earlier writes) as
    /// queued writes — copies of the bytes, and the bodies themselves.
    func flush() {
        flushScheduled = false
        guard !gathered.isEmpty || !heldBodies.isEmpty else { return }
        swap(&gathered, &flushing)
        swap(&heldBodies, &flushingBodies)
        queuedWriteBytes -= flushing.count + flushingBodies.reduce(0) { $0 + $1.body.count }
        var failure: UVError?
        if !isClosing && !writeFailed {
            failure = flushing.withUnsafeBytes { bytes in hand(bytes, with: flushingBodies) }
        }
        // Emptied before any callback runs: writes made from callbacks go to `gathered`.
        flushing.removeAllKeepingSmallCapacity()
        flushingBodies.removeAll(keepingCapacity: flushingBodies.count <= Self.heldBodiesPerFlush)
        if let failure {
            writeFailed = true
            finish(.failed(failure))
            return
        }
        updateWritability()
    }

    /// Hands `bytes`, with `bodies` between them at their offsets, to the kernel: as much as it
    /// takes now when nothing is queued, the rest as queued writes in order.
    private func hand(_ bytes: UnsafeRawBufferPointer, with bodies: [HeldBody]) -> UVError? {
        // The pieces in order: the bytes before each body, the body, and the bytes after the last.
        let count = 2 * bodies.count + 1
        return withUnsafeTemporaryAllocation(of: UnsafeRawBufferPointer.self, capacity: count) { pieces in
            var start = 0
            for (index, held) in bodies.enumerated() {
                pieces[2 * index] = UnsafeRawBufferPointer(rebasing: bytes[start..<held.offset])
                pieces[2 * index + 1] = held.body.bytes
                start = held.offset
            }
            pieces[count - 1] = UnsafeRawBufferPointer(rebasing: bytes[start...])
            var taken = 0
            if pendingWrites == 0 {
                let written = withUnsafeTemporaryAllocation(of: uv_buf_t.self, capacity: count) { buffers in
                    for index in 0..<count {
                        buffers[index] = uv_buf_init(
                            UnsafeMutablePointer(mutating: pieces[index].baseAddress?.assumingMemoryBound(to: CChar.self)),
                            UInt32(pieces[index].count))
                    }
                    return uv_try_write(stream, buffers.baseAddress!, UInt32(count))
                }
                if written > 0 {
                    taken = Int(written)
                } else if written != UVCode.eagain {
                    return UVError(code: written, operation: "write")
                }
            }
            for index in 0..<count {
                let piece = pieces[index]
                guard taken < piece.count else {
                    taken -= piece.count
                    continue
                }
                let failure = index % 2 == 1
                    ? queueWrite(bodies[index / 2].body, from: taken)
                    : queueWrite(UnsafeRawBufferPointer(rebasing: piece[taken...]))
                if let failure { return failure }
                taken = 0
            }
            return nil
        }
    }

    /// Copies `bytes` into one allocation with its write request and hands it to libuv.
    private func queueWrite(_ bytes: UnsafeRawBufferPointer) -> UVError? {
        let request = WriteRequest.make(copying: bytes)
        return submit(request.pointer, writing: request.bytes, count: bytes.count)
    }

    /// Hands `body` from `offset` on to libuv, held (not copied) until it is written.
    private func queueWrite(_ body: SharedBytes, from offset: Int) -> UVError? {
        let count = body.count - offset
        return submit(
            WriteRequest.make(holding: body, count: count),
            writing: UnsafeMutableRawPointer(mutating: body.bytes.baseAddress! + offset), count: count)
    }

    /// Hands libuv `request` (a ``WriteRequest``) writing the `count` bytes at `bytes`; the
    /// write callback frees it, and so does a refusal.
    private func submit(_ request: UnsafeMutablePointer<uv_write_t>, writing bytes: UnsafeMutableRawPointer, count: Int) -> UVError? {
        var buffer = uv_buf_init(bytes.assumingMemoryBound(to: CChar.self), UInt32(count))
        let result = uv_write(request, stream, &buffer, 1) { request, status in
            guard let request else { return }
            let count = WriteRequest.byteCount(of: request)
            let stream = UnsafeMutableRawPointer(request.pointee.handle)
            WriteRequest.free(request)
            LoopHandle.owner(of: stream, as: StreamConnection.self)?.didWrite(count, status: status)
        }
        if result < 0 {
            WriteRequest.free(request)
            return UVError(code: result, operation: "write")
        }
        pendingWrites += 1
        queuedWriteBytes += count
        return nil
    }

    /// Reports a crossing of either watermark.
    private func updateWritability() {
        if isWritable && queuedWriteBytes > writeHighWatermark {
            isWritable = false
            onWritabilityChanged?(false)
        } else if !isWritable && queuedWriteBytes <= writeLowWatermark && !isClosing {
            isWritable = true
            onWritabilityChanged?(true)
        }
    }

    private func didWrite(_ count: Int, status: Int32) {
        pendingWrites -= 1
        queuedWriteBytes -= count
        if status < 0 && status != UVCode.ecanceled && !writeFailed {
            writeFailed = true
            finish(.failed(UVError(code: status, operation: "write")))
        }
        updateWritability()
        if closeWhenFlushed && pendingWrites == 0 { close() }
    }

    /// Closes the stream once every queued write has reached the kernel; reading stops now.
    public func closeAfterWrites() {
        loop.preconditionInEventLoop()
        guard !isClosing else { return }
        stopReading()
        flush()
        guard !isClosing else { return }
        if pendingWrites == 0 { close() } else { closeWhenFlushed = true }
    }

    override func willClose() {
        if isReading {
            uv_read_stop(stream)
            isReading = false
        }
    }

    override func didClose() {
        if !reportedEnd {
            reportedEnd = true
            onEnd?(.closedLocally)
        }
        onRead = nil
        readRoom = nil
        onEnd = nil
        onWritabilityChanged = nil
        super.didClose()
    }
}

/// A body written with ``StreamConnection/write(_:then:)``: it goes after the gathered bytes
/// before `offset`.
struct HeldBody {
    let offset: Int
    let body: SharedBytes
}

/// A `uv_write_t` and the bytes it writes, in one allocation freed by the write callback.
struct WriteRequest {
    /// The request, as libuv wants it.
    let pointer: UnsafeMutablePointer<uv_write_t>
    /// Where the bytes are.
    let bytes: UnsafeMutableRawPointer

    private static let headerSize = (MemoryLayout<uv_write_t>.size + MemoryLayout<Int>.size + 15) & ~15

    /// Allocates a request holding a copy of `source`.
    static func make(copying source: UnsafeRawBufferPointer) -> WriteRequest {
        let memory = allocate(writing: source.count, room: source.count)
        let bytes = memory + headerSize
        bytes.copyMemory(from: source.baseAddress!, byteCount: source.count)
        return WriteRequest(pointer: memory.bindMemory(to: uv_write_t.self, capacity: 1), bytes: bytes)
    }

    /// Allocates a request writing `count` bytes of `body`, which it holds until freed.
    static func make(holding body: SharedBytes, count: Int) -> UnsafeMutablePointer<uv_write_t> {
        let request = allocate(writing: count, room: 0).bindMemory(to: uv_write_t.self, capacity: 1)
        request.pointee.data = Unmanaged.passRetained(body).toOpaque()
        return request
    }

    /// A zeroed request that records it writes `count` bytes, with `room` bytes after its header.
    private static func allocate(writing count: Int, room: Int) -> UnsafeMutableRawPointer {
        let memory = UnsafeMutableRawPointer.allocate(byteCount: headerSize + room, alignment: 16)
        memory.initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<uv_write_t>.size)
        memory.storeBytes(of: count, toByteOffset: MemoryLayout<uv_write_t>.size, as: Int.self)
        return memory
    }

    /// How many bytes the request writes.
    static func byteCount(of request: UnsafeMutablePointer<uv_write_t>) -> Int {
        UnsafeMutableRawPointer(request).load(fromByteOffset: MemoryLayout<uv_write_t>.size, as: Int.self)
    }

    /// Frees a request made by ``make(copying:)`` or ``make(holding:count:)`` (letting go of
    /// the body it holds).
    static func free(_ request: UnsafeMutablePointer<uv_write_t>) {
        if let held = request.pointee.data { Unmanaged<SharedBytes>.fromOpaque(held).release() }
        UnsafeMutableRawPointer(request).deallocate()
    }
}
