"""ansible-playbook runs forked from a process that has imported Ansible once (one such server per pytest process).

Each module call of a test is one ansible-playbook run, and about 0.3 CPU s of every run's start is Python importing
Ansible (``ansible.cli.playbook`` and what it imports, Ansible's configuration included), the same for every run. The
server imports it once, under the run environment of playbook.py, and forks a child per run that calls
ansible-playbook's own entry point (``ansible.cli.playbook.main``, what the ``ansible-playbook`` script calls) with the
run's arguments, environment and working directory, in a session of its own, its output to a file. So a run is
Ansible's own, from its command line on: the modules run as separate processes as they always do.

A server is started with the environment of the runs it forks, apart from the names in PER_RUN: Ansible reads its
configuration (ANSIBLE_*) when imported, and a process takes LD_PRELOAD (a faked clock) when exec'd. So a run with
another environment gets a server of its own. A run while another is in progress (from another thread) is exec'd as
before (``exec_run``), as is every run with CAPI_ROLLOUT_IT_FORK=0.

The children share the server's local temporary directory (Ansible makes it when imported), so the payload of a
module that AnsiballZ built for one run serves the later ones, as it does for the tasks of one playbook. And they
share what the server parsed of the collections' routing tables (``meta/runtime.yml``; ansible.builtin's is 370 kB,
0.05 CPU s of every run): ``collection_metadata_parsed_once``.
"""

import atexit
import collections
import copy
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
import traceback

import proctree

# Environment variables a forked run may set differently from the server: the results file of the callback
# (callback_plugins/registered_results.py reads it at the end of the run) and the name pytest gives the current test.
PER_RUN = ("CAPI_ROLLOUT_IT_RESULTS", "PYTEST_CURRENT_TEST")


def exec_run(argv, cwd, env, timeout):
    """(returncode, output) of ``argv`` exec'd as a new process; past ``timeout`` it and every process under it are
    killed (proctree) and TimeoutExpired is raised."""
    with subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc:
        try:
            output = proc.communicate(timeout=timeout)[0]
        except subprocess.TimeoutExpired:
            proctree.kill_tree(proc.pid)
            output = proc.communicate()[0]
            raise subprocess.TimeoutExpired(argv, timeout, output=output) from None
    return proc.returncode, output


def _key(script, env):
    """The server a run goes to: its ansible-playbook script and its environment but for PER_RUN."""
    return str(script), tuple(sorted((name, value) for name, value in env.items() if name not in PER_RUN))


class ForkServers:
    """The client side: a server per run environment (started with it on first use, the two last used kept), one
    run at a time in this process."""

    KEEP = 2

    def __init__(self):
        self._servers = collections.OrderedDict()
        self._lock = threading.Lock()
        self.forked = 0  # runs forked, for the test of this harness
        atexit.register(self.close)

    def run(self, argv, cwd, env, timeout, output_path):
        """(returncode, output) of the ansible-playbook run ``argv`` (argv[0] the ansible-playbook script, whose
        interpreter the server runs on: ``ansible_playbook_python`` is the same as in an exec'd run)."""
        if not self._lock.acquire(blocking=False):  # a run from another thread is in progress
            return exec_run(argv, cwd, env, timeout)
        try:
            key = _key(argv[0], env)
            server = self._servers.pop(key, None)
            if server is None or server.proc.poll() is not None:  # none yet, or it died (a killed test run)
                server = _Server(argv[0], env)
            self._servers[key] = server
            while len(self._servers) > self.KEEP:
                self._servers.popitem(last=False)[1].close()
            done = server.run(argv, cwd, env, timeout, output_path)
            self.forked += 1
            return done
        finally:
            self._lock.release()

    def pid(self, env, script):
        """The pid of the server of ``env`` (None when there is none), for the test of this harness."""
        server = self._servers.get(_key(script, env))
        return server.proc.pid if server else None

    def close(self):
        while self._servers:
            self._servers.popitem()[1].close()


class _Server:
    """One server process (``python forkserver.py`` with the run environment) and the pipe to it."""

    def __init__(self, script, env):
        with open(script, encoding="utf-8") as handle:
            interpreter = handle.readline()[2:].strip()
        self._buffer = b""
        # its own session: a Ctrl-C in the terminal reaches pytest, whose exit ends the server (close) and its runs
        self.proc = subprocess.Popen([interpreter, os.path.abspath(__file__)], stdin=subprocess.PIPE,  # pylint: disable=consider-using-with
                                     stdout=subprocess.PIPE, env=env, start_new_session=True, bufsize=0)

    def run(self, argv, cwd, env, timeout, output_path):
        request = {"argv": [str(arg) for arg in argv], "cwd": str(cwd), "env": env, "out": str(output_path)}
        self.proc.stdin.write((json.dumps(request) + "\n").encode("utf-8"))
        deadline = time.monotonic() + timeout
        pid = self._reply(deadline + 30)["pid"]
        try:
            done = self._reply(deadline)
        except TimeoutError:
            proctree.kill_tree(pid)  # the run and its workers, which start sessions of their own
            self._reply(time.monotonic() + 30)
            raise subprocess.TimeoutExpired(argv, timeout, output=_read(output_path)) from None
        return done["rc"], _read(output_path)

    def _reply(self, deadline):
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError("no answer from the fork server")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise RuntimeError(f"the fork server exited (status {self.proc.wait()})")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()  # the server ends at the end of its input
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


SERVERS = ForkServers()


def run(argv, cwd, env, timeout, output_path):
    """(returncode, output) of the ansible-playbook run ``argv``: forked from a server, or exec'd when the environment
    says CAPI_ROLLOUT_IT_FORK=0."""
    if env.get("CAPI_ROLLOUT_IT_FORK", "1") == "0":
        return exec_run(argv, cwd, env, timeout)
    return SERVERS.run(argv, cwd, env, timeout, output_path)


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


def collection_metadata_parsed_once(parse):
    """``parse`` (ansible-core's ``_meta_yml_to_dict(data, content_id)``: a collection's meta/runtime.yml to a dict)
    run once per distinct content; every call gets a copy of its own, as if parsed anew. ansible-core names that
    function as the one tools replace to cache the parse (its import sanity test does)."""
    parsed = {}

    def parse_once(data, content_id):
        if data not in parsed:
            parsed[data] = parse(data, content_id)
        return copy.deepcopy(parsed[data])

    return parse_once


def serve():
    # The import every run shares; ansible.cli checks at import that stdin/stdout/stderr are blocking, as here.
    import ansible.cli.playbook  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
    # pylint: disable-next=import-outside-toplevel
    from ansible.utils.collection_loader import _collection_finder
    # every run routes ansible.builtin's names through its table: parsed here, once
    _collection_finder._meta_yml_to_dict = collection_metadata_parsed_once(  # pylint: disable=protected-access
        _collection_finder._meta_yml_to_dict)  # pylint: disable=protected-access
    builtin = os.path.join(os.path.dirname(ansible.cli.playbook.__file__), "..", "config", "ansible_builtin_runtime.yml")
    with open(builtin, "rb") as handle:
        _collection_finder._meta_yml_to_dict(handle.read(), ("ansible.builtin", "runtime.yml"))  # pylint: disable=protected-access
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
