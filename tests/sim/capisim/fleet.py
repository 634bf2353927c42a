"""A fleet: several management clusters started in parallel, populated, and waited for.

State directory layout::

    <state>/fleet.json            the validated spec (so down/status need only --state)
    <state>/inventory.yml         Ansible inventory: one host per management cluster
    <state>/<mgmt>/...            one management cluster (see cluster.py), plus controller.log

``up`` is idempotent-ish: management clusters whose recorded processes all run are kept as they
are; the others are (re)started from scratch. When ``up`` fails, every process it started is
stopped again and the state directory is kept for the logs.
"""

import importlib.util
import json
import os
import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

from . import crds, procs, readiness
from .cluster import ManagementCluster, kube_bin_dir
from .fleetspec import load_fleet
from .kubeapi import ApiError, resource_path
from .objects import KINDS, cluster_class_objects, collection_path, in_place_extension_config, object_path, workload_objects
from .progress import progress

SIM_DIR = Path(__file__).resolve().parents[1]  # tests/sim, put on the controller's PYTHONPATH
ROLLOUT_KINDS = ("MachineDeployment", "KubeadmControlPlane")


def controller_available():
    """True when the CAPI controller simulator package (capisim.controller) exists."""
    return importlib.util.find_spec("capisim.controller") is not None


def _in_place(mgmt):
    # fleet.json of a fleet started before the feature existed has no "features"
    return "InPlaceUpdates" in (mgmt.get("features") or [])


