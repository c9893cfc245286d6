import MonarchBundle
import Testing

@Suite struct ContentTypeTests {
    @Test(arguments: [
        ("index.html", "text/html; charset=utf-8"),
        ("page.htm", "text/html; charset=utf-8"),
        ("data.json", "application/json; charset=utf-8"),
        ("logo.png", "image/png"),
        ("photo.jpeg", "image/jpeg"),
        ("style.css", "text/css; charset=utf-8"),
        ("app.js", "text/javascript; charset=utf-8"),
        ("notes.txt", "text/plain; charset=utf-8"),
        ("icon.svg", "image/svg+xml; charset=utf-8"),
        ("feed.xml", "application/xml; charset=utf-8"),
        ("config.yml", "application/yaml; charset=utf-8"),
        ("module.wasm", "application/wasm"),
        ("archive.tar.gz", "application/gzip"),
    ])
    func knownExtensions(name: String, type: String) {
        #expect(ContentType.forFileName(name) == type)
    }

    @Test func theExtensionIsCaseInsensitive() {
        #expect(ContentType.forFileName("LOGO.PNG") == "image/png")
        #expect(ContentType.forFileName("Index.Html") == "text/html; charset=utf-8")
        #expect(ContentType.forFileName("DATA.JSON") == "application/json; charset=utf-8")
    }

    @Test(arguments: ["file.unknownext", "README", ".htaccess", "trailing.", "a.b/c", ""])
    func unknownOrMissingExtensionsAreOctetStream(name: String) {
        #expect(ContentType.forFileName(name) == "application/octet-stream")
    }

    @Test func onlyTextTypesCarryACharset() {
        for name in ["a.png", "a.gif", "a.pdf", "a.zip", "a.woff2", "a.mp4", "a.bin"] {
            #expect(!ContentType.forFileName(name).contains("charset"), "\(name)")
        }
        for name in ["a.html", "a.css", "a.md", "a.csv", "a.json", "a.svg"] {
            #expect(ContentType.forFileName(name).hasSuffix("; charset=utf-8"), "\(name)")
        }
    }

    @Test func aNestedPathUsesTheLastComponentsExtension() {
        #expect(ContentType.forFileName("assets/v1.2/logo.png") == "image/png")
        #expect(ContentType.forFileName("docs/index.html") == "text/html; charset=utf-8")
    }
}
