/// The release of Monarch this code is.
public enum MonarchRelease {
    /// The version, as `monarch --version` prints it and `status` reports it.
    public static let version = "0.7.0"
}
