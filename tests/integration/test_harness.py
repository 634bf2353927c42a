"""The harness that runs the module calls (playbook.py, forkserver.py): a run forked from the server is the same
ansible-playbook run as one exec'd, a run whose environment the server's import could not have read is exec'd, and a
run past its timeout is killed with its task workers while the server goes on serving; and the bytecode cache of the
module runs (tests/ansiballz_cache) serves the same source again and never stale code, as its cache of AnsiballZ
payloads serves the next run and keys by every source a payload holds. No fleet: the tasks run on localhost."""

import base64
import dataclasses
import io
import marshal
import os
import shutil
import subprocess
import sys
import zipfile

import pytest
from capisim import procs
from capisim.polling import wait_for

from forkserver import SERVERS, collection_metadata_parsed_once
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


def test_the_server_parses_a_routing_table_once_and_every_run_gets_a_copy_of_its_own():
    calls = []

    def parse(data, content_id):
        calls.append(content_id)
        return {"plugin_routing": {"modules": {"old": {"redirect": data.decode()}}}}

    parse_once = collection_metadata_parsed_once(parse)
    first = parse_once(b"new", ("ansible.builtin", "runtime.yml"))
    first["plugin_routing"]["modules"]["old"]["redirect"] = "changed by a run"  # ansible-core canonicalizes in place
    assert parse_once(b"new", ("ansible.builtin", "runtime.yml")) == {"plugin_routing": {"modules": {"old": {"redirect": "new"}}}}
    assert parse_once(b"other", ("capi.rollout", "runtime.yml"))["plugin_routing"]["modules"]["old"]["redirect"] == "other"
    assert calls == [("ansible.builtin", "runtime.yml"), ("capi.rollout", "runtime.yml")]


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


def _time_out_a_sleeping_run(tmp_path):
    """A run killed past its timeout takes the processes of its tasks along: they run under a worker in a session of
    its own (ansible-core's WorkerProcess._detach), out of the run's process group."""
    marker = tmp_path / "sleeping"
    sleeper = {"ansible.builtin.shell": f"echo $$ > {marker}.tmp && mv {marker}.tmp {marker} && exec sleep 97",
               "vars": {"ansible_connection": "local", "ansible_python_interpreter": "{{ ansible_playbook_python }}"}}
    with pytest.raises(subprocess.TimeoutExpired):
        _run_tasks(INVENTORY, "localhost", [sleeper], timeout=8)
    assert marker.exists(), "the task had not started: nothing to kill"  # positive control
    pid = int(marker.read_text(encoding="utf-8"))
    wait_for(f"the run's sleep (pid {pid}) to be killed with the run", lambda: not procs.alive(pid), timeout=10)


def test_a_run_past_its_timeout_is_killed_with_its_workers_and_the_server_serves_on(tmp_path):
    _run_tasks(INVENTORY, "localhost", [FACTS], timeout=120)
    server = _server()
    _time_out_a_sleeping_run(tmp_path)
    before = SERVERS.forked
    (result,) = _run_tasks(INVENTORY, "localhost", [FACTS], timeout=120)
    assert not result.failed and SERVERS.forked == before + 1
    assert _server() == server


def test_an_exec_d_run_past_its_timeout_is_killed_with_its_workers(tmp_path, monkeypatch):
    monkeypatch.setenv("CAPI_ROLLOUT_IT_FORK", "0")
    before = SERVERS.forked
    _time_out_a_sleeping_run(tmp_path)
    assert SERVERS.forked == before


def _import_from_zip(tmp_path, name, source, cache):
    """Import module ``cached_mod`` of ``source`` from a new zip ``name`` in a new Python process; returns its VALUE
    and the file name its code carries (what a traceback shows)."""
    archive = tmp_path / name
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr("cached_mod.py", source)
    env = dict(os.environ, PYTHONPATH=str(REPO / "tests" / "ansiballz_cache"))
    env.pop("CAPI_ROLLOUT_BYTECODE_CACHE", None)
    if cache:
        env["CAPI_ROLLOUT_BYTECODE_CACHE"] = str(cache)
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); import cached_mod; "
             "print(cached_mod.VALUE, cached_mod.where.__code__.co_filename)")
    out = subprocess.run([sys.executable, "-c", probe, str(archive)], env=env, capture_output=True, text=True, check=True)
    value, filename = out.stdout.split()
    return int(value), filename


def test_the_bytecode_cache_serves_the_same_source_again_and_never_stale_code(tmp_path):
    cache = tmp_path / "cache"
    source = "VALUE = 1\ndef where():\n    raise RuntimeError\n"
    assert _import_from_zip(tmp_path, "a.zip", source, cache) == (1, str(tmp_path / "a.zip" / "cached_mod.py"))
    (entry,) = cache.iterdir()
    # the entry is what a second process runs: swap its code and the next import of the same source shows it
    entry.write_bytes(marshal.dumps(compile(source.replace("VALUE = 1", "VALUE = 99"), "elsewhere.py", "exec")))
    assert _import_from_zip(tmp_path, "b.zip", source, cache) == (99, str(tmp_path / "b.zip" / "cached_mod.py"))
    # another source is compiled, not taken from the cache; without the variable there is no cache at all
    assert _import_from_zip(tmp_path, "c.zip", source.replace("VALUE = 1", "VALUE = 2"), cache)[0] == 2
    assert len(list(cache.iterdir())) == 2
    assert _import_from_zip(tmp_path, "d.zip", source, None)[0] == 1


MODULE_PAYLOAD = "ansible_collections.capi.rollout.plugins.modules.capi_rollout_info-ZIP_DEFLATED-none"


