"""Helpers for the hardware refresh tests: run the fleet playbooks with ansible-playbook (in the
foreground, or in the background to kill or race them) and read what they did - the report they
wrote, the objects on the management clusters, their Leases and audit logs.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import forkserver
import proctree

REPO = Path(__file__).resolve().parents[2]
ANSIBLE_PLAYBOOK = Path(sys.executable).parent / "ansible-playbook"
FLEET_SPEC = REPO / "tests" / "fleets" / "hardware-refresh.yml"

# Fast settings for 1-2 s provisioning: short soaks and stall detection, frequent polls.
FAST = {
    "soak_seconds": 1,
    "poll_interval": 1,
    "stall_timeout": 30,
    "wait_timeout": 240,
    "lock_duration": 30,
    "failure_budget_percent": 100,
}


def playbook_env():
    # The caller's environment is kept (ANSIBLE_COLLECTIONS_PATH, for example, when set).
    return dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0",
                ANSIBLE_DEPRECATION_WARNINGS="0", ANSIBLE_RETRY_FILES_ENABLED="0", PYTHONUNBUFFERED="1")


def _command(inventory, playbook, extra_vars, check=False, diff=False, limit=None):
    cmd = [str(ANSIBLE_PLAYBOOK), "-i", str(inventory), str(REPO / "playbooks" / playbook), "-e", json.dumps(extra_vars)]
    if check:
        cmd.append("--check")
    if diff:
        cmd.append("--diff")
    if limit:
        cmd += ["--limit", limit]
    return cmd


class PlaybookRun:
    """One finished ansible-playbook run: return code, output and the report it wrote."""

    def __init__(self, rc, stdout, report_dir):
        self.rc = rc
        self.stdout = stdout
        self.report_dir = Path(report_dir)

    @property
    def report(self):
        path = self.report_dir / "report.json"
        if not path.exists():
            raise AssertionError(f"no report.json in {self.report_dir} (rc {self.rc}):\n{self.stdout[-6000:]}")
        return json.loads(path.read_text(encoding="utf-8"))

    def cluster(self, name):
        for entry in self.report["management_clusters"]:
            if entry["name"] == name:
                return entry
        raise AssertionError(f"{name} is not in the report")

    def obj(self, cluster, name):
        for entry in self.cluster(cluster)["objects"]:
            if entry["name"] == name:
                return entry
        raise AssertionError(f"{cluster}: {name} is not in the report")

    def explain(self):
        return f"rc {self.rc}\n{self.stdout[-8000:]}"


def run_playbook(inventory, playbook, extra_vars, report_dir, check=False, diff=False, limit=None, timeout=600, cwd=REPO,
                 env=None):
    """Run a playbook; ``report_dir`` None leaves it to the playbook's default (under ``cwd``); ``env`` is added to
    ansible-playbook's environment (a faked clock, for example)."""
    extra = dict(extra_vars) if report_dir is None else dict(extra_vars, report_dir=str(report_dir))
    with tempfile.TemporaryDirectory(prefix="capi-rollout-it-") as tmp:
        # forked from a process that imported Ansible once (forkserver.py), as the module calls of playbook.py
        returncode, stdout = forkserver.run(_command(inventory, playbook, extra, check, diff, limit), cwd,
                                            dict(playbook_env(), **(env or {})), timeout, Path(tmp) / "output.txt")
    default_dir = Path(cwd) / "report" / str(extra_vars.get("refresh_id", ""))
    return PlaybookRun(returncode, stdout, default_dir if report_dir is None else report_dir)


class Background:
    """ansible-playbook running in its own process group, its output in a file; as a context manager, killed at the end
    of the block when it still runs."""

    def __init__(self, inventory, playbook, extra_vars, report_dir, limit=None, log=None):
        self.report_dir = Path(report_dir)
        self.log = Path(log or (self.report_dir.parent / (self.report_dir.name + ".log")))
        self.log.parent.mkdir(parents=True, exist_ok=True)
        extra = dict(extra_vars, report_dir=str(report_dir))
        self._out = open(self.log, "w", encoding="utf-8")  # pylint: disable=consider-using-with
        self.proc = subprocess.Popen(_command(inventory, playbook, extra, limit=limit), cwd=str(REPO), env=playbook_env(),
                                     stdout=self._out, stderr=subprocess.STDOUT, text=True, start_new_session=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:  # the test failed before the run ended
            self.kill()
        return False

    def output(self):
        if not self._out.closed:
            self._out.flush()
        return self.log.read_text(encoding="utf-8")

    def kill(self):
        """SIGKILL to ansible-playbook and every process under it, as when its machine or container dies: nothing gets
        to clean up (proctree.kill_tree)."""
        proctree.kill_tree(self.proc.pid)
        self.proc.wait(timeout=30)
        self._out.close()

    def wait(self, timeout=600):
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"ansible-playbook still running after {timeout}s:\n{self.output()[-6000:]}")
        self._out.close()
        return PlaybookRun(rc, self.log.read_text(encoding="utf-8"), self.report_dir)


