"""`python -m capisim up|status|down`: idempotent up, down stops exactly the recorded processes."""

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from capisim import procs
from capisim.pytest_plugin import controller_enabled

SIM = Path(__file__).resolve().parents[1] / "sim"


def capisim(*args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(SIM), os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, "-m", "capisim", *args], capture_output=True, text=True, env=env, check=False)


def test_invalid_spec_is_refused_with_its_path(tmp_path):
    spec = tmp_path / "fleet.yml"
    spec.write_text(yaml.safe_dump({"management_clusters": [{"name": "m", "capi_version": "v1.99"}]}), encoding="utf-8")
    result = capisim("up", "--fleet", str(spec), "--state", str(tmp_path / "state"))
    assert result.returncode == 1
    assert "management_clusters[0].capi_version: must be one of v1.10, v1.11, v1.12.3, v1.12, v1.13, v1.14" in result.stderr
    assert not (tmp_path / "state").exists()


def test_up_status_down(tmp_path):
    spec, state = tmp_path / "fleet.yml", tmp_path / "state"
    spec.write_text(yaml.safe_dump({"management_clusters": [{"name": "solo", "capi_version": "v1.14", "workload_clusters": [
        {"name": "c1", "kubernetes_version": "v1.31.0", "machine_deployments": [{"name": "md", "replicas": 1}]}]}]}),
        encoding="utf-8")
    mode = [] if controller_enabled() else ["--no-controller"]
    pids = {}
    up = capisim("up", "--fleet", str(spec), "--state", str(state), *mode)
    try:
        assert up.returncode == 0, up.stderr
        pids = json.loads((state / "solo" / "cluster.json").read_text(encoding="utf-8"))["pids"]
        expected = {"etcd", "kube-apiserver", "kube-controller-manager"} | ({"controller"} if not mode else set())
        assert set(pids) == expected
        assert all(procs.alive(pid) for pid in pids.values())
        again = capisim("up", "--fleet", str(spec), "--state", str(state), *mode)
        assert again.returncode == 0 and "already running" in again.stderr
        assert json.loads((state / "solo" / "cluster.json").read_text(encoding="utf-8"))["pids"] == pids
        status = capisim("status", "--state", str(state))
        assert status.returncode == 0 and "default/c1-md" in status.stdout
    finally:
        down = capisim("down", "--state", str(state))
    assert down.returncode == 0, down.stderr
    assert not any(procs.alive(pid) for pid in pids.values())
    assert (state / "solo" / "audit.log").is_file()  # logs are kept
    assert capisim("down", "--state", str(state), "--purge").returncode == 0
    assert not state.exists()
