#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import MonarchLoop

extension SharedBytes {
    /// The bytes of `data`, not copied when there are more than a few: those a `Data` keeps in
    /// a heap block of its own, which stays where it is, unchanged, while the result holds
    /// `data` (a change made through another copy of `data` copies the block first). A few
    /// bytes, which a `Data` may keep within itself, are copied.
    public static func holding(_ data: Data) -> SharedBytes {
        data.withUnsafeBytes { bytes in
            bytes.count < 64 ? SharedBytes(copying: bytes) : SharedBytes(borrowing: bytes, from: data)
        }
    }
}
