import MonarchWire
import Testing

@Suite struct DurationParsingTests {
    @Test(arguments: [
        ("250ms", Duration.milliseconds(250)),
        ("5s", .seconds(5)),
        ("2m", .seconds(120)),
        ("1h", .seconds(3600)),
        ("0s", .zero),
        ("1.5s", .milliseconds(1500)),
        ("0.25h", .seconds(900)),
        ("0.5ms", .microseconds(500)),
        ("0.000000001s", .nanoseconds(1)),
        ("0.0000000001s", .zero),
        ("007s", .seconds(7)),
        (" 5 s ", .seconds(5)),
        ("2562047h", .seconds(2_562_047 * 3600)),
    ])
    func parses(text: String, expected: Duration) {
        #expect(parseDuration(text) == expected)
    }

    @Test(arguments: [
        "5", "0", "1.5", "", " ", "s", "ms", "5x", "5sec", "5min", "5S", "5 m s", "-5s", "+5s", "5.s", ".5s",
        "1.2.3s", "1e3s", "½s", "٥s", "9999999h", "99999999999999999999ms",
    ])
    func rejects(text: String) {
        #expect(parseDuration(text) == nil)
    }
}

@Suite struct ByteSizeParsingTests {
    @Test(arguments: [
        ("4096", 4096),
        ("0", 0),
        ("10B", 10),
        ("512KB", 512 * 1024),
        ("64MB", 64 << 20),
        ("1GB", 1 << 30),
        ("1KiB", 1024),
        ("2MiB", 2 << 20),
        ("1GiB", 1 << 30),
        ("64mb", 64 << 20),
        ("64 MB", 64 << 20),
        (" 16MiB ", 16 << 20),
    ])
    func parses(text: String, expected: Int) {
        #expect(parseByteSize(text) == expected)
    }

    @Test(arguments: [
        "", "MB", "1.5GB", "-1", "+1", "1TB", "1 2", "1KBB", "one", "99999999999999999999", "9999999999GB",
    ])
    func rejects(text: String) {
        #expect(parseByteSize(text) == nil)
    }
}
