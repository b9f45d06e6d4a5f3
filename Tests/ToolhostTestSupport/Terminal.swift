import Foundation

/// Runs a program on a pseudo-terminal (python3's pty module), so that what it prints is what a terminal shows:
/// stdout and stderr together, with `\r\n` line ends.
public enum Terminal {
  /// The python3 command that starts `command` on a new pseudo-terminal, copies everything it shows to stdout and
  /// exits with its status (128 + the signal when a signal ended it); with `answer`, it types `answer.text` and a
  /// newline the first time `answer.after` appears. Run it with `/usr/bin/env` first.
  public static func command(_ command: [String], answer: (after: String, text: String)? = nil) -> [String] {
    self.command(command, typing: answer.map { [($0.after, $0.text + "\n")] } ?? [])
  }

  /// Like ``command(_:answer:)``, but first types `typeAhead` at once, before the program shows anything: what a
  /// person types while the program is busy.
  public static func command(_ command: [String], typeAhead: String, answer: (after: String, text: String))
    -> [String]
  {
    self.command(command, typing: [("", typeAhead), (answer.after, answer.text + "\n")])
  }

  /// Like ``command(_:answer:)``, typing each `text` as it is (no newline added) once its `after` appears in what
  /// the program showed since the text before it was typed.
  public static func command(_ command: [String], typing: [(after: String, text: String)]) -> [String] {
    let steps = typing.map { [$0.after, $0.text] }
    let json = String(decoding: (try? JSONSerialization.data(withJSONObject: steps)) ?? Data("[]".utf8), as: UTF8.self)
    return ["python3", "-c", script, json] + command
  }

  /// argv[1] a JSON list of [text to wait for, text to type] (an empty text to wait for: type it at once, before
  /// reading anything), argv[2:] the command.
  private static let script = #"""
    import json, os, pty, sys
    steps = [(a.encode(), t.encode()) for a, t in json.loads(sys.argv[1])]
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(sys.argv[2], sys.argv[2:])
    while steps and steps[0][0] == b"":
        os.write(fd, steps[0][1])
        steps.pop(0)
    seen = b""
    since = 0
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:
            break
        if not data:
            break
        seen += data
        while steps and steps[0][0] in seen[since:]:
            since = seen.index(steps[0][0], since) + len(steps[0][0])
            os.write(fd, steps[0][1])
            steps.pop(0)
    _, status = os.waitpid(pid, 0)
    sys.stdout.buffer.write(seen)
    sys.stdout.flush()
    code = os.waitstatus_to_exitcode(status)
    sys.exit(code if code >= 0 else 128 - code)
    """#
}
