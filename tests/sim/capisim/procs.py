"""Starting and stopping the simulator's background processes, by recorded PID only.

Every process gets its own session (so a Ctrl-C in the terminal or the end of a pytest run does
not reach it) and a log file. Stopping checks that the PID still runs a command line that
mentions our state directory, so a recycled PID is never signalled.
"""

import os
import signal
import subprocess
import time


def spawn(argv, log_path, env=None):
    """Start argv in a new session with stdout+stderr appended to log_path; return the Popen."""
    with open(log_path, "ab") as log:
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,  # pylint: disable=consider-using-with
                                start_new_session=True, env=env, close_fds=True)


def _reap(pid):
    """Collect the exit status if pid is our own child, so it does not linger as a zombie."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def alive(pid, marker=None):
    """True when pid runs (not a zombie) and, if marker is given, its command line contains marker."""
    if not pid:
        return False
    _reap(pid)
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X") and (marker is None or marker in cmdline(pid))


def stop(pids, marker, grace=5.0):
    """SIGTERM each live pid whose command line contains marker, SIGKILL what is left after grace seconds."""
    targets = [pid for pid in pids if alive(pid, marker)]
    for pid in targets:
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(alive(pid) for pid in targets):
        time.sleep(0.05)
    for pid in targets:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(alive(pid) for pid in targets):
        time.sleep(0.02)
