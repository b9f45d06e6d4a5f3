import Foundation
import Testing
import ToolhostCore
import ToolhostHistory
import ToolhostJSON
import ToolhostSession
import ToolhostTestSupport

/// The HTML export, rendered by a real browser: headless Chromium from Debian's packages.
@Suite(
  "chat as HTML",
  .enabled(
    if: Browser.chromium != nil || ProcessInfo.processInfo.environment["CI"] != nil,
    "needs chromium (scripts/install-deps --test)"))
struct ChatHTMLTests {
  let folder = TemporaryFolder(prefix: "toolhost-html")

  /// A chat with hostile text, two parallel calls (one failed) and a second round.
  func hostileChat() throws -> StoredChat {
    let history = try ChatHistory.open(at: folder.file("data/history.sqlite"))
    let recorder = try ChatRecorder(history: history, chat: .init(command: "chat", model: "local"))
    let oslo = Transcript.ToolCall(id: "a", toolName: "getWeather", arguments: ["city": "Oslo"])
    let bergen = Transcript.ToolCall(id: "b", toolName: "getWeather", arguments: ["city": "<b>Bergen</b>"])
    let transcript = Transcript(entries: [
      .prompt(.init(text: "Oslo or Bergen? <script>document.title='owned'</script>")),
      .toolCalls(.init(calls: [oslo, bergen])),
      // U+0600 joins the "<" after it into one Character; the escaping must still see the "<".
      .toolOutput(
        .init(callID: "a", toolName: "getWeather", text: "{\"high\": 4} \u{0600}<i>joined</i> \u{1B}]52;c;x\u{07}")),
      .toolOutput(.init(callID: "b", toolName: "getWeather", text: "<img src=x onerror=alert(1)>", isError: true)),
      .response(.init(text: "Oslo: 4 °C.\nBergen: unknown. \u{202E}txt.exe\u{2066}")),
    ])
    try recorder.record(transcript)
    return try history.chat(recorder.chatID)
  }

  @Test func theBrowserShowsTheChatAndItsCallGraphAndRunsNothingFromIt() throws {
    let chromium = try #require(Browser.chromium)
    let page = folder.write("chat.html", ChatHTML.page(try hostileChat()))
    let dom = try Browser.run(chromium, ["--dump-dom", "file://" + page], profile: folder.file("profile"))
    #expect(dom.status == 0, "\(dom.stderrText)")
    let html = dom.stdoutText
    // The page's own structure, as the browser parsed it.
    #expect(html.contains(#"<article class="turn" id="turn-1">"#), "\(html)")
    #expect(html.contains(#"<div class="round-title">round 1 · 2 calls in parallel</div>"#), "\(html)")
    #expect(html.contains(#"<li class="call ok" data-tool="getWeather">"#), "\(html)")
    #expect(html.contains(#"<li class="call error" data-tool="getWeather">"#), "\(html)")
    #expect(html.contains("<details>") && html.contains("<summary><code>getWeather</code>"), "\(html)")
    // Untrusted text is text: no element came from it, and its script did not run.
    #expect(html.contains("&lt;script&gt;document.title='owned'&lt;/script&gt;"), "\(html)")
    #expect(html.contains("&lt;img src=x onerror=alert(1)&gt;"), "\(html)")
    #expect(!html.contains("<script") && !html.contains("<img") && !html.contains("<b>Bergen"), "\(html)")
    #expect(html.contains("\u{0600}&lt;i&gt;joined") && !html.contains("<i>"), "\(html)")
    // Control characters and bidi overrides are shown as a terminal shows them, never obeyed.
    #expect(html.contains("^[]52;c;x^G") && !html.contains("\u{1B}"), "\(html)")
    #expect(html.contains("&lt;U+202E&gt;txt.exe&lt;U+2066&gt;"), "\(html)")
    #expect(!html.contains("\u{202E}") && !html.contains("\u{2066}"), "\(html)")
    #expect(html.contains("<title>chat 1: Oslo or Bergen?"), "\(html)")

    let shot = folder.file("chat.png")
    let screenshot = try Browser.run(
      chromium, ["--screenshot=" + shot, "--window-size=900,700", "file://" + page], profile: folder.file("profile"))
    #expect(screenshot.status == 0, "\(screenshot.stderrText)")
    let png = try #require(FileManager.default.contents(atPath: shot))
    #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
    // IHDR: width and height, big-endian, at bytes 16 and 20.
    func be32(_ at: Int) -> Int { png[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
    #expect(be32(16) == 900 && be32(20) == 700)
    // Not a blank page: some of it is drawn in something other than the background.
    let inked = try Browser.inkedFraction(shot)
    #expect(inked > 0.01 && inked < 0.5, "\(inked)")
    #expect(ProcessProbe.processes { $0.contains(folder.path) }.isEmpty)
  }
}

/// Headless Chromium for the tests.
enum Browser {
  static let chromium = TestPackage.which("chromium") ?? TestPackage.which("chromium-browser")

  /// Runs headless Chromium with a profile of the test's own (no sandbox: the tests may run as root).
  static func run(_ chromium: String, _ arguments: [String], profile: String) throws -> Subprocess.Output {
    try Subprocess.run(
      executable: URL(fileURLWithPath: chromium),
      arguments: [
        "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=" + profile,
        "--hide-scrollbars",
      ] + arguments,
      environment: Subprocess.cleanEnvironment(home: profile), timeout: 90)
  }

  /// The fraction of a PNG's pixels that are not the page's white background, read with Python's zlib.
  static func inkedFraction(_ png: String) throws -> Double {
    let script = #"""
      import struct, sys, zlib
      data = open(sys.argv[1], "rb").read()
      pos, idat, w, h, ctype = 8, b"", 0, 0, 0
      while pos < len(data):
          n, kind = struct.unpack(">I4s", data[pos:pos + 8])
          body = data[pos + 8:pos + 8 + n]
          if kind == b"IHDR":
              w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
          elif kind == b"IDAT":
              idat += body
          pos += 12 + n
      bpp = {2: 3, 6: 4}[ctype]
      raw = zlib.decompress(idat)
      stride = w * bpp
      prev = bytearray(stride)
      inked = 0
      for y in range(h):
          f = raw[y * (stride + 1)]
          line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
          for x in range(stride):
              a = line[x - bpp] if x >= bpp else 0
              b = prev[x]
              c = prev[x - bpp] if x >= bpp else 0
              if f == 1: line[x] = (line[x] + a) & 255
              elif f == 2: line[x] = (line[x] + b) & 255
              elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
              elif f == 4:
                  p = a + b - c
                  pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                  line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
          for x in range(0, stride, bpp):
              if line[x:x + 3] != b"\xff\xff\xff":
                  inked += 1
          prev = line
      print(inked / (w * h))
      """#
    let python = TestPackage.which("python3") ?? "/usr/bin/python3"
    let out = try Subprocess.run(
      executable: URL(fileURLWithPath: python), arguments: ["-c", script, png], timeout: 120)
    guard out.status == 0, let value = Double(out.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)) else {
      throw BrowserError(message: "reading \(png): \(out.stderrText)")
    }
    return value
  }

  struct BrowserError: Error {
    var message: String
  }
}
