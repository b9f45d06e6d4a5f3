#!/usr/bin/env python3
"""A hostile toolhost plugin: one program, one misbehaviour per tool.

Tests/ToolhostCLITests/HostilePluginTests.swift runs it in json mode (the `hostile` folder) and in text mode
(`hostile-text`, whose tools are the same names with a `Text` suffix; there the succeeding cases print plain
text instead of a JSON reply). The behaviour is chosen by $TOOLHOST_TOOL, so the cases that never read stdin
still know what to do.

Every argument object holds `pidDir`. Every process this program starts (itself, children, daemons,
grandchildren) appends its own pid to <pidDir>/pids as soon as it runs, so the tests can check afterwards
that none of them outlived the call. A parent that goes on after starting a child waits until the child has
written its pid, so the list is complete by the time the call can end.

Standard library only; the environment is toolhost's minimal one (PATH, HOME, LANG, TMPDIR, TOOLHOST_*).
"""

import json
import os
import resource
import signal
import sys
import time

TOOL = os.environ.get("TOOLHOST_TOOL", "")
TEXT_MODE = TOOL.endswith("Text")
NAME = TOOL[: -len("Text")] if TEXT_MODE else TOOL
PID_DIR = os.environ.get("TOOLHOST_ARG_PID_DIR", "")
TTY_MARKER = b"HOSTILE-TTY-MARKER"
MIB = 1 << 20
SLEEP = next((p for p in ("/bin/sleep", "/usr/bin/sleep") if os.path.exists(p)), "sleep")

# The cases that must not read their request.
IGNORES_STDIN = {"neverReadStdin", "exitsWithoutReadingHugeInput"}


# MARK: - Plumbing


