"""The harness that runs the module calls (playbook.py, forkserver.py): a run forked from the server is the same
ansible-playbook run as one exec'd, a run whose environment the server's import could not have read is exec'd, and a
run past its timeout is killed while the server goes on serving. No fleet: the tasks run on localhost."""

import subprocess

import pytest

import os

from forkserver import SERVERS
from playbook import ANSIBLE_PLAYBOOK, REPO, _run_tasks

INVENTORY = "localhost,"
FACTS = {"name": "facts", "ansible.builtin.set_fact": {
    "forks": "{{ ansible_forks }}", "tmp": "{{ lookup('ansible.builtin.config', 'DEFAULT_LOCAL_TMP') | dirname }}", "python": "{{ ansible_playbook_python }}",
    "results_file": "{{ lookup('ansible.builtin.env', 'CAPI_ROLLOUT_IT_RESULTS') }}"}}


def _facts(result):
    facts = dict(result["ansible_facts"])
    # each run writes its results to a file of its own: the per-run environment reached the run
    assert facts.pop("results_file").endswith("/results.json")
    return facts


def test_a_forked_run_registers_what_an_exec_d_run_registers(monkeypatch):
    before = SERVERS.forked
    forked = _run_tasks(INVENTORY, "localhost", [FACTS, dict(FACTS, check_mode=True)], timeout=120)
    assert SERVERS.forked == before + 1, "the run was not forked from the server"
    monkeypatch.setenv("CAPI_ROLLOUT_IT_FORK", "0")
    execd = _run_tasks(INVENTORY, "localhost", [FACTS, dict(FACTS, check_mode=True)], timeout=120)
    assert SERVERS.forked == before + 1
    assert [_facts(result) for result in forked] == [_facts(result) for result in execd]
    assert "PLAY RECAP" in forked[0].stdout and "localhost" in forked[0].stdout


def _server(**extra):
    """The pid of the server for playbook.py's run environment (with ``extra``)."""
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_NOCOLOR="1", ANSIBLE_DEPRECATION_WARNINGS="0",
               ANSIBLE_CALLBACK_PLUGINS=str(REPO / "tests" / "integration" / "callback_plugins"),
               ANSIBLE_CALLBACKS_ENABLED="registered_results", **extra)
    return SERVERS.pid(env, ANSIBLE_PLAYBOOK)


def test_a_run_with_other_configuration_is_forked_from_a_server_that_imported_it(monkeypatch):
    # Ansible reads ANSIBLE_* when imported: from the first server, a run would keep its forks (5)
    _run_tasks(INVENTORY, "localhost", [FACTS], timeout=120)
    first = _server()
    assert first is not None
    monkeypatch.setenv("ANSIBLE_FORKS", "7")
    (result,) = _run_tasks(INVENTORY, "localhost", [FACTS], timeout=120)
    assert _facts(result)["forks"] == 7 and _server(ANSIBLE_FORKS="7") not in (None, first)
    monkeypatch.delenv("ANSIBLE_FORKS")
    (result,) = _run_tasks(INVENTORY, "localhost", [FACTS], timeout=120)
    assert _facts(result)["forks"] == 5 and _server() == first  # positive control: the first server, kept


def test_a_run_past_its_timeout_is_killed_and_the_server_serves_on():
    _run_tasks(INVENTORY, "localhost", [FACTS], timeout=120)
    server = _server()
    with pytest.raises(subprocess.TimeoutExpired):
        _run_tasks(INVENTORY, "localhost", [{"ansible.builtin.pause": {"seconds": 60}}], timeout=3)
    before = SERVERS.forked
    (result,) = _run_tasks(INVENTORY, "localhost", [FACTS], timeout=120)
    assert not result.failed and SERVERS.forked == before + 1
    assert _server() == server
