"""Bad input to every module option and every playbook variable, as operators and AWX surveys type it (the cases are
in bad_inputs.py; tests/unit/plugins/test_bad_input_coverage.py checks that every option and variable has one): each
fails with a clear error (the reason, the option or variable and the value given), and nothing is written by anyone
- read from the audit log, with positive controls that the calls reached the API server and that the log sees
writes. Two ansible-playbook runs per CAPI version: one over the module cases (the checks of core.settings, made before
any request, on the newest release only), one over the playbook's variables.

The end-to-end runs of playbooks/hardware_refresh.yml with bad variables and the role's settings are in
test_hardware_refresh.py.
"""

import json
import os
import subprocess
import tempfile
from pathlib import Path

import pytest
import yaml

from bad_inputs import BAD, MODULE_CASES, PLAYBOOK_CASES, GOOD
from conftest import NEWEST_RELEASE
from playbook import ANSIBLE_PLAYBOOK, REPO, run_modules

pytestmark = pytest.mark.needs_controller


def _texts(texts):
    return (texts,) if isinstance(texts, str) else tuple(texts)


def test_bad_input_to_every_module_option_gets_a_clear_error_and_nothing_is_written(capi):
    viewer = str(capi.mgmt.kubeconfig("viewer"))
    # the checks of core.settings run before any request, the same for every release: on the newest release's fleet
    cases = [case for case in MODULE_CASES if capi.capi_version == NEWEST_RELEASE or case[3] != BAD]
    calls = [(module, {key: (viewer if value == "VIEWER" else value) for key, value in params.items()}, check)
             for module, params, check, _reason, _texts in cases]
    mark = capi.mark()
    results = run_modules(capi.fleet.inventory, capi.host, calls)
    problems = []
    for (module, params, check, reason, texts), res in zip(cases, results):
        label = f"{module} {str(params)[:200]}{' (check mode)' if check else ''}"
        msg = str(res.get("msg") or "")
        missing = [text for text in _texts(texts) if text.lower() not in msg.lower()]
        if not res.failed:
            problems.append(f"{label}: did not fail: {str(res)[:500]}")
        elif reason is not None and res.get("reason") != reason:
            problems.append(f"{label}: reason {res.get('reason')!r}, expected {reason!r}: {msg[:500]}")
        elif missing:
            problems.append(f"{label}: message does not name {missing}: {msg[:500]}")
        elif "Traceback" in msg or "exception" in res and "Traceback" in str(res.get("exception")):
            problems.append(f"{label}: an uncaught exception: {msg[:500]}")
    assert not problems, f"{len(problems)} of {len(cases)} cases:\n" + "\n".join(problems)
    log = capi.mgmt.audit_log(since=mark)
    # the operator's bad input is refused before any write is sent; the viewer's real writes are sent and
    # refused by RBAC (403: it is the API server that knows the permissions), never accepted
    operator = log.writes(user="rollout-operator")
    assert operator == [], f"rollout-operator wrote: {[(e['verb'], e['requestURI']) for e in operator]}"
    viewer_codes = [(e["verb"], (e.get("responseStatus") or {}).get("code")) for e in log.writes(user="viewer")]
    assert viewer_codes and all(code == 403 for _verb, code in viewer_codes), viewer_codes
    # positive controls: both users' calls reached the API server, and the refused dry runs were sent
    assert log.requests(user="rollout-operator") and log.requests(user="viewer")
    assert log.dry_runs(user="viewer"), "the check-mode calls with the viewer's credentials sent no dry run"
    assert len(MODULE_CASES) >= 150


def _check_task():
    """The first task of playbooks/hardware_refresh.yml: the check of every variable, in the play that runs first."""
    plays = yaml.safe_load((REPO / "playbooks" / "hardware_refresh.yml").read_text(encoding="utf-8"))
    first = plays[0]
    assert first["any_errors_fatal"] and first["tasks"][0]["run_once"], "the check is not the first, fatal task"
    assert "rollout_playbook_errors" in first["tasks"][0]["vars"]["_problems"]
    return first["tasks"][0]


def test_bad_playbook_variables_get_a_clear_error_before_anything_is_read(capi):
    """The playbook's own first task, once per case (its variables as task variables, as a survey's extra variables
    reach it), in one run; then the positive controls: the good variables pass it, and a lease written and released by
    the operator shows in the audit log, which holds no other write."""
    check = _check_task()
    good = dict(GOOD, batch_size="25%", failure_budget_percent="0", soak_seconds=" 60 ", canary="Yes", restart="false",
                not_before="2026-12-01T22:00:00+01:00", not_after="2026-12-02T04:00:00Z", max_in_flight="50%")
    cases = [variables for variables, _texts in PLAYBOOK_CASES] + [good]
    tasks = [dict(check, name=f"case {index}", vars=dict(variables, **check["vars"]), register=f"case_{index}",
                  ignore_errors=True) for index, variables in enumerate(cases)]
    control = {"name": "it-matrix-control", "namespace": "default", "holder": "it-matrix", "kubeconfig": "{{ capi_kubeconfig }}"}
    with tempfile.TemporaryDirectory(prefix="capi-rollout-it-") as tmp:
        out = Path(tmp) / "results.json"
        names = ", ".join(f"case_{index}" for index in range(len(cases)))
        plays = [
            {"name": "the cases", "hosts": capi.host, "gather_facts": False, "tasks": tasks + [
                {"name": "save", "ansible.builtin.copy": {"content": "{{ [" + names + "] | to_json }}", "dest": str(out)}}]},
            {"name": "positive control", "hosts": capi.host, "gather_facts": False, "tasks": [
                {"name": "take", "capi.rollout.capi_rollout_lock": control},
                {"name": "release", "capi.rollout.capi_rollout_lock": dict(control, state="released")}]},
        ]
        playbook = Path(tmp) / "play.yml"
        playbook.write_text(yaml.safe_dump(plays, sort_keys=False), encoding="utf-8")
        mark = capi.mark()
        env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_NOCOLOR="1", ANSIBLE_DEPRECATION_WARNINGS="0")
        proc = subprocess.run([str(ANSIBLE_PLAYBOOK), "-i", str(capi.fleet.inventory), str(playbook)], cwd=str(REPO), env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600, check=False)
        assert out.exists() and proc.returncode == 0, proc.stdout[-6000:]
        results = json.loads(out.read_text(encoding="utf-8"))
    problems = []
    for (variables, texts), res in zip(PLAYBOOK_CASES, results):
        msg = str(res.get("msg") or "")
        missing = [text for text in _texts(texts) if text not in msg]
        if not res.get("failed"):
            problems.append(f"{str(variables)[:200]}: passed the check")
        elif missing or not msg.endswith("nothing was read or changed"):
            problems.append(f"{str(variables)[:200]}: the message does not name {missing}: {msg[:600]}")
    assert not problems, f"{len(problems)} of {len(PLAYBOOK_CASES)} cases:\n" + "\n".join(problems)
    assert not results[-1].get("failed"), f"the good variables were refused: {results[-1].get('msg')}"
    log = capi.mgmt.audit_log(since=mark)
    # the playbook's own writes (the fleet's simulated GitOps reconcilers write as the controller, on their schedule)
    writes = [(e["verb"], e["requestURI"].split("?")[0]) for e in log.writes(user="rollout-operator")]
    assert writes and all(path.endswith(("/leases/it-matrix-control", "/leases")) for _verb, path in writes), writes
    assert len(PLAYBOOK_CASES) >= 80
