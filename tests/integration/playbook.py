"""Run one capi.rollout module through ansible-playbook and return its registered result.

Each call writes a playbook of the module task (register, ignore_errors, optional check/diff mode); the callback
callback_plugins/registered_results.py writes the registered result to a JSON file, which the test reads back.
Connection options come from the fleet inventory's host vars (the rollout-operator kubeconfig).
"""

import glob
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

import forkserver

REPO = Path(__file__).resolve().parents[2]
ANSIBLE_PLAYBOOK = Path(sys.executable).parent / "ansible-playbook"
# registered_results: writes the registered values of the tasks to a JSON file at the end of the run
CALLBACKS = Path(__file__).resolve().parent / "callback_plugins"


def faked_clock(skew_seconds, monotonic=False):
    """Environment that sets the clock of a process and its children ``skew_seconds`` off (libfaketime), after
    checking it takes effect in a Python process that also sleeps (positive control). The monotonic clock stays
    true unless ``monotonic``: ansible-playbook itself needs it faked too, as libfaketime 0.9.10 answers
    Python's time.sleep (clock_nanosleep on the monotonic clock) with EINVAL when only the wall clock is faked."""
    found = sorted(glob.glob("/usr/lib/*/faketime/libfaketime.so.1"))
    assert found, "libfaketime is missing: make system-deps installs it"
    faked = {"LD_PRELOAD": found[0], "FAKETIME": f"{skew_seconds:+d}"}
    if not monotonic:
        faked["FAKETIME_DONT_FAKE_MONOTONIC"] = "1"
    sleep = "time.sleep(0.01); " if monotonic else ""
    probe = subprocess.run([sys.executable, "-c", f"import time; {sleep}print(time.time())"], env=dict(os.environ, **faked),
                           capture_output=True, text=True, check=True)
    assert abs(float(probe.stdout) - time.time() - skew_seconds) < 10, probe.stdout
    return faked


class PlaybookResult(dict):
    """The registered module result, plus the playbook's stdout for debugging."""

    stdout = ""

    @property
    def failed(self):
        return bool(self.get("failed"))


def _with_kubeconfig(params, kubeconfig):
    args = dict(params)
    if kubeconfig is not None and "kubeconfig" not in args and "host" not in args:
        args["kubeconfig"] = kubeconfig
    return args


def _run_tasks(inventory, host, tasks, timeout):
    """One ansible-playbook run of ``tasks`` (each registers ``case_<index>``, errors ignored); returns their
    registered results as PlaybookResults, each with the run's stdout."""
    with tempfile.TemporaryDirectory(prefix="capi-rollout-it-") as tmp:
        out_file = Path(tmp) / "results.json"
        play = [{"hosts": host, "gather_facts": False, "tasks": [
            dict(task, register=f"case_{index}", ignore_errors=True) for index, task in enumerate(tasks)]}]
        playbook = Path(tmp) / "play.yml"
        playbook.write_text(yaml.safe_dump(play, sort_keys=False), encoding="utf-8")
        env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
                   ANSIBLE_DEPRECATION_WARNINGS="0", ANSIBLE_CALLBACK_PLUGINS=str(CALLBACKS),
                   ANSIBLE_CALLBACKS_ENABLED="registered_results", CAPI_ROLLOUT_IT_RESULTS=str(out_file))
        argv = [str(ANSIBLE_PLAYBOOK), "-i", str(inventory), str(playbook)]
        # forked from a process that imported Ansible once (forkserver.py); CAPI_ROLLOUT_IT_FORK=0 execs it
        returncode, stdout = forkserver.run(argv, REPO, env, timeout, Path(tmp) / "output.txt")
        registered = json.loads(out_file.read_text(encoding="utf-8")) if out_file.exists() else []
        if len(registered) != len(tasks):
            raise AssertionError(f"ansible-playbook ran {len(registered)} of {len(tasks)} tasks (rc {returncode}):\n"
                                 f"{stdout}")
        results = []
        for data in registered:
            result = PlaybookResult(data)
            result.stdout = stdout
            results.append(result)
        return results


def run_module(inventory, host, module, params, check=False, diff=False, kubeconfig="{{ capi_kubeconfig }}",
               environment=None, timeout=600, loop=None):
    """Run ``capi.rollout.<module>`` with ``params`` on inventory host ``host``; returns PlaybookResult.
    ``loop``: run the task over these items (``{{ item }}`` in params); the result then has Ansible's ``results``."""
    task = {"name": module, f"capi.rollout.{module}": _with_kubeconfig(params, kubeconfig), "check_mode": check,
            "diff": diff}
    if environment:
        task["environment"] = environment
    if loop is not None:
        task["loop"] = loop
    return _run_tasks(inventory, host, [task], timeout)[0]


def run_modules(inventory, host, calls, kubeconfig="{{ capi_kubeconfig }}", timeout=900):
    """Run many module calls in one ansible-playbook run (one task each, errors ignored); ``calls`` is a
    list of (module, params, check). Returns the PlaybookResults in order, with the run's stdout."""
    tasks = [{"name": f"case {index}", f"capi.rollout.{module}": _with_kubeconfig(params, kubeconfig), "check_mode": check}
             for index, (module, params, check) in enumerate(calls)]
    return _run_tasks(inventory, host, tasks, timeout)


def patch_value(ops, pointer):
    """The value the JSON patch ``ops`` (a module result's ``patch``) sets at ``pointer``: from the add or
    replace of that path or of a parent of it (a missing parent is added with the value inside)."""
    for op in ops:
        if op["op"] not in ("add", "replace"):
            continue
        if pointer == op["path"]:
            return op["value"]
        if pointer.startswith(op["path"] + "/"):
            value = op["value"]
            for key in pointer[len(op["path"]) + 1:].split("/"):
                value = value[key.replace("~1", "/").replace("~0", "~")]
            return value
    raise KeyError(f"{pointer} is not set by {ops}")