def _info_of_no_kind(tmp_path, monkeypatch, cache):
    """A run of capi_rollout_info with a kind it has not (it fails on its argument spec: no fleet needed), with the
    payload cache in ``cache`` (None: off); returns the registered result."""
    monkeypatch.setenv("PYTHONPATH", str(REPO / "tests" / "ansiballz_cache"))
    if cache:
        monkeypatch.setenv("CAPI_ROLLOUT_PAYLOAD_CACHE", str(cache))
    else:
        monkeypatch.delenv("CAPI_ROLLOUT_PAYLOAD_CACHE", raising=False)
    local = {"ansible_connection": "local", "ansible_python_interpreter": "{{ ansible_playbook_python }}"}
    task = {"capi.rollout.capi_rollout_info": {"kind": "NoKind"}, "vars": local}
    (result,) = _run_tasks(INVENTORY, "localhost", [task], timeout=120)
    return result


def test_the_payload_cache_serves_the_next_run_the_payload_of_the_first(tmp_path, monkeypatch):
    cache = tmp_path / "payloads"
    first = _info_of_no_kind(tmp_path, monkeypatch, cache)
    assert first.failed and "NoKind" in first["msg"], first  # the module ran (its argument spec spoke)
    (key,) = cache.iterdir()
    entry = key / MODULE_PAYLOAD
    # swap the module in the cached payload: the next run runs what the cache holds, not the source
    # pylint: disable-next=import-outside-toplevel
    from ansible.executor.module_common import _CachedModule
    cached = _CachedModule.load(str(entry))
    swapped = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(base64.b64decode(cached.zip_data))) as source, \
            zipfile.ZipFile(swapped, "w") as target:
        for item in source.infolist():
            data = source.read(item)
            if item.filename.endswith("/modules/capi_rollout_info.py"):
                data = b"import json, sys\nprint(json.dumps({'msg': 'from the cache'}))\nsys.exit(0)\n"
            target.writestr(item, data)
    dataclasses.replace(cached, zip_data=base64.b64encode(swapped.getvalue())).dump(str(entry))
    assert _info_of_no_kind(tmp_path, monkeypatch, cache)["msg"] == "from the cache"
    # positive control: without the variable the run builds its own payload from the source
    assert "NoKind" in _info_of_no_kind(tmp_path, monkeypatch, None)["msg"]


def _payload_link(checkout, cache, collections=None):
    """The directory the payload cache of ``checkout`` (a copy of sitecustomize.py and a plugins tree) links an
    ansible-playbook run's payloads to, in a new Python process started in ``checkout`` (None: no link);
    ``collections``: $ANSIBLE_COLLECTIONS_PATH."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("CAPI_ROLLOUT_PAYLOAD_CACHE", "ANSIBLE_CONFIG", "ANSIBLE_COLLECTIONS_PATH")}
    env["PYTHONPATH"] = str(checkout / "tests" / "ansiballz_cache")
    if cache:
        env["CAPI_ROLLOUT_PAYLOAD_CACHE"] = str(cache)
    if collections:
        env["ANSIBLE_COLLECTIONS_PATH"] = str(collections)
    probe = ("import os, shutil, tempfile, ansible; run = tempfile.mkdtemp(prefix='ansible-local-1'); "
             "link = os.path.join(run, 'ansiballz_cache'); "
             "print(os.readlink(link) if os.path.islink(link) else None); shutil.rmtree(run)")
    out = subprocess.run([sys.executable, "-c", probe], env=env, cwd=str(checkout), capture_output=True, text=True,
                         check=True)
    return out.stdout.strip()


def test_the_payload_cache_keys_by_every_module_and_module_util_source(tmp_path):
    checkout = tmp_path / "checkout"
    (checkout / "tests" / "ansiballz_cache").mkdir(parents=True)
    shutil.copy(REPO / "tests" / "ansiballz_cache" / "sitecustomize.py", checkout / "tests" / "ansiballz_cache")
    util = checkout / "plugins" / "module_utils" / "core" / "view.py"
    util.parent.mkdir(parents=True)
    util.write_text("A = 1\n", encoding="utf-8")
    (checkout / "plugins" / "modules").mkdir()
    (checkout / "plugins" / "modules" / "capi_rollout_info.py").write_text("B = 1\n", encoding="utf-8")
    cache = tmp_path / "payloads"
    first = _payload_link(checkout, cache)
    assert first.startswith(str(cache)) and _payload_link(checkout, cache) == first
    util.write_text("A = 2\n", encoding="utf-8")
    second = _payload_link(checkout, cache)
    assert second.startswith(str(cache)) and second != first
    (checkout / "plugins" / "modules" / "capi_rollout_info.py").write_text("B = 2\n", encoding="utf-8")
    third = _payload_link(checkout, cache)
    assert third not in (first, second)
    (checkout / "plugins" / "filter").mkdir()  # controller-side: never in a payload
    (checkout / "plugins" / "filter" / "report.py").write_text("C = 1\n", encoding="utf-8")
    assert _payload_link(checkout, cache) == third
    assert _payload_link(checkout, None) == "None"
    # a collection path that holds this checkout only keeps the cache; one that holds another collection (whose
    # sources the key does not cover) does not
    linked = tmp_path / "linked" / "ansible_collections" / "capi"
    linked.mkdir(parents=True)
    (linked / "rollout").symlink_to(checkout)
    assert _payload_link(checkout, cache, collections=linked.parents[1]) == third
    other = tmp_path / "other" / "ansible_collections" / "kubernetes" / "core" / "plugins" / "modules"
    other.mkdir(parents=True)
    assert _payload_link(checkout, cache, collections=other.parents[4]) == "None"
