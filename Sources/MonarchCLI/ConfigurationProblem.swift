/// A configuration that cannot be used: it does not parse, names what does not exist, or
/// would not run here. Every `monarch` command reports it alone on standard error (no usage
/// text) and exits ``exitStatus``.
struct ConfigurationProblem: Error, CustomStringConvertible {
    /// `EX_CONFIG` from sysexits.h: the configuration is wrong, not the command line.
    static let exitStatus: Int32 = 78

    /// What is wrong, naming the file and line where known.
    let description: String

    /// A problem described by `description`.
    init(_ description: String) { self.description = description }
}