class Mgmt:
    """One management cluster of the test fleet, read as admin."""

    def __init__(self, handle):
        self.handle = handle
        self.name = handle.name
        self.version = handle.api_version
        self.admin = handle.api("admin")

    def path(self, kind, namespace="default", name=None):
        from capisim.kubeapi import resource_path
        from capisim.objects import KINDS
        group, plural = KINDS[kind]
        return resource_path(group, self.version if group else "v1", plural, namespace, name)

    def get(self, kind, name, namespace="default"):
        return self.admin.get(self.path(kind, namespace, name))

    def md(self, name, namespace="default"):
        return self.get("MachineDeployment", name, namespace)

    def infra_template(self, kind, name, namespace="default"):
        obj = self.get(kind, name, namespace)
        spec = obj["spec"]
        if kind == "MachineDeployment":
            return spec["template"]["spec"]["infrastructureRef"]["name"]
        template = spec.get("machineTemplate") or {}
        ref = template.get("infrastructureRef") or (template.get("spec") or {}).get("infrastructureRef")
        return ref["name"]

    def revision(self, name, namespace="default"):
        return int(self.md(name, namespace)["metadata"]["annotations"]["machinedeployment.clusters.x-k8s.io/revision"])

    def history(self, kind, name, namespace="default"):
        raw = (self.get(kind, name, namespace)["metadata"].get("annotations") or {}).get("rollout.capi-rollout.dev/history")
        return json.loads(raw) if raw else []

    def last_rollout(self, kind, name, namespace="default"):
        raw = (self.get(kind, name, namespace)["metadata"].get("annotations") or {}).get("rollout.capi-rollout.dev/last")
        return json.loads(raw) if raw else {}

    def lease(self, name="capi-rollout-lock", namespace="default"):
        from capisim.kubeapi import ApiError, resource_path
        try:
            return self.admin.get(resource_path("coordination.k8s.io", "v1", "leases", namespace, name))
        except ApiError as err:
            if err.status == 404:
                return None
            raise

    def lease_holder(self):
        lease = self.lease()
        return ((lease or {}).get("spec") or {}).get("holderIdentity")

    def templates(self, namespace="default"):
        items = self.admin.list(self.path("DockerMachineTemplate", namespace))["items"]
        return {item["metadata"]["name"]: item for item in items}

    # ----- audit log -----
    def mark(self):
        return self.handle.audit_mark()

    def writes(self, mark, user="rollout-operator"):
        return self.handle.audit_log(since=mark).writes(user=user)

    def requests(self, mark, user="rollout-operator"):
        return self.handle.audit_log(since=mark).requests(user=user)

    def machine_set_creates(self, mark, md_name):
        pattern = re.compile(rf"^{re.escape(md_name)}-[a-z0-9]{{5}}$")
        events = self.handle.audit_log(since=mark).requests(user="capi-controller-manager", verbs=["create"],
                                                            resource="machinesets")
        return [e["objectRef"].get("name") for e in events
                if pattern.match(e["objectRef"].get("name") or "") and (e.get("responseStatus") or {}).get("code") == 201]

    def switches(self, mark, kind_plural, name, codes=(200,)):
        """PATCH requests of the rollout operator to one object (each template switch or undo is one) answered with one
        of ``codes`` (None: every one sent)."""
        events = [e for e in self.handle.audit_log(since=mark).writes(user="rollout-operator")
                  if e.get("verb") == "patch" and e.get("objectRef", {}).get("resource") == kind_plural]
        return [e for e in events if e["objectRef"].get("name") == name
                and (codes is None or (e.get("responseStatus") or {}).get("code") in codes)]
