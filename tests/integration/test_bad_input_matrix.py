"""Bad input to every module, as operators type it: each call fails with a clear error (the reason, and
the object or option it is about), and nothing is written by anyone - read from the audit log, with the
positive control that the calls did reach the API server. One ansible-playbook run per CAPI version.

The role and playbook cases (settings, booleans, revisions, selections) are in test_hardware_refresh.py.
"""

import pytest

from playbook import run_modules

pytestmark = pytest.mark.needs_controller

MISSING_KUBECONFIG = "/nonexistent/kubeconfig"
WRONG_CA = "/etc/ssl/certs/ca-certificates.crt"
MD = {"api_group": "cluster.x-k8s.io", "kind": "MachineDeployment", "name": "wa-md-0"}

# (module, params, check mode, reason or None, text the message must contain)
CASES = [
    # capi_rollout_restart
    ("capi_rollout_restart", {"names": []}, False, "invalid_selection", "names is empty"),
    ("capi_rollout_restart", {"kind": "MachinePool", "name": "wa-md-0"}, False, "invalid_kind", "MachinePool"),
    ("capi_rollout_restart", {"name": "wa-md-0", "after": "tomorrow"}, False, "invalid_after", "tomorrow"),
    ("capi_rollout_restart", {"name": "wa-md-0", "after": "2026-02-30T00:00:00Z"}, False, "invalid_after", "2026-02-30"),
    ("capi_rollout_restart", {"name": "wa-md-0", "after": "9999-12-31T23:00:00-05:00"}, False, "invalid_after", "9999"),
    ("capi_rollout_restart", {"name": "wa-md-0", "infrastructure_ref": {"name": ""}}, False,
     "invalid_infrastructure_ref", "infrastructure_ref"),
    ("capi_rollout_restart", {"name": "wa-md-0", "infrastructure_ref": {"name": "does-not-exist"}}, False,
     "template_not_found", "does-not-exist"),
    ("capi_rollout_restart", {"name": "wa-md-0", "infrastructure_ref": MD}, False, "not_a_template", "MachineTemplate"),
    ("capi_rollout_restart", {"name": "nope"}, False, "not_found", "machinedeployment/default/nope"),
    ("capi_rollout_restart", {"namespace": "no-such-ns", "name": "wa-md-0"}, False, "not_found", "no-such-ns"),
    ("capi_rollout_restart", {"cluster_name": "no-such-cluster"}, False, "not_found", "no-such-cluster"),
    ("capi_rollout_restart", {"name": "wp-md-0"}, False, "cluster_paused", "machinedeployment/default/wp-md-0"),
    ("capi_rollout_restart", {"name": "wt-md-0", "infrastructure_ref": {"name": "wt-md-0-other"}}, False,
     "topology_owned", "machinedeployment/default/wt-md-0"),
    ("capi_rollout_restart", {"name": "wa-md-0", "history_limit": -1}, False, None, "history_limit"),
    ("capi_rollout_restart", {"name": "wa-md-0", "wait": True, "wait_timeout": 0}, False, "invalid_setting",
     "wait_timeout must be a whole number >= 1"),
    ("capi_rollout_restart", {"label_selectors": ["=bad"]}, False, "invalid_label_selector", "=bad"),
    ("capi_rollout_restart", {"name": "wa-md-0", "rollout_id": "has spaces"}, False, "invalid_setting", "rollout_id"),
    ("capi_rollout_restart", {"name": "wa-md-0", "wait": True, "stall_timeout": 0}, False, "invalid_setting",
     "stall_timeout must be a whole number >= 1"),
    ("capi_rollout_restart", {"name": "wa-md-0", "kubeconfig": MISSING_KUBECONFIG}, False, "connection_config",
     MISSING_KUBECONFIG),
    ("capi_rollout_restart", {"name": "wa-md-0", "host": "https://127.0.0.1:1", "api_key": "not-a-token"}, False,
     "unreachable", "127.0.0.1:1"),
    ("capi_rollout_restart", {"name": "wa-md-0", "ca_cert": WRONG_CA}, False, "tls", "certificate"),
    ("capi_rollout_restart", {"name": "wa-md-0", "kubeconfig": "VIEWER"}, False, "forbidden", "cannot patch"),
    ("capi_rollout_restart", {"name": "wa-md-0", "kubeconfig": "VIEWER"}, True, "forbidden", "cannot patch"),
    ("capi_rollout_restart", {"name": "nope"}, True, "not_found", "machinedeployment/default/nope"),
    ("capi_rollout_restart", {"kind": "KubeadmControlPlane", "name": "nope"}, False, "not_found", "nope"),
    ("capi_rollout_restart", {"name": "wa-md-0", "after": "tomorrow"}, True, "invalid_after", "tomorrow"),
    ("capi_rollout_restart", {"name": "wa-md-0", "field_owners": "maybe"}, False, None, "field_owners"),
    # capi_rollout_pause
    ("capi_rollout_pause", {"name": "wc-md-0", "paused": "maybe"}, False, None, "paused"),
    ("capi_rollout_pause", {"name": "nope", "paused": True}, False, "not_found", "machinedeployment/default/nope"),
    ("capi_rollout_pause", {"names": [], "paused": True}, False, "invalid_selection", "names is empty"),
    ("capi_rollout_pause", {"kind": "MachinePool", "name": "x", "paused": True}, False, "invalid_kind", "MachinePool"),
    ("capi_rollout_pause", {"name": "wc-md-0", "paused": True, "kubeconfig": "VIEWER"}, False, "forbidden", "cannot patch"),
    ("capi_rollout_pause", {"name": "wc-md-0", "paused": True, "kubeconfig": "VIEWER"}, True, "forbidden", "cannot patch"),
    # capi_rollout_undo
    ("capi_rollout_undo", {"kind": "KubeadmControlPlane", "name": "wa-control-plane"}, False, "control_plane_undo",
     "kubeadmcontrolplane/default/wa-control-plane"),
    ("capi_rollout_undo", {"name": "nope"}, False, "not_found", "machinedeployment/default/nope"),
    ("capi_rollout_undo", {"name": "wb-md-1", "to_revision": -5}, False, None, "cannot be negative: -5"),
    ("capi_rollout_undo", {"name": "wb-md-1", "to_revision": 999}, False, None, "999"),
    ("capi_rollout_undo", {"name": "wb-md-1", "to_revision": "two"}, False, None, "to_revision"),
    ("capi_rollout_undo", {"name": "wb-md-1", "kubeconfig": "VIEWER"}, False, None, "machinedeployment/default/wb-md-1"),
    # capi_machine_template
    ("capi_machine_template", {"from_object": {"name": "nope"}, "overrides": {"customImage": "x:1"}}, False,
     "not_found", "nope"),
    ("capi_machine_template", {"source": {"name": "nope", "kind": "DockerMachineTemplate"}}, False, "source_not_found",
     "dockermachinetemplate/default/nope"),
    ("capi_machine_template", {"source": {"name": "x", "kind": "AWSMachineTemplate"}}, False, "kind_not_served",
     "AWSMachineTemplate"),
    ("capi_machine_template", {"from_object": {"name": "wb-md-0"}, "name": "Bad_Name", "overrides": {"customImage": "x:1"}},
     False, "invalid_name", "Bad_Name"),
    ("capi_machine_template", {"from_object": {"name": "wb-md-0"}, "overrides": "not a mapping"}, False, None, "overrides"),
    ("capi_machine_template", {"from_object": {"name": "wb-md-0"}, "overrides": {"customImag": "x:1"}}, False,
     "pruned_fields", "spec.template.spec.customImag"),
    ("capi_machine_template", {"from_object": {"name": "wb-md-0"}, "overrides": {"customImag": "x:1"}}, True,
     "pruned_fields", "spec.template.spec.customImag"),
    ("capi_machine_template", {"from_object": {"name": "wt-md-0"}, "overrides": {"customImage": "x:1"}}, False,
     "topology_owned", "topology"),
    ("capi_machine_template", {"from_object": {"name": "wb-md-0"}, "overrides": {"customImage": "x:1"},
                               "labels": {"bad key!": "x"}}, False, None, "bad key!"),
    ("capi_machine_template", {"from_object": {"name": "wb-md-0", "kind": "MachinePool"}}, False, None, "MachinePool"),
    ("capi_machine_template", {"from_object": {"name": "wb-md-0"}, "overrides": {"customImage": "x:1"},
                               "kubeconfig": "VIEWER"}, False, "forbidden", "cannot create"),
    # capi_rollout_lock
    ("capi_rollout_lock", {"name": "it-matrix", "namespace": "default", "holder": "  "}, False, "invalid_holder", "holder"),
    ("capi_rollout_lock", {"name": "it-matrix", "namespace": "default", "holder": "me", "lease_duration_seconds": 0},
     False, "invalid_duration", "0"),
    ("capi_rollout_lock", {"name": "it-matrix", "namespace": "no-such-ns", "holder": "me"}, False, "not_found", "no-such-ns"),
    ("capi_rollout_lock", {"name": "it-matrix", "namespace": "default", "holder": "me", "state": "maybe"}, False, None,
     "state"),
    ("capi_rollout_lock", {"name": "it-matrix", "namespace": "default", "holder": "me", "kubeconfig": "VIEWER"}, False,
     "forbidden", "leases"),
    ("capi_rollout_lock", {"name": "it-matrix", "namespace": "default", "holder": "me", "kubeconfig": "VIEWER"}, True,
     "forbidden", "leases"),
    # capi_rollout_wait
    ("capi_rollout_wait", {"objects": []}, False, "invalid_setting", "objects is empty"),
    ("capi_rollout_wait", {"objects": [{"kind": "MachinePool", "name": "x"}]}, False, None, "MachinePool"),
    ("capi_rollout_wait", {"objects": [{"name": "nope"}]}, False, None, "nope"),
    ("capi_rollout_wait", {"objects": [{"name": "wa-md-0"}], "wait_timeout": -1}, False, "invalid_setting", "wait_timeout"),
    ("capi_rollout_wait", {"objects": [{"name": "wa-md-0"}], "stall_timeout": 0}, False, "invalid_setting", "stall_timeout"),
    ("capi_rollout_wait", {"objects": [{"name": "wa-md-0"}], "soak_seconds": -5}, False, "invalid_setting", "soak_seconds"),
    # capi_rollout_info
    ("capi_rollout_info", {"kind": "Bogus"}, False, "invalid_kind", "Bogus"),
    ("capi_rollout_info", {"label_selectors": ["a in ("]}, False, "invalid_label_selector", "a in ("),
    ("capi_rollout_info", {"kubeconfig": MISSING_KUBECONFIG}, False, "connection_config", MISSING_KUBECONFIG),
    ("capi_rollout_info", {"context": "no-such-context"}, False, None, "no-such-context"),
    ("capi_rollout_info", {"name": "wb-md-1", "revision": -1}, False, None, "revision"),
]


def test_bad_input_gets_a_clear_error_and_nothing_is_written(capi):
    viewer = str(capi.mgmt.kubeconfig("viewer"))
    calls = [(module, {key: (viewer if value == "VIEWER" else value) for key, value in params.items()}, check)
             for module, params, check, _reason, _text in CASES]
    mark = capi.mark()
    results = run_modules(capi.fleet.inventory, capi.host, calls)
    problems = []
    for (module, params, check, reason, text), res in zip(CASES, results):
        label = f"{module} {params}{' (check mode)' if check else ''}"
        msg = str(res.get("msg") or "")
        if not res.failed:
            problems.append(f"{label}: did not fail: {res}")
        elif reason is not None and res.get("reason") != reason:
            problems.append(f"{label}: reason {res.get('reason')!r}, expected {reason!r}: {msg}")
        elif text.lower() not in msg.lower():
            problems.append(f"{label}: message does not name {text!r}: {msg}")
        elif "Traceback" in msg or "exception" in res and "Traceback" in str(res.get("exception")):
            problems.append(f"{label}: an uncaught exception: {msg}")
    assert not problems, "\n".join(problems)
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
    assert len(CASES) >= 60
