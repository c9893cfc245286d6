import Foundation

/// Prints a line at once (unbuffered), so a long benchmark's progress shows as it happens.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
