import Testing
import ToolhostCommandLine

/// The terminal line editor's keys, without a terminal.
@Suite("line editor")
struct LineEditorTests {
  /// Feeds `input` and returns the effects that were not `.none`.
  func type(_ input: String, into editor: inout LineEditor) -> [LineEditor.Effect] {
    input.utf8.map { editor.feed($0) }.filter { $0 != .none }
  }

  func editor(history: [String] = []) -> LineEditor {
    LineEditor(prompt: "> ", history: history) { word in
      ["@getWeather", "@getTime", "@todoList", "/clear"].filter { $0.hasPrefix(word) }
    }
  }

  @Test func typingAndEnter() {
    var e = editor()
    let effects = type("hi\r", into: &e)
    #expect(effects == [.redraw("\r> h\u{1B}[K"), .redraw("\r> hi\u{1B}[K"), .line("hi")])
  }

  @Test func cursorMovesAndEdits() {
    var e = editor()
    _ = type("helo", into: &e)
    // Left twice, insert "l": "hello" with the cursor before "lo".
    _ = type("\u{1B}[D\u{1B}[Dl", into: &e)
    #expect(String(e.text) == "hello")
    #expect(e.cursor == 3)
    #expect(e.feed(0x7F) == .redraw("\r> helo\u{1B}[K\u{1B}[2D"))
    _ = type("\u{01}X\u{05}!", into: &e)  // Ctrl-A, X, Ctrl-E, !
    #expect(String(e.text) == "Xhelo!")
    _ = type("\u{1B}[H\u{1B}[3~", into: &e)  // Home, Delete
    #expect(String(e.text) == "helo!")
    _ = type("\u{05} world\u{17}", into: &e)  // Ctrl-E, then Ctrl-W cuts the word back
    #expect(String(e.text) == "helo! ")
    _ = type("\u{01}\u{0B}", into: &e)  // Ctrl-A, Ctrl-K cut to the end
    #expect(e.text.isEmpty)
    _ = type("abc\u{15}", into: &e)  // Ctrl-U
    #expect(e.text.isEmpty)
  }

  @Test func utf8ArrivesByteByByte() {
    var e = editor()
    #expect(type("é€😀\r", into: &e).last == .line("é€😀"))
  }

  @Test func controlBytesAndUnknownSequencesAreDropped() {
    var e = editor()
    #expect(type("\u{07}\u{1B}[99;5Z\u{1B}xa\r", into: &e).last == .line("a"))
  }

  @Test func brokenUTF8AndControlCharactersNeverEnterTheLine() {
    var e = editor()
    // A lead byte without its continuation, then Enter: the lead byte is dropped and Enter still ends the line.
    #expect(type("a\u{00}", into: &e).last != .line("a"))
    var f = editor()
    let bytes: [UInt8] = [0x61, 0xE2, 0x0D]
    #expect(bytes.map { f.feed($0) }.last == .line("a"))
    // A pasted C1 control or bidi override is dropped.
    var g = editor()
    #expect(type("x\u{9B}31m\u{202E}y\r", into: &g).last == .line("x31my"))
  }

  @Test func aLineWiderThanTheTerminalScrollsAroundTheCursor() {
    var e = LineEditor(prompt: "\u{1B}[1myou› \u{1B}[0m")
    e.columns = 20  // room for 20 - 5 - 1 = 14 characters
    let typed = "abcdefghijklmnopqrstuvwxyz"
    let last = type(typed, into: &e).last
    // The last 14 characters, the cursor at the end.
    #expect(last == .redraw("\r\u{1B}[1myou› \u{1B}[0mmnopqrstuvwxyz\u{1B}[K"))
    _ = type("\u{01}", into: &e)  // Home: the start comes back into view
    #expect(e.feed(0x05) != .none)  // End again
    var h = LineEditor(prompt: "> ")
    h.columns = 12
    _ = type("abcdefghijklmnop", into: &h)
    #expect(h.feed(0x01) == .redraw("\r> abcdefghi\u{1B}[K\u{1B}[9D"))
  }

  @Test func ctrlDEndsAnEmptyLineOnly() {
    var e = editor()
    #expect(e.feed(0x04) == .endOfInput)
    var f = editor()
    _ = type("ab\u{01}\u{04}\r", into: &f)
    #expect(String(f.text) == "b")
  }

  @Test func tabCompletesOneCandidateAndListsSeveral() {
    var e = editor()
    _ = type("@to\t", into: &e)
    #expect(String(e.text) == "@todoList ")
    // "@get" has two candidates with no longer common start: they are listed, and the line stays.
    var f = editor()
    _ = type("@get", into: &f)
    #expect(f.feed(0x09) == .list(["@getWeather", "@getTime"], redraw: "\r> @get\u{1B}[K"))
    var g = editor()
    _ = type("hello wor\t", into: &g)
    #expect(String(g.text) == "hello wor")
  }

  @Test func historyWalksBackAndForth() {
    var e = editor(history: ["first", "second"])
    _ = type("draft", into: &e)
    _ = type("\u{1B}[A", into: &e)
    #expect(String(e.text) == "second")
    _ = type("\u{1B}[A\u{1B}[A", into: &e)
    #expect(String(e.text) == "first")
    _ = type("\u{1B}[B\u{1B}[B", into: &e)
    #expect(String(e.text) == "draft")
  }
}
