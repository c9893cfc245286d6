#if canImport(Glibc)
import Glibc
#endif
import MonarchConfig
import MonarchRouter

/// What parsing a configuration cannot see but running it would meet: route patterns and
/// upstream templates that do not compile, bundle folders that are not there, worker
/// executables that are missing. `monarch check` reports them; `monarch up` refuses to start
/// on any of them.
public enum ConfigurationCheck {
    /// Every reason `configuration` would not run, one sentence each; empty when it would.
    ///
    /// - Parameter executableDirectory: where the worker executables of the pools it starts
    ///   (`count` above 0) must be; nil skips that check.
    public static func problems(in configuration: Configuration, executableDirectory: String?) -> [String] {
        var problems: [String] = []
        do {
            _ = try Router<RouteOptions>(routes: configuration.routes)
        } catch {
            problems.append("\(error)")
        }
        for pool in configuration.workers where pool.count > 0 {
            if case .bundle(let bundle) = pool.settings, !isFolder(bundle.root) {
                problems.append("workers.\(pool.kind).root: the bundle folder \(bundle.root) does not exist")
            }
            if let executableDirectory {
                let executable = WorkerLaunch.executable(of: pool.kind, in: executableDirectory)
                if access(executable, X_OK) != 0 {
                    problems.append("workers.\(pool.kind): its worker executable \(executable) is missing or not executable")
                }
            }
        }
        return problems
    }

    private static func isFolder(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }
}
