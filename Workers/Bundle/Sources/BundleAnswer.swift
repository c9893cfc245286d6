/// What the bundle has for one path.
public enum BundleAnswer: Sendable, Equatable {
    /// The file's bytes and media type.
    case file(body: [UInt8], contentType: String)
    /// Nothing the bundle serves (no such file, a directory, a hidden file while those are not
    /// served, or a path whose resolution would leave the folder): a miss, with the reason.
    case notFound(String)
    /// The path names no file at all (an empty, `.` or `..` component, a `/` or NUL inside
    /// one), or names something that is not a regular file: refused, with the reason.
    case refused(String)
    /// The file is larger than the bundle serves (its limit, or the largest body a frame to
    /// the coordinator carries), with the reason naming both sizes.
    case tooLarge(String)
    /// The file is there but could not be read, with the reason.
    case failed(String)
}

/// Why a bundle cannot be opened.
public struct BundleStoreError: Error, Sendable, CustomStringConvertible {
    /// What is wrong with the bundle folder.
    public var message: String

    public var description: String { message }
}
