#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Identifies one exchange on one connection; replies carry the id of their request.
/// Valid ids are 0 through ``MessageIDLimit`` (the integers JSON peers represent exactly).
public typealias MessageID = UInt64

/// The largest valid ``MessageID``: 2^53 − 1.
public let MessageIDLimit: MessageID = (1 << 53) - 1

extension KeyedDecodingContainer {
    /// Decodes a message id, rejecting values outside 0…``MessageIDLimit``.
    func decodeID(forKey key: Key) throws -> MessageID {
        try decodeInteger(MessageID.self, forKey: key, in: 0...MessageIDLimit)
    }

    /// Decodes an optional message id, rejecting values outside 0…``MessageIDLimit``.
    func decodeIDIfPresent(forKey key: Key) throws -> MessageID? {
        try decodeIntegerIfPresent(MessageID.self, forKey: key, in: 0...MessageIDLimit)
    }

    /// Decodes an integer field that must lie in `range`. A fraction, a negative number for
    /// an unsigned field or a number out of range is reported against the field itself.
    func decodeInteger<T: FixedWidthInteger & Decodable>(
        _ type: T.Type, forKey key: Key, in range: ClosedRange<T> = T.min...T.max
    ) throws -> T {
        let value: T
        do {
            value = try decode(T.self, forKey: key)
        } catch let error as DecodingError {
            throw error
        } catch {
            // Foundation reports a number that does not fit the type (a fraction, a negative
            // number for an unsigned field) with an internal error that names no field.
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self, debugDescription: "expected an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        guard range.contains(value) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self,
                debugDescription: "expected an integer in \(range.lowerBound)...\(range.upperBound), got \(value)")
        }
        // Foundation reads a number with a fraction through a Double, which passes a fraction too
        // small for it (1.0000000000000001) as a whole number: the number as written must be it.
        guard let written = try? decode(Decimal.self, forKey: key), written == Self.decimal(value) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self, debugDescription: "expected an integer, got a number with a fraction")
        }
        return value
    }

    /// `value` as a decimal number, exactly.
    private static func decimal<T: FixedWidthInteger>(_ value: T) -> Decimal {
        value < 0 ? Decimal(Int64(value)) : Decimal(UInt64(value))
    }

    /// Decodes an optional integer field that must lie in `range` (see ``decodeInteger(_:forKey:in:)``).
    func decodeIntegerIfPresent<T: FixedWidthInteger & Decodable>(
        _ type: T.Type, forKey key: Key, in range: ClosedRange<T> = T.min...T.max
    ) throws -> T? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        return try decodeInteger(type, forKey: key, in: range)
    }

    /// Decodes an optional string and checks it against `isValid`, naming `expected` in the error.
    func decodeStringIfPresent(
        forKey key: Key, expected: String, isValid: (String) -> Bool
    ) throws -> String? {
        guard let value = try decodeIfPresent(String.self, forKey: key) else { return nil }
        guard isValid(value) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self, debugDescription: "expected \(expected), got \"\(value)\"")
        }
        return value
    }
}