def record_pid():
    """Appends this process's pid to <pidDir>/pids (O_APPEND, one write, so concurrent writers do not mix)."""
    fd = os.open(os.path.join(PID_DIR, "pids"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, b"%d\n" % os.getpid())
    finally:
        os.close(fd)


def write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def reply(result):
    """The success reply: a JSON reply object, or in text mode `ok` and the result's other members as key=value."""
    if TEXT_MODE:
        text = "ok" + "".join(f" {key}={json.dumps(value)}" for key, value in result.items() if key != "ok")
        write_all(1, (text + "\n").encode())
    else:
        write_all(1, (json.dumps({"result": result}) + "\n").encode())


def sleep_forever():
    while True:
        time.sleep(3600)


def exec_sleep():
    """Becomes `sleep 100` (same pid, already recorded)."""
    os.execv(SLEEP, ["sleep", "100"])


def exec_sleep_without_environment():
    """Becomes `sleep 100` with an empty environment: no TOOLHOST_* variable marks it as the plugin's."""
    os.execve(SLEEP, ["sleep", "100"], {})


def stdio_to_dev_null():
    null = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    if null > 2:
        os.close(null)


def new_session_quiet():
    """`setsid server </dev/null >/dev/null 2>&1`."""
    os.setsid()
    stdio_to_dev_null()


def new_group_quiet():
    os.setpgid(0, 0)
    stdio_to_dev_null()


def start_child(run=None, prepare=None):
    """Forks a child that records its pid, runs `prepare` (leaving the group, redirecting stdio, forking
    further), tells the parent it is ready, then runs `run` (which normally execs) or exits.

    Returns the child's pid once the child is ready, so every pid of its subtree is on the list by then.
    """
    ready_r, ready_w = os.pipe()  # close-on-exec: an exec'd child does not keep them
    try:
        pid = os.fork()
    except OSError:
        os.close(ready_r)
        os.close(ready_w)
        raise
    if pid == 0:
        status = 0
        try:
            os.close(ready_r)
            record_pid()
            if prepare:
                prepare()
            os.write(ready_w, b".")
            os.close(ready_w)
            if run:
                run()
        except BaseException as error:  # noqa: BLE001 - a child must never return into the parent's code
            try:
                write_all(2, f"hostile child {os.getpid()}: {error!r}\n".encode())
            except OSError:
                pass
            status = 1
        finally:
            os._exit(status)
    os.close(ready_w)
    os.read(ready_r, 1)  # b"" when the child died first
    os.close(ready_r)
    return pid


def cgroups_above():
    """The cgroup v2 folders above this process's own, nearest first; none without cgroup v2."""
    mount = None
    with open("/proc/self/mountinfo") as mounts:
        for line in mounts:
            fields = line.split()
            if "-" in fields and fields[fields.index("-") + 1] == "cgroup2":
                mount = fields[4]
                break
    with open("/proc/self/cgroup") as groups:
        own = next((line[3:].strip() for line in groups if line.startswith("0::")), None)
    if mount is None or own is None:
        return []
    parts = [part for part in own.split("/") if part]
    return [mount + "".join("/" + part for part in parts[:depth]) for depth in range(len(parts) - 1, -1, -1)]


def leave_cgroup():
    """Moves this process out of its cgroup into the nearest one above that takes it, as any process may where it
    can write that cgroup's cgroup.procs, and appends the folder to <pidDir>/left-cgroup. Does nothing where no
    cgroup takes it (no cgroup v2, or the process is in the root cgroup already)."""
    for folder in cgroups_above():
        try:
            fd = os.open(folder + "/cgroup.procs", os.O_WRONLY)
            try:
                os.write(fd, b"%d" % os.getpid())
            finally:
                os.close(fd)
        except OSError:
            continue
        fd = os.open(os.path.join(PID_DIR, "left-cgroup"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, folder.encode() + b"\n")
        finally:
            os.close(fd)
        return


def classic_daemon(run):
    """The classic double fork: a child that starts a new session, forks the daemon and exits; the daemon
    (reparented to init or a subreaper, stdio on /dev/null, in /) runs `run`. Returns once the daemon is ready
    and the middle process is reaped."""

    def middle():
        os.setsid()
        start_child(run, prepare=daemon_setup)

    def daemon_setup():
        os.chdir("/")
        os.umask(0)
        stdio_to_dev_null()

    os.waitpid(start_child(prepare=middle), 0)


# MARK: - Behaviours (each takes the request, or None when it must not read stdin)


def hang(request):
    sleep_forever()


def hang_with_grandchild_holding_stdout(request):
    start_child(exec_sleep)  # inherits stdout and stderr
    sleep_forever()


def ignore_sigterm(request):
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    sleep_forever()


def daemonize_setsid_then_reply(request):
    start_child(exec_sleep, prepare=new_session_quiet)
    reply({"ok": True})


def daemonize_setpgid_then_reply(request):
    start_child(exec_sleep, prepare=new_group_quiet)
    reply({"ok": True})


def double_fork_then_reply(request):
    classic_daemon(exec_sleep)
    reply({"ok": True})


def daemonize_clear_env_then_reply(request):
    classic_daemon(exec_sleep_without_environment)
    reply({"ok": True})


def leave_cgroup_then_reply(request):
    def prepare():
        new_session_quiet()
        leave_cgroup()

    start_child(exec_sleep, prepare=prepare)
    reply({"ok": True})


def leave_cgroup_clear_env_then_reply(request):
    """A child that stays in the call's cgroup (asleep, in a session of its own) starts a grandchild that leaves
    the cgroup and execs sleep with an empty environment: no marker, and a parent alive until the call ends."""

    def middle():
        new_session_quiet()
        start_child(exec_sleep_without_environment, prepare=leave_cgroup)

    start_child(exec_sleep, prepare=middle)
    reply({"ok": True})


def daemonize_then_hang(request):
    start_child(exec_sleep, prepare=new_session_quiet)
    sleep_forever()


def grandchild_holds_stdout_then_reply(request):
    start_child(exec_sleep)  # holds stdout and stderr open after the plugin exits
    reply({"ok": True})


def fork_many(request):
    for i in range(100):
        try:
            start_child(exec_sleep)
        except OSError as error:
            write_all(2, f"fork {i} failed: {error}\n".encode())
            break
    sleep_forever()


def flood_stdout(request):
    chunk = b"x" * MIB
    try:
        for _ in range(100):
            write_all(1, chunk)
    except BrokenPipeError:
        os._exit(1)


def flood_stderr_then_reply(request):
    chunk = b"log line " * (MIB // 9) + b"\n"
    for _ in range(50):
        write_all(2, chunk)
    reply({"ok": True})


def garbage(request):
    write_all(1, b"hello world\n")


def invalid_utf8(request):
    write_all(1, b'{"result": {"text": "caf\xff"}}\n')


def nul_bytes(request):
    write_all(1, b'{"result": {"text": "a\x00b"}}\n')


def deep_json(request):
    write_all(1, b"[" * 100000)


def two_replies(request):
    write_all(1, b'{"result": {"reply": 1}}\n{"result": {"reply": 2}}\n')


def no_reply(request):
    pass


def crash_by_signal(request):
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core file in the plugin's folder
    os.kill(os.getpid(), signal.SIGSEGV)
    time.sleep(10)


def exit_with_error(request):
    write_all(2, b"disk on fire\n")
    os._exit(3)


def close_stdout_keep_running(request):
    os.close(1)
    os.close(2)
    time.sleep(100)
    os._exit(0)


def reply_then_hang(request):
    reply({"ok": True})
    sleep_forever()


def never_read_stdin(request):
    time.sleep(0.1)  # the host is still writing the request when the reply comes
    reply({"ok": True})


def write_tty(request):
    try:
        fd = os.open("/dev/tty", os.O_WRONLY | os.O_NOCTTY)
    except OSError:
        reply({"tty": False})
        return
    try:
        write_all(fd, b"\r\n" + TTY_MARKER + b"\r\n")
    finally:
        os.close(fd)
    reply({"tty": True})


def stop_self(request):
    os.kill(os.getpid(), signal.SIGSTOP)
    sleep_forever()


def memory_hog(request):
    blocks = []
    for _ in range(24):  # 24 x 64 MiB = 1.5 GiB, every page written
        blocks.append(bytearray(b"\x01") * (64 * MIB))
    reply({"allocatedMiB": 64 * len(blocks)})


def cpu_burn(request):
    while True:
        pass


def file_hog(request):
    # Like a C program: Python ignores SIGXFSZ (writes then fail with EFBIG); the default lets the kernel end
    # the process at the limit.
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    chunk = b"\0" * MIB
    fd = os.open(os.path.join(PID_DIR, "big.bin"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    for _ in range(300):
        write_all(fd, chunk)
    os.close(fd)
    reply({"writtenMiB": 300})


def open_files_hog(request):
    descriptors = [os.open("/dev/null", os.O_RDONLY) for _ in range(2000)]
    reply({"opened": len(descriptors)})


def huge_arguments_in_env(request):
    variables = sum(1 for name in os.environ if name.startswith("TOOLHOST_ARG_"))
    reply({"envArguments": variables, "stdinArguments": len(request["arguments"])})


def slow_but_fine(request):
    time.sleep(0.3)
    reply({"ok": True})


def exits_without_reading_huge_input(request):
    reply({"ok": True})
    os._exit(0)


BEHAVIOURS = {
    "hang": hang,
    "hangWithGrandchildHoldingStdout": hang_with_grandchild_holding_stdout,
    "ignoreSigterm": ignore_sigterm,
    "daemonizeSetsidThenReply": daemonize_setsid_then_reply,
    "daemonizeSetpgidThenReply": daemonize_setpgid_then_reply,
    "doubleForkThenReply": double_fork_then_reply,
    "daemonizeClearEnvThenReply": daemonize_clear_env_then_reply,
    "leaveCgroupThenReply": leave_cgroup_then_reply,
    "leaveCgroupClearEnvThenReply": leave_cgroup_clear_env_then_reply,
    "daemonizeThenHang": daemonize_then_hang,
    "grandchildHoldsStdoutThenReply": grandchild_holds_stdout_then_reply,
    "forkMany": fork_many,
    "floodStdout": flood_stdout,
    "floodStderrThenReply": flood_stderr_then_reply,
    "garbage": garbage,
    "invalidUTF8": invalid_utf8,
    "nulBytes": nul_bytes,
    "deepJSON": deep_json,
    "twoReplies": two_replies,
    "noReply": no_reply,
    "crashBySignal": crash_by_signal,
    "exitWithError": exit_with_error,
    "closeStdoutKeepRunning": close_stdout_keep_running,
    "replyThenHang": reply_then_hang,
    "neverReadStdin": never_read_stdin,
    "writeTTY": write_tty,
    "stopSelf": stop_self,
    "memoryHog": memory_hog,
    "cpuBurn": cpu_burn,
    "fileHog": file_hog,
    "openFilesHog": open_files_hog,
    "hugeArgumentsInEnv": huge_arguments_in_env,
    "slowButFine": slow_but_fine,
    "exitsWithoutReadingHugeInput": exits_without_reading_huge_input,
}


def main():
    if not PID_DIR:
        write_all(2, b"hostile: TOOLHOST_ARG_PID_DIR is not set\n")
        os._exit(2)
    record_pid()
    behaviour = BEHAVIOURS.get(NAME)
    if behaviour is None:
        write_all(2, f"hostile: no behaviour named {NAME!r} (tool {TOOL!r})\n".encode())
        os._exit(2)
    request = None if NAME in IGNORES_STDIN else json.loads(sys.stdin.buffer.read())
    behaviour(request)


if __name__ == "__main__":
    main()
