import Foundation

/// The process's working directory, used as the base of relative base directories.
func currentDirectory() -> String {
    FileManager.default.currentDirectoryPath
}