class Fleet:
    """The management clusters of one fleet spec (as returned by fleetspec.load_fleet) under one state directory."""

    def __init__(self, spec, state_dir):
        self.spec = spec
        self.state = Path(state_dir).resolve()
        self.clusters = {m["name"]: ManagementCluster(m["name"], self.state, m["capi_version"],
                                                      bool(m.get("cluster_classes")), _in_place(m))
                         for m in self.spec["management_clusters"]}

    @classmethod
    def load(cls, spec, state_dir):
        """A fleet from a spec dict or YAML file, validated."""
        return cls(load_fleet(spec), state_dir)

    @classmethod
    def from_state(cls, state_dir):
        """The fleet recorded by a previous `up` in state_dir."""
        spec_file = Path(state_dir) / "fleet.json"
        if not spec_file.is_file():
            raise FileNotFoundError(f"{state_dir}: no fleet.json, not a capisim state directory (nothing was started here)")
        return cls(json.loads(spec_file.read_text(encoding="utf-8")), state_dir)

    @property
    def inventory(self):
        return self.state / "inventory.yml"

    # ----- up -----
    def up(self, controller=True, timeout=180.0):
        """Start what is not running, create the CAPI objects, wait for every rollout to be complete."""
        started = time.monotonic()
        if controller and not controller_available():
            raise RuntimeError("capisim.controller (the CAPI controller simulator) is not installed; "
                               "use --no-controller to start the management clusters without it")
        self.state.mkdir(parents=True, exist_ok=True)
        (self.state / "fleet.json").write_text(json.dumps(self.spec, indent=2) + "\n", encoding="utf-8")
        to_start = [c for c in self.clusters.values() if not c.running()]
        for cluster in self.clusters.values():
            if cluster not in to_start:
                progress(f"{cluster.name}: already running ({cluster.info()['server']}), kept")
                if controller and "controller" not in cluster.pids():  # it was started with --no-controller
                    self._start_controller(cluster)
        try:
            if to_start:
                bins = kube_bin_dir()
                progress(f"starting {len(to_start)} management cluster(s): {', '.join(c.name for c in to_start)}")
                with ThreadPoolExecutor(len(to_start)) as pool:
                    list(pool.map(lambda c: self._bring_up(c, bins, controller), to_start))
            if controller:
                self.wait_ready(timeout - (time.monotonic() - started))
            for cluster in to_start:
                self._pause_clusters(cluster)
        except BaseException:
            progress("up failed: stopping the processes it started (logs stay in the state directory)")
            for cluster in to_start:
                cluster.stop()
            raise
        self._write_inventory()
        progress(f"fleet up in {time.monotonic() - started:.1f}s; inventory: {self.inventory}")

    def _mgmt_spec(self, name):
        return next(m for m in self.spec["management_clusters"] if m["name"] == name)

    def _bring_up(self, cluster, bins, controller):
        cluster.stop()  # leftovers of a partly dead earlier run
        cluster.start(bins)
        if controller:
            self._start_controller(cluster)
        admin = cluster.api("admin")
        mgmt = self._mgmt_spec(cluster.name)
        wcs = mgmt["workload_clusters"]
        version = crds.api_version(cluster.capi_version)
        objects = [obj for cc in mgmt.get("cluster_classes") or [] for obj in cluster_class_objects(cc, version)]
        objects += [obj for wc in wcs for obj in workload_objects(wc, version)]
        count = 0
        for obj in objects:
            try:
                admin.create(collection_path(obj), obj)
                count += 1
            except ApiError as err:
                if err.status != 409:  # a namespace shared by several workload clusters
                    raise
        progress(f"{cluster.name}: created {count} objects for {len(wcs)} workload cluster(s)")
        if cluster.in_place:
            self._register_extension(admin)

    @staticmethod
    def _register_extension(admin):
        """The ExtensionConfig of the update extension, with the handlers its discovery reports in status."""
        obj, status = in_place_extension_config()
        created = admin.create(collection_path(obj), obj)
        created["status"] = status
        admin.replace_status(object_path(created), created)

    def _pause_clusters(self, cluster):
        """Set Cluster.spec.paused where the spec asks for it, now that the machines exist."""
        admin = cluster.api("admin")
        for wc in self._mgmt_spec(cluster.name)["workload_clusters"]:
            if wc["paused"]:
                group, plural = KINDS["Cluster"]
                path = resource_path(group, crds.api_version(cluster.capi_version), plural, wc["namespace"], wc["name"])
                admin.patch_merge(path, {"spec": {"paused": True}})
                progress(f"{cluster.name}: paused Cluster {wc['namespace']}/{wc['name']}")

    def _start_controller(self, cluster):
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SIM_DIR), env.get("PYTHONPATH")) if p)
        argv = [sys.executable, "-m", "capisim.controller", "--kubeconfig", str(cluster.kubeconfig("capi-controller-manager")),
                "--capi-version", cluster.capi_version, "--log", str(cluster.dir / "controller.log"),
                "--sync-period", str(self.spec["defaults"]["sync_period_seconds"])]
        if cluster.topology:
            argv.append("--topology")
        mgmt = self._mgmt_spec(cluster.name)
        if _in_place(mgmt):
            argv += ["--in-place-accepts", ",".join(mgmt["in_place_accepts"]),
                     "--in-place-seconds", str(mgmt["in_place_seconds"])]
        cluster.record_process("controller", procs.spawn(argv, cluster.dir / "controller.out", env=env))

    def rollout_objects(self, cluster):
        """All MachineDeployments and KubeadmControlPlanes of a management cluster (as admin)."""
        admin = cluster.api("admin")
        version = crds.api_version(cluster.capi_version)
        items = []
        for kind in ROLLOUT_KINDS:
            group, plural = KINDS[kind]
            items.extend(admin.list(resource_path(group, version, plural))["items"])
        return items

    def wait_ready(self, timeout):
        """Wait until every MachineDeployment and KubeadmControlPlane of the fleet is complete."""
        deadline = time.monotonic() + timeout
        next_report = time.monotonic() + 5
        while True:
            pending = []
            for cluster in self.clusters.values():
                pid = cluster.pids().get("controller")
                if pid and not procs.alive(pid, str(cluster.dir)):
                    raise RuntimeError(f"{cluster.name}: the controller simulator exited; see {cluster.dir}/controller.out "
                                       f"and controller.log")
                version = crds.api_version(cluster.capi_version)
                pending.extend(f"{cluster.name}: {readiness.describe(o, version)}"
                               for o in self.rollout_objects(cluster) if not readiness.is_complete(o, version))
                pending.extend(f"{cluster.name}: Cluster {wc['namespace']}/{wc['name']}: topology not reconciled yet"
                               for wc in self._mgmt_spec(cluster.name)["workload_clusters"]
                               if wc.get("topology") and not self._topology_reconciled(cluster, wc, version))
            if not pending:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"fleet not ready after {timeout:.0f}s; not complete:\n  " + "\n  ".join(pending))
            if time.monotonic() > next_report:
                progress(f"waiting for {len(pending)} rollout(s), e.g. {pending[0]}")
                next_report = time.monotonic() + 5
            time.sleep(0.5)

    @staticmethod
    def _topology_reconciled(cluster, wc, version):
        group, plural = KINDS["Cluster"]
        obj = cluster.api("admin").get(resource_path(group, version, plural, wc["namespace"], wc["name"]))
        return readiness.topology_reconciled(obj, version)

    def _write_inventory(self):
        hosts = {}
        for cluster in self.clusters.values():
            hosts[cluster.name] = {
                "ansible_connection": "local",
                "ansible_python_interpreter": "{{ ansible_playbook_python }}",
                "capi_kubeconfig": str(cluster.kubeconfig("rollout-operator")),
                "capi_context": cluster.name,
                "capi_version": cluster.capi_version,
                "capi_audit_log": str(cluster.audit_log),
                # Where this management cluster keeps its workload clusters, for fleet playbooks.
                "capi_namespaces": sorted({wc["namespace"] for wc in self._mgmt_spec(cluster.name)["workload_clusters"]}),
            }
        inventory = {"all": {"children": {"management_clusters": {"hosts": hosts}}}}
        self.inventory.write_text("# Written by `python -m capisim up`; the fleet's management clusters.\n"
                                  + yaml.safe_dump(inventory, sort_keys=False), encoding="utf-8")

    # ----- down / status -----
    def down(self, purge=False):
        """Stop exactly the recorded processes of every management cluster; purge removes the state."""
        with ThreadPoolExecutor(max(len(self.clusters), 1)) as pool:
            list(pool.map(lambda c: c.stop(), self.clusters.values()))
        for cluster in self.clusters.values():
            recorded = ", ".join(f"{role} {pid}" for role, pid in cluster.pids().items())
            progress(f"{cluster.name}: stopped {recorded or '(no process recorded)'}")
            if purge and cluster.dir.exists():
                shutil.rmtree(cluster.dir)
        if purge:
            for name in ("fleet.json", "inventory.yml"):
                (self.state / name).unlink(missing_ok=True)
            if self.state.is_dir() and not any(self.state.iterdir()):
                self.state.rmdir()
                progress(f"removed {self.state}")
            else:
                progress(f"removed the fleet's files; {self.state} is kept because it holds other files")

    def status(self):
        """Text: per management cluster its MachineDeployments and KubeadmControlPlanes with their counters."""
        lines = []
        for cluster in self.clusters.values():
            info = cluster.info()
            if not cluster.running():
                lines.append(f"{cluster.name} (CAPI {cluster.capi_version}): not running")
                continue
            version = crds.api_version(cluster.capi_version)
            lines.append(f"{cluster.name} (CAPI {cluster.capi_version}, {version}) {info['server']}")
            lines.append(f"  {'KIND':<20} {'NAMESPACE/NAME':<40} {'REPLICAS':>8} {'UP-TO-DATE':>10} {'AVAILABLE':>9}  VERSION")
            for obj in self.rollout_objects(cluster):
                c = readiness.counts(obj, version)
                spec = obj["spec"]
                kube_version = spec.get("version") or spec.get("template", {}).get("spec", {}).get("version")
                lines.append(f"  {obj['kind']:<20} {obj['metadata']['namespace'] + '/' + obj['metadata']['name']:<40} "
                             f"{c['replicas'] or 0:>4}/{c['desired']:<3} {c['up_to_date'] or 0:>10} "
                             f"{c['available'] or 0:>9}  {kube_version}")
        return "\n".join(lines)
