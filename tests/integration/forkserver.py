"""ansible-playbook runs forked from a process that has imported Ansible once (one such server per pytest process).

Each module call of a test is one ansible-playbook run, and about 0.3 CPU s of every run's start is Python importing
Ansible (``ansible.cli.playbook`` and what it imports, Ansible's configuration included), the same for every run. The
server imports it once, under the run environment of playbook.py, and forks a child per run that calls
ansible-playbook's own entry point (``ansible.cli.playbook.main``, what the ``ansible-playbook`` script calls) with the
run's arguments, environment and working directory, in a session of its own, its output to a file. So a run is
Ansible's own, from its command line on: the modules run as separate processes as they always do.

Only a run whose environment is the server's, apart from the names in PER_RUN, is forked: Ansible reads its
configuration (ANSIBLE_*) when imported, and what a new process takes at exec (LD_PRELOAD, as a faked clock sets it)
a fork cannot take. Any other run, and every run while another is in progress, is exec'd as before (``exec_run``).
"""

import atexit
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
import traceback

# Environment variables a forked run may set differently from the server: the results file of the callback
# (callback_plugins/registered_results.py reads it at the end of the run) and the name pytest gives the current test.
PER_RUN = ("CAPI_ROLLOUT_IT_RESULTS", "PYTEST_CURRENT_TEST")


def exec_run(argv, cwd, env, timeout):
    """(returncode, output) of ``argv`` exec'd as a new process: subprocess.run's semantics and TimeoutExpired."""
    proc = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=timeout, check=False)
    return proc.returncode, proc.stdout


def _comparable(env):
    return {key: value for key, value in env.items() if key not in PER_RUN}


class ForkServer:
    """The client side: starts the server (``python forkserver.py``) on first use, one run at a time."""

    def __init__(self):
        self._proc = None
        self._env = None
        self._lock = threading.Lock()
        self._buffer = b""
        self.forked = 0  # runs forked, for the test of this harness

    def run(self, argv, cwd, env, timeout, output_path):
        """(returncode, output) of the ansible-playbook run ``argv`` (argv[0] the ansible-playbook script, whose
        interpreter the server runs on: ``ansible_playbook_python`` is the same as in an exec'd run)."""
        if not self._lock.acquire(blocking=False):
            return exec_run(argv, cwd, env, timeout)
        try:
            if self._proc is not None and self._proc.poll() is not None:  # it died (a killed test run): a new one
                self._proc = None
            if self._proc is None:
                self._start(argv[0], env)
            elif _comparable(env) != _comparable(self._env):
                return exec_run(argv, cwd, env, timeout)
            return self._forked(argv, cwd, env, timeout, output_path)
        finally:
            self._lock.release()

    def _start(self, script, env):
        with open(script, encoding="utf-8") as handle:
            interpreter = handle.readline()[2:].strip()
        self._env = dict(env)
        self._buffer = b""
        # its own session: a Ctrl-C in the terminal reaches pytest, which stops the server (close) and its runs
        self._proc = subprocess.Popen([interpreter, os.path.abspath(__file__)], stdin=subprocess.PIPE,  # pylint: disable=consider-using-with
                                      stdout=subprocess.PIPE, env=env, start_new_session=True, bufsize=0)
        atexit.register(self.close)

    def _forked(self, argv, cwd, env, timeout, output_path):
        request = {"argv": [str(arg) for arg in argv], "cwd": str(cwd), "env": env, "out": str(output_path)}
        self._proc.stdin.write((json.dumps(request) + "\n").encode("utf-8"))
        deadline = time.monotonic() + timeout
        pid = self._reply(deadline + 30)["pid"]
        try:
            done = self._reply(deadline)
        except TimeoutError:
            os.killpg(pid, signal.SIGKILL)
            self._reply(time.monotonic() + 30)
            raise subprocess.TimeoutExpired(argv, timeout, output=_read(output_path)) from None
        self.forked += 1
        return done["rc"], _read(output_path)

    def _reply(self, deadline):
        fd = self._proc.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError("no answer from the fork server")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise RuntimeError(f"the fork server exited (status {self._proc.wait()})")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def close(self):
        if self._proc is not None and self._proc.poll() is None:
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._proc = None


def _read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except FileNotFoundError:
        return ""


# ----- the server -----

def _child(request, out, replies):
    """In the forked child: become the run (a session of its own, its stdio, cwd, environment and argv), then
    ansible-playbook's entry point; exit with its status, running only the exit handlers the run registered."""
    code = 250
    try:
        os.setsid()
        replies.close()
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = list(request["argv"])
        signal.signal(signal.SIGINT, signal.default_int_handler)
        atexit._clear()  # pylint: disable=protected-access  # the server's exit handlers are not the run's
        from ansible.cli.playbook import main  # pylint: disable=import-outside-toplevel  # imported by the server
        try:
            main()
            code = 0
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
        atexit._run_exitfuncs()  # pylint: disable=protected-access
    except BaseException:  # pylint: disable=broad-except  # whatever it is, the run's output shows it
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)  # pylint: disable=protected-access


def serve():
    # The import every run shares; ansible.cli checks at import that stdin/stdout/stderr are blocking, as here.
    import ansible.cli.playbook  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    for line in sys.stdin:
        request = json.loads(line)
        out = os.open(request["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        pid = os.fork()
        if pid == 0:
            _child(request, out, replies)
        os.close(out)
        replies.write(json.dumps({"pid": pid}) + "\n")
        replies.flush()
        _pid, status, usage = os.wait4(pid, 0)
        replies.write(json.dumps({"rc": os.waitstatus_to_exitcode(status), "cpu": usage.ru_utime + usage.ru_stime}) + "\n")
        replies.flush()


if __name__ == "__main__":
    serve()
