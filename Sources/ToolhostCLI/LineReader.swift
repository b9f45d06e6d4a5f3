import Dispatch
import Foundation
import Synchronization
import ToolhostCommandLine
import ToolhostSystem

/// Reads stdin one line at a time on its own thread (blocking reads must stay off the cooperative pool), only when
/// asked, so the chat prompt and confirmations share it. A line asked for with a prompt, when stdin and stderr are
/// a terminal, is edited with ``LineEditor`` (arrows, history, Tab completion) in the terminal's non-canonical mode,
/// which is restored after the line and when the program exits.
final class LineReader: Sendable {
  /// What completes a word typed at the prompt.
  let complete: @Sendable (String) -> [String]
  /// Whether lines asked for with a prompt are edited on the terminal.
  let edits: Bool

  private struct State {
    /// The prompt of the line being asked for (`nil`: read it plainly).
    var prompt: String?
    /// Lines entered so far, for Up and Down.
    var history: [String] = []
    /// Lines read after their reader stopped waiting (cancelled), for the next one.
    var buffered: [String] = []
    var eof = false
    /// Whether the thread is reading a line.
    var reading = false
    /// The reader waiting for the line being read.
    var waiter: OneShot<String?>?
  }

  private let state = Mutex(State())
  /// Lets the thread read one line.
  private let wake = DispatchSemaphore(value: 0)

  init(complete: @escaping @Sendable (String) -> [String] = { _ in [] }) {
    self.complete = complete
    edits = isatty(0) != 0 && isatty(2) != 0
    let thread = Thread { [self] in
      while true {
        wake.wait()
        let (prompt, history) = state.withLock { ($0.prompt, $0.history) }
        let line: String?
        if let prompt, edits {
          line = TerminalLine.read(prompt: prompt, history: history, complete: complete)
        } else {
          line = readLine(strippingNewline: true)
        }
        deliver(line)
        if line == nil { return }
      }
    }
    thread.name = "toolhost.stdin"
    thread.start()
  }

  /// Hands a line read (`nil`: end of input) to the waiting reader, or keeps it for the next one when the waiting
  /// reader was cancelled.
  private func deliver(_ line: String?) {
    state.withLock { s in
      s.reading = false
      if s.prompt != nil, let line, !line.trimmingCharacters(in: .whitespaces).isEmpty { s.history.append(line) }
      if line == nil { s.eof = true }
      let delivered = s.waiter?.complete(line) ?? false
      s.waiter = nil
      if !delivered, let line { s.buffered.append(line) }
    }
  }

  /// Throws away what was typed but not yet asked for, before a question that type-ahead must not answer (an
  /// approval): the lines kept from a cancelled read and, when stdin is a terminal, the input the terminal holds.
  /// Piped input is left as it is: there every line is meant as an answer.
  func discardTypeAhead() {
    guard isatty(0) != 0 else { return }
    state.withLock { s in s.buffered.removeAll() }
    tcflush(0, TCIFLUSH)
  }

  /// The next line, or `nil` at end of input or when the task is cancelled while waiting. With `prompt`, on a
  /// terminal, the prompt is drawn and the line edited there (otherwise the caller shows its own prompt).
  func nextLine(prompt: String? = nil) async -> String? {
    let waiter = OneShot<String?>()
    var plainReadGoesOn = false
    let ready: String?? = state.withLock { s in
      if !s.buffered.isEmpty { return .some(s.buffered.removeFirst()) }
      if s.eof || Task.isCancelled { return .some(nil) }
      s.waiter = waiter
      if !s.reading {
        s.prompt = prompt
        s.reading = true
        wake.signal()
      } else {
        // A plain read (a confirmation whose request was cancelled) is still waiting for its line: this line comes
        // from it, so its prompt is shown here.
        plainReadGoesOn = prompt != nil && edits
      }
      return .none
    }
    if let ready { return ready }
    if plainReadGoesOn, let prompt { try? FileHandle.standardError.write(contentsOf: Data(prompt.utf8)) }
    return await withTaskCancellationHandler {
      await waiter.wait()
    } onCancel: {
      waiter.complete(nil)
    }
  }
}

/// One line edited on the terminal: stdin in non-canonical mode without echo (signals still on, so Ctrl-C works as
/// before), ``LineEditor`` drawing on stderr.
enum TerminalLine {
  /// The terminal's settings while a line is edited, for the exit handler to put back.
  private static let saved = Mutex<termios?>(nil)
  private static let restoreAtExit: Void = {
    atexit {
      if var settings = TerminalLine.saved.withLock({ $0 }) { tcsetattr(0, TCSANOW, &settings) }
    }
  }()

  /// Reads one line; `nil` at end of input (Ctrl-D on an empty line, or stdin closed).
  static func read(prompt: String, history: [String], complete: @escaping @Sendable (String) -> [String]) -> String? {
    var original = termios()
    guard tcgetattr(0, &original) == 0 else { return readLine(strippingNewline: true) }
    _ = restoreAtExit
    var raw = original
    raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
    withUnsafeMutableBytes(of: &raw.c_cc) { cc in
      cc[Int(VMIN)] = 1
      cc[Int(VTIME)] = 0
      // Ctrl-\ would end the program without the exit handler that puts the terminal back: it is off while a
      // line is edited (Ctrl-C still interrupts).
      cc[Int(VQUIT)] = 0
    }
    saved.withLock { $0 = original }
    tcsetattr(0, TCSANOW, &raw)
    defer {
      tcsetattr(0, TCSANOW, &original)
      saved.withLock { $0 = nil }
    }
    var editor = LineEditor(prompt: prompt, history: history, complete: complete)
    var size = winsize()
    if ioctl(2, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { editor.columns = Int(size.ws_col) }
    show(prompt)
    while true {
      var byte: UInt8 = 0
      let n = Foundation.read(0, &byte, 1)
      if n < 0 && errno == EINTR { continue }
      guard n == 1 else { return nil }
      switch editor.feed(byte) {
      case .none: break
      case .redraw(let text): show(text)
      case .list(let candidates, let redraw): show("\n" + candidates.joined(separator: "  ") + "\n" + redraw)
      case .line(let line):
        show("\n")
        return line
      case .endOfInput: return nil
      }
    }
  }

  private static func show(_ text: String) {
    let bytes = Array(text.utf8)
    var done = 0
    while done < bytes.count {
      let n = bytes[done...].withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
      if n < 0 && errno == EINTR { continue }
      guard n > 0 else { return }
      done += n
    }
  }
}
