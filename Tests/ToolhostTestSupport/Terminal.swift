/// Runs a program on a pseudo-terminal (python3's pty module), so that what it prints is what a terminal shows:
/// stdout and stderr together, with `\r\n` line ends.
public enum Terminal {
  /// The python3 command that starts `command` on a new pseudo-terminal, copies everything it shows to stdout and
  /// exits with its status (128 + the signal when a signal ended it); with `answer`, it types `answer.text` and a
  /// newline the first time `answer.after` appears. Run it with `/usr/bin/env` first.
  public static func command(_ command: [String], answer: (after: String, text: String)? = nil) -> [String] {
    ["python3", "-c", script, answer?.after ?? "", answer?.text ?? ""] + command
  }

  /// argv[1] the prompt to wait for ("" for none), argv[2] the answer, argv[3:] the command.
  private static let script = #"""
    import os, pty, sys
    prompt = sys.argv[1].encode()
    answer = sys.argv[2].encode() + b"\n"
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(sys.argv[3], sys.argv[3:])
    seen = b""
    answered = not prompt
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:
            break
        if not data:
            break
        seen += data
        if not answered and prompt in seen:
            os.write(fd, answer)
            answered = True
    _, status = os.waitpid(pid, 0)
    sys.stdout.buffer.write(seen)
    sys.stdout.flush()
    code = os.waitstatus_to_exitcode(status)
    sys.exit(code if code >= 0 else 128 - code)
    """#
}
