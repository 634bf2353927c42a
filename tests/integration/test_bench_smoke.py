"""Smoke run of the benchmark harness (tests/bench, `make bench-smoke`): the smallest sizes, once each.

Checks that the harness produced every table with every column and plausible figures, and that the request
counts it reports are what the kube-apiserver audit logs say: the logs stay in the fleets' state directories after
the fleets are stopped, and every request of the rollout operator's user in them was sent by a measured command.
No timing is asserted (figures belong in docs/performance.md).
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "tests" / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import bench  # noqa: E402  (tests/bench on sys.path)

pytestmark = [pytest.mark.needs_controller, pytest.mark.xdist_group("bench-smoke")]

TABLES = ("info", "restart", "wait", "plan", "scaleout", "refresh")


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    docs = out / "performance.md"
    shutil.copy(REPO / "docs" / "performance.md", docs)
    proc = subprocess.run([sys.executable, str(BENCH / "bench.py"), "--smoke", "--out", str(out), "--docs", str(docs)],
                          cwd=str(REPO), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=1800,
                          check=False)
    assert proc.returncode == 0, proc.stdout[-8000:]
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return {"out": out, "results": results, "docs": docs.read_text(encoding="utf-8"), "stdout": proc.stdout}


def _tables(markdown):
    """Markdown tables by their bench section name, as lists of rows (lists of cells), header first."""
    tables = {}
    for name in TABLES:
        begin, end = f"<!-- bench:begin {name} -->", f"<!-- bench:end {name} -->"
        assert begin in markdown and end in markdown, name
        body = markdown.split(begin, 1)[1].split(end, 1)[0]
        rows = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in body.strip().splitlines()]
        tables[name] = [row for row in rows if set("".join(row)) != {"-"}]
    return tables


def _expected_tools(results):
    kubectl = "kubectl" in results
    return {
        "info": {"capi.rollout", "kubernetes.core k8s_info"} | ({"kubectl get"} if kubectl else set()),
        "restart": {"capi.rollout", "kubernetes.core k8s patch loop"} | ({"kubectl patch loop"} if kubectl else set()),
        "wait": {"capi.rollout restart wait", "kubernetes.core wait_condition", "until-loop (k8s_info, 2 s)"}
        | ({"kubectl wait"} if kubectl else set()),
    }


def test_every_table_has_every_column_and_a_row_per_tool(smoke):
    tables = _tables(smoke["docs"])
    columns = {"info": bench.TOOL_COLUMNS, "restart": bench.TOOL_COLUMNS, "wait": bench.WAIT_COLUMNS,
               "plan": bench.FLEET_COLUMNS, "scaleout": bench.FLEET_COLUMNS, "refresh": bench.REFRESH_COLUMNS}
    for name, rows in tables.items():
        assert rows[0] == columns[name], (name, rows[0])
        assert len(rows) > 1, f"{name}: no rows"
        for row in rows[1:]:
            assert len(row) == len(columns[name]) and all(row), (name, row)
    for group, tools in _expected_tools(smoke["results"]).items():
        shown = {row[0].rsplit(" (", 1)[0] for row in tables[group][1:]}
        assert shown == tools, (group, shown)
    # the same tables in the harness's own output
    assert (smoke["out"] / "tables.md").read_text(encoding="utf-8").count("| --- |") >= len(TABLES)
    assert "bench:begin environment" in smoke["docs"] and "API servers" in smoke["docs"]


def test_figures_are_plausible(smoke):
    scenarios = smoke["results"]["scenarios"]
    groups = {entry["group"] for entry in scenarios}
    assert groups == set(TABLES), groups
    for entry in scenarios:
        what = f"{entry['group']} {entry['tool']} {entry['size']}"
        assert entry["runs"] == 1 and len(entry["raw"]) == 1, what
        for run in entry["raw"]:
            assert run["rc"] == 0, what
            assert run["wall"] > 0 and run["cpu"] > 0 and run["maxrss_mib"] > 10, (what, run)
            assert run["requests"] > 0, what
            assert run["end"] > run["start"], what
        if entry["group"] == "wait":
            # the watcher saw the restart finish after the command started: a rollout really happened
            assert all(run["completed_after"] > 0 for run in entry["raw"]), what
    refresh = next(e for e in scenarios if e["group"] == "refresh")
    # the refresh waited for real rollouts (from its report), and the rest of its time is the overhead
    assert 0 < refresh["rollout_s"] < refresh["wall"] and refresh["overhead_s"] == refresh["wall"] - refresh["rollout_s"], refresh
    plan = next(e for e in scenarios if e["group"] == "plan")
    assert (plan["hosts"], plan["servers"], plan["mds"]) == (1, 1, 10)
    shared = next(e for e in scenarios if e["group"] == "scaleout")
    # two management clusters as two inventory hosts on one API server, each with its own namespace
    assert (shared["hosts"], shared["servers"], shared["mds"], shared["forks"]) == (2, 1, 6, 1)


def test_request_counts_are_what_the_audit_logs_say(smoke):
    """Per command, the count is the number of audit events in its window; over a fleet's whole life, the rollout
    operator sent exactly the requests the harness attributed to the commands run on that fleet."""
    from capisim.audit import AuditLog

    results = smoke["results"]
    per_fleet = {}
    for entry in results["scenarios"]:
        fleet = "bench-micro" if entry["group"] in ("info", "restart", "wait") else \
            f"bench-{entry['group']}-{entry['size']}"
        for run in entry["raw"]:
            assert run["requests"] == len(run["request_shape"])
            per_fleet[fleet] = per_fleet.get(fleet, 0) + run["requests"]
    for fleet, counted in per_fleet.items():
        logs = sorted((smoke["out"] / "state" / fleet).glob("*/audit.log"))
        assert logs, fleet
        events = []
        for log in logs:
            events.extend(json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip())
        assert len(AuditLog(events).requests(user="rollout-operator")) == counted, fleet
    # our info is the documented 4 requests whatever the number of objects (docs/performance.md, Modules)
    info = next(e for e in results["scenarios"] if e["group"] == "info" and e["tool"] == "capi.rollout")
    assert [tuple(x) for x in info["raw"][0]["request_shape"]] == [
        ("get", "/apis"), ("list", "machinedeployments"), ("get", "clusters"), ("list", "machinesets")]
    # one restart call: discovery, one list, the Cluster, the MachineSets (a restart now's trigger must be later than
    # their creation), one patch per MachineDeployment
    restart = next(e for e in results["scenarios"] if e["group"] == "restart" and e["tool"] == "capi.rollout")
    assert restart["requests"] == 4 + 3


def test_no_api_server_of_the_smoke_run_is_left(smoke):
    for info in (smoke["out"] / "state").glob("*/*/cluster.json"):
        pids = json.loads(info.read_text(encoding="utf-8")).get("pids", {})
        for role, pid in pids.items():
            cmdline = Path(f"/proc/{pid}/cmdline")
            alive = cmdline.exists() and str(info.parent) in cmdline.read_bytes().decode("utf-8", "replace")
            assert not alive, f"{info.parent.name}: {role} {pid} still runs"
