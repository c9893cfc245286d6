/// Reads a ``WireObject`` straight from a frame's bytes, for the hot codec: notes where the value
/// of each member of a JSON object starts (on the stack: no allocation), then gives each field
/// the object's list asks for to its kind (``FieldKind/read(_:)``).
///
/// It reads with certainty or not at all: an object it does not read (a syntax error, a name
/// with escapes or given twice, more than ``capacity`` members) or a field it does not read
/// gives nil, and the full decoder decides.
struct ObjectReader: FieldVisitor {
    /// Why a visit stopped: a field is missing, or holds something not read here.
    struct Unreadable: Error {}

    typealias Failure = Unreadable

    /// One member: its name's bytes, and where its value starts.
    private typealias Member = (name: UnsafeRawBufferPointer, value: Int)

    /// The most members an object read here has; a wider one is left to the full decoder.
    static let capacity = 32

    private let bytes: UnsafeRawBufferPointer
    private let storage: UnsafeMutableBufferPointer<Member>
    private var count = 0

    private init(bytes: UnsafeRawBufferPointer, storage: UnsafeMutableBufferPointer<Member>) {
        self.bytes = bytes
        self.storage = storage
    }

    /// Reads the members of the object at `cursor`, moving the cursor past it, and gives the
    /// reader and the cursor to `body`; nil, without calling `body`, when the object is not one
    /// read here.
    static func reading<Result>(
        _ cursor: inout JSONCursor, _ body: (inout ObjectReader, inout JSONCursor) -> Result?
    ) -> Result? {
        withUnsafeTemporaryAllocation(of: Member.self, capacity: capacity) { storage in
            var reader = ObjectReader(bytes: cursor.bytes, storage: storage)
            guard reader.noteMembers(&cursor) else { return nil }
            return body(&reader, &cursor)
        }
    }

    /// Notes each member of the object at `cursor`; false when it is not an object read here.
    private mutating func noteMembers(_ cursor: inout JSONCursor) -> Bool {
        guard cursor.consume(UInt8(ascii: "{")) else { return false }
        if cursor.consume(UInt8(ascii: "}")) { return true }
        repeat {
            guard let name = cursor.plainKey(), cursor.consume(UInt8(ascii: ":")) else { return false }
            cursor.skipSpace()
            let start = cursor.index
            guard cursor.skipValue() else { return false }
            // A name given twice is left to the full decoder, as is a very wide object.
            guard count < storage.count, !storage[..<count].contains(where: { $0.name.elementsEqual(name) }) else {
                return false
            }
            storage.initializeElement(at: count, to: (name, start))
            count += 1
        } while cursor.consume(UInt8(ascii: ","))
        return cursor.consume(UInt8(ascii: "}"))
    }

    /// A cursor at the value of member `name`, or nil when the object has no such member.
    /// (Inlined: each field's lookup then compares with a constant name.)
    @inline(__always)
    func value(_ name: StaticString) -> JSONCursor? {
        name.withUTF8Buffer { expected in
            for member in storage[..<count] where member.name.count == expected.count {
                if member.name.elementsEqual(UnsafeRawBufferPointer(expected)) { return JSONCursor(bytes, at: member.value) }
            }
            return nil
        }
    }

    /// The object as a `T`, or nil when a field is missing or not read here.
    mutating func read<T: WireObject>(_ type: T.Type) -> T? {
        var value = T.placeholder
        do {
            try T.fields(&self, &value)
        } catch {
            return nil
        }
        return value
    }

    @inline(__always)
    mutating func required<Kind: FieldKind>(
        _ name: StaticString, _ value: inout Kind.Value, _ kind: Kind.Type
    ) throws(Unreadable) {
        guard var cursor = self.value(name), let read = Kind.read(&cursor) else { throw Unreadable() }
        value = read
    }

    @inline(__always)
    mutating func optional<Kind: FieldKind>(
        _ name: StaticString, _ value: inout Kind.Value?, _ kind: Kind.Type
    ) throws(Unreadable) {
        guard var cursor = self.value(name), !cursor.consumeNull() else { return }
        guard let read = Kind.read(&cursor) else { throw Unreadable() }
        value = read
    }
}
