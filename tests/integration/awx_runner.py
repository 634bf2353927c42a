"""AWX jobs without AWX: a private data directory laid out as AWX writes it for a job, run by ansible-runner,
the engine AWX and AAP run every job with (awx/main/tasks/jobs.py, ansible/awx e21dd0a0), here its
``ansible-runner run`` command line.

- ``inventory/hosts``: an executable script printing the inventory as JSON, the hosts sorted by name and, for
  slice n of N, only ``hosts[n-1::N]`` (Inventory.get_script_data / get_sliced_hosts): a slice never sees
  the other slices' hosts.
- ``env/extravars``: the survey answers (text, as surveys give them) and AWX's meta variables
  (``awx_job_id``, ``awx_workflow_job_id``, ...; each also as ``tower_*``), plus, for a workflow node, the
  artifacts of the nodes before it (WorkflowJobNode.get_job_kwargs: artifacts first, workflow variables win).
- ``env/envvars``: what the credentials inject (``K8S_AUTH_KUBECONFIG`` from the custom credential type of
  docs/awx.md) and AWX's job environment; ``env/cmdline``: AWX's ansible-playbook options (``-u``, ``--forks``,
  ``--check`` for the Check job type, ``-l`` for a limit).
- ``project/``: the project of docs/awx.md section 2, one wrapper playbook per collection playbook.

AWX records a job's artifacts (set_stats) from the ``artifact_data`` of its ``playbook_on_stats`` event
(awx/main/tasks/callback.py); here they are read from the event files ansible-runner writes to
``artifacts/<ident>/job_events/``.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import yaml
from capisim.cluster import kubectl_binary

import proctree

REPO = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
PLAYBOOKS = ("hardware_refresh", "merge_reports")


def operator_kubeconfig(fleet, path):
    """One kubeconfig with a context per management cluster (named after it) for the rollout-operator: what the
    'CAPI management clusters' credential type of docs/awx.md holds, made as that page says with real kubectl v1.20.2.

    It starts from kubeconfigs as a ServiceAccount's are often handed out, every one with the same cluster, user and
    context names; ``docs/examples/name-kubeconfig.sh`` names each entry after its management cluster, then
    ``kubectl config view --flatten`` merges them (which keeps the first entry of a name: without the renaming, every
    context would get the first cluster's token)."""
    work = Path(path).parent / "kubeconfigs"
    work.mkdir(exist_ok=True)
    env = dict(os.environ, PATH=f"{Path(kubectl_binary()).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    named = []
    for name, handle in sorted(fleet.clusters.items()):
        own = yaml.safe_load(Path(handle.kubeconfig("rollout-operator")).read_text(encoding="utf-8"))
        alike = {"apiVersion": "v1", "kind": "Config", "current-context": "default",
                 "clusters": [{"name": "kubernetes", "cluster": own["clusters"][0]["cluster"]}],
                 "users": [{"name": "rollout-operator", "user": own["users"][0]["user"]}],
                 "contexts": [{"name": "default", "context": {"cluster": "kubernetes", "user": "rollout-operator"}}]}
        (work / name).write_text(yaml.safe_dump(alike), encoding="utf-8")
        subprocess.run([str(REPO / "docs" / "examples" / "name-kubeconfig.sh"), name, str(work / name),
                        str(work / f"{name}.named")], check=True, env=env)
        named.append(str(work / f"{name}.named"))
    merged = subprocess.run(["kubectl", "config", "view", "--flatten"], check=True, capture_output=True, text=True,
                            env=dict(env, KUBECONFIG=os.pathsep.join(named))).stdout
    Path(path).write_text(merged, encoding="utf-8")
    os.chmod(path, 0o600)
    return Path(path)


def inventory_script_data(fleet_inventory, slice_number=1, slice_count=1):
    """AWX's inventory of the fleet (one host per management cluster, no kubeconfig: the credential brings it),
    for slice ``slice_number`` of ``slice_count``."""
    hosts = yaml.safe_load(Path(fleet_inventory).read_text(encoding="utf-8"))["all"]["children"]["management_clusters"]["hosts"]
    names = sorted(hosts)
    if slice_count > 1:
        names = names[slice_number - 1::slice_count]
    hostvars = {name: {"capi_context": hosts[name]["capi_context"], "capi_namespaces": hosts[name]["capi_namespaces"],
                       "capi_version": hosts[name]["capi_version"]} for name in names}
    return {
        "all": {"children": ["management_clusters", "ungrouped"]},
        "management_clusters": {"hosts": names, "vars": {"ansible_connection": "local",
                                                         "ansible_python_interpreter": "{{ ansible_playbook_python }}"}},
        "_meta": {"hostvars": hostvars},
    }


def meta_vars(job_id, workflow_job_id=None, template="Hardware refresh"):
    """The variables AWX adds to every job's extra vars (UnifiedJob/Job.awx_meta_vars), as awx_* and tower_*."""
    values = {"job_id": job_id, "job_launch_type": "workflow" if workflow_job_id else "manual",
              "job_template_id": 7, "job_template_name": template, "project_revision": "0123456789abcdef",
              "project_scm_branch": "main", "execution_node": "awx-task-0", "inventory_id": 3,
              "inventory_name": "CAPI management clusters", "user_id": 1, "user_name": "admin",
              "user_email": "admin@example.com", "user_first_name": "", "user_last_name": ""}
    if workflow_job_id:
        values.update(workflow_job_id=workflow_job_id, workflow_job_name=template, workflow_job_launch_type="manual")
    return {f"{prefix}_{key}": value for prefix in ("awx", "tower") for key, value in values.items()}


class AwxJob:
    """One job: its private data directory, then its run through ansible-runner."""

    def __init__(self, base, job_id, playbook, inventory, extravars, kubeconfig, check=False, workflow_job_id=None):
        self.job_id = job_id
        self.ident = str(job_id)
        self.dir = Path(base) / f"awx_{job_id}"
        self.playbook = f"{playbook}.yml"
        self.process = self._log = self.exit_code = None
        self._write(inventory, dict(extravars, **meta_vars(job_id, workflow_job_id)), kubeconfig, check)

    def _write(self, inventory, extravars, kubeconfig, check):
        for sub in ("env", "inventory", "project"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        script = self.dir / "inventory" / "hosts"
        script.write_text("#! /usr/bin/env python3\n# -*- coding: utf-8 -*-\nprint(%r)\n" % json.dumps(inventory),
                          encoding="utf-8")
        os.chmod(script, 0o700)
        (self.dir / "env" / "extravars").write_text(json.dumps(extravars, indent=2), encoding="utf-8")
        # AWX's own job environment, then what the credential injects; the collection comes from the execution
        # environment (here: the checkout's collection link), ansible-playbook from its PATH
        envvars = {"JOB_ID": str(self.job_id), "INVENTORY_ID": "3", "PROJECT_REVISION": "0123456789abcdef",
                   "AWX_PRIVATE_DATA_DIR": str(self.dir), "ANSIBLE_RETRY_FILES_ENABLED": "False",
                   "ANSIBLE_HOST_KEY_CHECKING": "False", "ANSIBLE_FORCE_COLOR": "False", "ANSIBLE_NOCOLOR": "1",
                   "ANSIBLE_CONFIG": str(self.dir / "project" / "ansible.cfg"),
                   "ANSIBLE_COLLECTIONS_PATH": str(REPO / ".build"),
                   "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
                   "K8S_AUTH_KUBECONFIG": str(kubeconfig)}
        (self.dir / "env" / "envvars").write_text(json.dumps(envvars, indent=2), encoding="utf-8")
        (self.dir / "env" / "cmdline").write_text(("--check " if check else "") + "-u root --forks=5", encoding="utf-8")
        (self.dir / "project" / "ansible.cfg").write_text("[defaults]\ninterpreter_python = auto_silent\n", encoding="utf-8")
        for name in PLAYBOOKS:
            wrapper = [{"name": f"capi.rollout.{name}", "ansible.builtin.import_playbook": f"capi.rollout.{name}"}]
            (self.dir / "project" / f"{name}.yml").write_text(yaml.safe_dump(wrapper, sort_keys=False), encoding="utf-8")

    def start(self):
        """``ansible-runner run`` in the background, in its own process group."""
        self._log = open(self.dir / "runner.log", "w", encoding="utf-8")  # pylint: disable=consider-using-with
        self.process = subprocess.Popen([str(VENV_BIN / "ansible-runner"), "run", str(self.dir), "-p", self.playbook,
                                         "--ident", self.ident], stdout=self._log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        return self

    def wait(self, timeout=600):
        try:
            self.exit_code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proctree.kill_tree(self.process.pid)  # ansible-runner, ansible-playbook and its detached workers
            self.process.wait(30)
            raise AssertionError(f"AWX job {self.job_id} still running after {timeout}s:\n{self.stdout()[-6000:]}")
        finally:
            self._log.close()
        return self

    def run(self, timeout=600):
        return self.start().wait(timeout)

    # ----- what AWX reads back -----
    @property
    def status(self):
        """ansible-runner's verdict (artifacts/<ident>/status): successful, failed, timeout or canceled."""
        path = self.artifacts_dir / "status"
        return path.read_text(encoding="utf-8").strip() if path.exists() else None

    @property
    def rc(self):
        """ansible-playbook's return code as ansible-runner recorded it (artifacts/<ident>/rc); the CLI exits with it."""
        path = self.artifacts_dir / "rc"
        rc = int(path.read_text(encoding="utf-8").strip()) if path.exists() else None
        assert rc == self.exit_code, f"ansible-runner exited {self.exit_code}, recorded rc {rc}"
        return rc

    @property
    def artifacts_dir(self):
        return self.dir / "artifacts" / self.ident

    def stdout(self):
        path = self.artifacts_dir / "stdout"
        return path.read_text(encoding="utf-8") if path.exists() else ""

    def events(self):
        """The job events ansible-runner wrote (the stream AWX saves), in order."""
        files = sorted((self.artifacts_dir / "job_events").glob("*.json"), key=lambda p: int(p.name.split("-", 1)[0]))
        return [json.loads(f.read_text(encoding="utf-8")) for f in files]

    def artifacts(self):
        """The job's artifacts as AWX records them: the artifact_data of its playbook_on_stats event."""
        stats = [e for e in self.events() if e.get("event") == "playbook_on_stats"]
        if len(stats) != 1:
            raise AssertionError(f"AWX job {self.job_id}: {len(stats)} playbook_on_stats events:\n{self.stdout()[-6000:]}")
        return stats[0]["event_data"].get("artifact_data", {})

    def explain(self):
        return f"AWX job {self.job_id}: status {self.status}, rc {self.rc}\n{self.stdout()[-8000:]}"


def run_concurrently(jobs, timeout=600):
    """Start every job at once (the slices of one sliced job); returns them in the order they finished."""
    for job in jobs:
        job.start()
    deadline, done = time.monotonic() + timeout, []
    while len(done) < len(jobs) and time.monotonic() < deadline:
        done.extend(job for job in jobs if job not in done and job.process.poll() is not None)
        time.sleep(0.5)
    for job in jobs:
        job.wait(max(deadline - time.monotonic(), 1))
    return done + [job for job in jobs if job not in done]


def workflow_artifacts(jobs):
    """What a workflow hands to the node after a sliced job: the artifacts of its slices, merged key by key in the
    order they finished (WorkflowJob.get_effective_artifacts)."""
    merged = {}
    for job in jobs:
        merged.update(job.artifacts())
    return merged
