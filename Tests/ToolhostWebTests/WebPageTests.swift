/// The page the server carries (``WebPage``) is the one in Sources/ToolhostWeb/Resources, and keeps to the rules
/// that make the CSP hold: nothing inline, nothing from elsewhere, no HTML made from strings.
import Foundation
import Testing
import ToolhostTestSupport
import ToolhostWeb

@Suite("chat page: the page's files")
struct WebPageTests {
  static let resources = TestPackage.root.appendingPathComponent("Sources/ToolhostWeb/Resources")

  @Test(arguments: [("index.html", WebPage.html), ("app.js", WebPage.script), ("app.css", WebPage.style)])
  func theEmbeddedPageIsTheResourcesFolders(name: String, embedded: String) throws {
    let file = try String(contentsOf: Self.resources.appendingPathComponent(name), encoding: .utf8)
    #expect(
      file.trimmingCharacters(in: .newlines) == embedded.trimmingCharacters(in: .newlines),
      "Sources/ToolhostWeb/Resources/\(name) changed: run scripts/embed-page")
  }

  @Test func nothingInlineNothingFromElsewhereNoHTMLFromStrings() {
    for forbidden in ["<script>", "style=", "onclick=", "onload=", "http://", "https://"] {
      #expect(!WebPage.html.contains(forbidden), "index.html holds \(forbidden)")
    }
    for forbidden in [
      "innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "http://", "https://",
    ] {
      #expect(!WebPage.script.contains(forbidden), "app.js holds \(forbidden)")
    }
    for forbidden in ["@import", "url(http", "http://", "https://"] {
      #expect(!WebPage.style.contains(forbidden), "app.css holds \(forbidden)")
    }
  }
}
