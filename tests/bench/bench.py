"""Benchmark harness (issue 12): capi.rollout against kubernetes.core and kubectl on simulated fleets.

    PYTHONPATH=tests/sim .venv/bin/python tests/bench/bench.py --smoke            # smallest sizes, once
    PYTHONPATH=tests/sim .venv/bin/python tests/bench/bench.py --docs docs/performance.md   # the matrix (make bench)

Every fleet is generated from sizes (``fleet_spec``), started with capisim, measured and stopped again (also when a
run fails). A scenario is (group, tool, size); each runs ``--reps`` times. Every measured command goes through
measure.py, so wall time, CPU seconds and peak RSS belong to that command's process tree only; the API requests it
sent are read from the kube-apiserver audit log of every API server of the fleet (user ``rollout-operator``, whose
kubeconfig every tool uses). Results go to a JSON file and Markdown tables; ``--docs`` rewrites the sections of
docs/performance.md between ``<!-- bench:begin NAME -->`` and ``<!-- bench:end NAME -->``.

Management clusters beyond ``--max-servers`` (and beyond what the memory measured for one management cluster
allows) are inventory hosts that share a real API server, each with a namespace of its own (its workload clusters,
``capi_namespaces`` and the refresh lock's namespace), so their selections are disjoint. The tables say how many
real API servers carried how many hosts.
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
for _path in (REPO / "tests" / "sim",):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from capisim import crds, readiness  # noqa: E402  (needs tests/sim on sys.path)
from capisim.audit import AuditReader, shape  # noqa: E402
from capisim.fleet import Fleet  # noqa: E402
from capisim.fleetspec import load_fleet  # noqa: E402
from capisim.kubeapi import resource_path  # noqa: E402
from capisim.objects import KINDS  # noqa: E402

MEASURE = HERE / "measure.py"
OURS = "capi.rollout"
CAPI_VERSION = "v1.14"  # serves v1beta2: spec.rollout.after, the RollingOut condition
API_VERSION = crds.api_version(CAPI_VERSION)
GROUP = "cluster.x-k8s.io"
# resource.version.group: kubectl 1.32 answers the resource.group form ("machinedeployments.cluster.x-k8s.io") by
# invalidating its discovery cache on every call (it reads "cluster" as a version, measured: 44 requests per call)
MD_RESOURCE = f"machinedeployments.{API_VERSION}.{GROUP}"
USER = "rollout-operator"
MDS_PER_WORKLOAD_CLUSTER = 10
# The hardware refresh settings of the integration tests (1 s machines): short soaks, frequent polls.
FAST = {"soak_seconds": 1, "poll_interval": 1, "stall_timeout": 60, "wait_timeout": 900, "lock_duration": 60,
        "failure_budget_percent": 100}
MAX_IN_FLIGHT = 10


def log(message):
    print(f"[bench {datetime.datetime.now(datetime.timezone.utc):%H:%M:%S}] {message}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------------------------------------------
# Fleets


def fleet_spec(name, hosts, mds_per_host, servers, replicas=1, provision_seconds=1):
    """A capisim fleet spec with ``hosts`` management clusters of ``mds_per_host`` MachineDeployments each, carried
    by ``servers`` real API servers (host h on server h % servers). Host h keeps its workload clusters in namespace
    ``hNN`` (``hNN-wMM``, MachineDeployments ``hNN-wMM-md-K``), so hosts sharing a server never select each
    other's objects. Returns (spec, layout): layout maps host name -> {server, namespace, mds}."""
    clusters = [{"name": f"{name}-s{index}", "capi_version": CAPI_VERSION, "workload_clusters": []}
                for index in range(servers)]
    layout = {}
    for host in range(hosts):
        namespace = f"h{host:02d}"
        server = clusters[host % servers]
        mds = []
        for wc_index in range((mds_per_host + MDS_PER_WORKLOAD_CLUSTER - 1) // MDS_PER_WORKLOAD_CLUSTER):
            count = min(MDS_PER_WORKLOAD_CLUSTER, mds_per_host - wc_index * MDS_PER_WORKLOAD_CLUSTER)
            wc_name = f"{namespace}-w{wc_index:02d}"
            server["workload_clusters"].append({
                "name": wc_name, "namespace": namespace, "kubernetes_version": "v1.30.4",
                "machine_deployments": [{"name": f"md-{k}", "replicas": replicas} for k in range(count)]})
            mds.extend(f"{wc_name}-md-{k}" for k in range(count))
        host_name = f"{name}-{namespace}" if hosts > 1 else f"{name}-mgmt"
        layout[host_name] = {"server": server["name"], "namespace": namespace, "mds": mds}
    spec = {"defaults": {"provision_seconds": provision_seconds}, "management_clusters": clusters}
    return spec, layout


def rss_kib(pid):
    try:
        for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


class BenchFleet:
    """A generated fleet under ``state_root/name``: started by ``up``, always stopped by ``down``."""

    def __init__(self, name, hosts, mds_per_host, servers, state_root, replicas=1):
        self.name = name
        self.hosts = hosts
        self.mds_per_host = mds_per_host
        self.servers = servers
        spec, self.layout = fleet_spec(name, hosts, mds_per_host, servers, replicas)
        self.fleet = Fleet(load_fleet(spec), Path(state_root) / name)
        self.inventory = self.fleet.state / "bench-inventory.yml"
        self.audit = {}

    def __enter__(self):
        started = time.monotonic()
        try:
            self.fleet.up(controller=True, timeout=600 + 2 * self.hosts * self.mds_per_host)
        except BaseException:
            self.fleet.down()
            raise
        self.up_seconds = time.monotonic() - started
        for server, cluster in self.fleet.clusters.items():
            self.audit[server] = AuditReader(cluster.audit_log, cluster.api("admin"))
        self._write_inventory()
        log(f"{self.name}: {self.hosts} host(s) x {self.mds_per_host} MDs on {self.servers} API server(s), "
            f"up in {self.up_seconds:.0f}s")
        return self

    def __exit__(self, *exc):
        self.fleet.down()

    def _write_inventory(self):
        hosts = {}
        for host, where in self.layout.items():
            cluster = self.fleet.clusters[where["server"]]
            hosts[host] = {
                "ansible_connection": "local",
                "ansible_python_interpreter": "{{ ansible_playbook_python }}",
                "capi_kubeconfig": str(cluster.kubeconfig(USER)),
                "capi_context": cluster.name,
                "capi_version": CAPI_VERSION,
                "capi_namespaces": [where["namespace"]],
                # hosts sharing an API server each lock their own namespace (one Lease per management cluster)
                "hardware_refresh_lock_namespace": where["namespace"],
                "bench_namespace": where["namespace"],
                "bench_mds": where["mds"],
            }
        inventory = {"all": {"children": {"management_clusters": {"hosts": hosts}}}}
        self.inventory.write_text(yaml.safe_dump(inventory, sort_keys=False), encoding="utf-8")

    def memory_kib(self):
        """Resident memory of each API server's processes (etcd, kube-apiserver, kube-controller-manager, the
        controller simulator), by server."""
        return {name: {role: rss_kib(pid) for role, pid in cluster.pids().items()}
                for name, cluster in self.fleet.clusters.items()}

    def marks(self):
        return {server: reader.mark() for server, reader in self.audit.items()}

    def requests(self, marks):
        """The rollout operator's requests since ``marks``, over every API server, as (verb, what) pairs."""
        out = []
        for server, reader in self.audit.items():
            out.extend(shape(reader.read(marks[server]).requests(user=USER)))
        return out

    def first(self):
        host = next(iter(self.layout))
        return host, self.layout[host], self.fleet.clusters[self.layout[host]["server"]]

    def wait_ready(self):
        self.fleet.wait_ready(600)


class Completion:
    """Watches MachineDeployments (as admin, every 0.2 s) from before a restart until each is complete with none of
    the Machines it had before: the moment the restart really finished, to compare with when a tool returned."""

    def __init__(self, cluster, namespace, names):
        self.api = cluster.api("admin")
        self.namespace = namespace
        self.names = list(names)
        self.old = self._machines()
        self.done_at = None
        # when the last check that found the rollout unfinished started: it was still running then for sure
        self.unfinished_at = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _path(self, kind, name=None):
        group, plural = KINDS[kind]
        return resource_path(group, API_VERSION, plural, self.namespace, name)

    def _machines(self):
        items = self.api.list(self._path("Machine"))["items"]
        by_md = {}
        for item in items:
            md = (item["metadata"].get("labels") or {}).get("cluster.x-k8s.io/deployment-name")
            by_md.setdefault(md, set()).add(item["metadata"]["name"])
        return {name: by_md.get(name, set()) for name in self.names}

    def _complete(self):
        machines = self._machines()
        for name in self.names:
            md = self.api.get(self._path("MachineDeployment", name))
            if not readiness.is_complete(md, API_VERSION) or machines[name] & self.old[name]:
                return False
        return True

    def _run(self):
        while not self._stop.is_set():
            checked = time.time()
            if self._complete():
                self.done_at = time.time()
                return
            self.unfinished_at = checked
            time.sleep(0.2)

    def wait(self, timeout=300):
        self._thread.join(timeout)
        self._stop.set()
        if self.done_at is None:
            raise TimeoutError(f"{self.namespace}: {self.names} not rolled within {timeout}s")
        return self.done_at


# ----------------------------------------------------------------------------------------------------------------
# Running and measuring one command


class Runner:
    def __init__(self, work, bench_venv, kubectl):
        self.work = Path(work)
        self.ours = Path(sys.executable).parent / "ansible-playbook"
        self.bench_venv = bench_venv
        self.kubectl = kubectl
        self.count = 0

    def env(self):
        return dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0",
                    ANSIBLE_DEPRECATION_WARNINGS="0", ANSIBLE_RETRY_FILES_ENABLED="0", ANSIBLE_LOCALHOST_WARNING="0")

    def playbook(self, tasks, hosts="management_clusters", extra_play=None):
        self.count += 1
        path = self.work / f"play-{self.count}.yml"
        play = dict({"hosts": hosts, "gather_facts": False, "tasks": tasks}, **(extra_play or {}))
        path.write_text(yaml.safe_dump([play], sort_keys=False), encoding="utf-8")
        return path

    def ansible(self, fleet, tasks, tool, limit=None):
        """ansible-playbook of our venv for capi.rollout, of .venv-bench for kubernetes.core (same ansible-core)."""
        binary = self.ours if tool == OURS else Path(self.bench_venv) / "bin" / "ansible-playbook"
        cmd = [str(binary), "-i", str(fleet.inventory), str(self.playbook(tasks))]
        return cmd + (["--limit", limit] if limit else [])

    def shell(self, script):
        self.count += 1
        path = self.work / f"script-{self.count}.sh"
        path.write_text("set -euo pipefail\n" + script + "\n", encoding="utf-8")
        return ["bash", str(path)]

    def measure(self, fleet, cmd):
        """Run ``cmd`` through measure.py between two audit marks; returns its figures and requests."""
        out = self.work / f"measure-{time.monotonic_ns()}.json"
        marks = fleet.marks()
        subprocess.run([sys.executable, str(MEASURE), str(out), "--", *cmd], cwd=str(REPO), env=self.env(), check=True)
        result = json.loads(out.read_text(encoding="utf-8"))
        if result["rc"] != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed (rc {result['rc']}):\n{result['output'][-6000:]}")
        requests = fleet.requests(marks)
        result.pop("output")
        # the 1-minute load average after each command: the machine is shared, figures are only comparable at like load
        result.update(requests=len(requests), request_shape=requests, maxrss_mib=result["maxrss_kib"] / 1024,
                      load=os.getloadavg()[0])
        return result


# ----------------------------------------------------------------------------------------------------------------
# Scenarios


def _conn():
    return {"kubeconfig": "{{ capi_kubeconfig }}"}


def _k8s_conn():
    return {"kubeconfig": "{{ capi_kubeconfig }}", "context": "{{ capi_context }}"}


def _after_now():
    # kubectl rollout restart writes the client's clock too; CAPI v1.14 needs no second's margin (bug 13182 is fixed)
    return "{{ now(utc=true, fmt='%Y-%m-%dT%H:%M:%SZ') }}"


def _k8s_patch_loop(names):
    return {"name": "restart (kubernetes.core.k8s patch loop)", "kubernetes.core.k8s": dict(
        _k8s_conn(), state="patched", api_version=f"{GROUP}/{API_VERSION}", kind="MachineDeployment",
        namespace="{{ bench_namespace }}", name="{{ item }}", merge_type="merge",
        definition={"spec": {"rollout": {"after": _after_now()}}}), "loop": names}


def _kubectl(kubeconfig, cache):
    return f"{shutil.which('kubectl')} --kubeconfig {kubeconfig} --cache-dir {cache}"


def _kubectl_patch_loop(kubectl, namespace, names):
    return (f"for n in {' '.join(names)}; do\n"
            f"  {kubectl} -n {namespace} patch {MD_RESOURCE} \"$n\" --type merge "
            "-p \"{\\\"spec\\\":{\\\"rollout\\\":{\\\"after\\\":\\\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\\\"}}}\" >/dev/null\n"
            "done")


def warm_kubectl_cache(runner, cluster, namespace):
    """Fill kubectl's discovery cache as admin (not counted): kubectl is measured as used day to day, with a warm
    cache, as the Ansible modules keep theirs (kubernetes.core) or need one request (capi.rollout's GET /apis)."""
    kubectl = _kubectl(cluster.kubeconfig("admin"), runner.work / "kubectl-cache")
    subprocess.run(f"{kubectl} -n {namespace} get {MD_RESOURCE} -o name", shell=True, check=True,
                   stdout=subprocess.DEVNULL)


def info_commands(runner, fleet, count):
    host, where, cluster = fleet.first()
    namespace = where["namespace"]
    if runner.kubectl:
        warm_kubectl_cache(runner, cluster, namespace)
    assert len(where["mds"]) == count, (len(where["mds"]), count)
    tools = {
        OURS: runner.ansible(fleet, [{"name": "info", "capi.rollout.capi_rollout_info": dict(_conn(), namespace=namespace)}],
                             OURS),
        "kubernetes.core k8s_info": runner.ansible(fleet, [{"name": "info", "kubernetes.core.k8s_info": dict(
            _k8s_conn(), api_version=f"{GROUP}/{API_VERSION}", kind="MachineDeployment", namespace=namespace)}],
            "kubernetes.core"),
    }
    if runner.kubectl:
        kubectl = _kubectl(cluster.kubeconfig(USER), runner.work / "kubectl-cache")
        tools["kubectl get"] = runner.shell(f"{kubectl} -n {namespace} get {MD_RESOURCE} -o json >/dev/null")
    return tools


def restart_commands(runner, fleet, names):
    host, where, cluster = fleet.first()
    namespace = where["namespace"]
    tools = {
        OURS: runner.ansible(fleet, [{"name": "restart", "capi.rollout.capi_rollout_restart": dict(
            _conn(), namespace=namespace, names=names)}], OURS),
        "kubernetes.core k8s patch loop": runner.ansible(fleet, [_k8s_patch_loop(names)], "kubernetes.core"),
    }
    if runner.kubectl:
        kubectl = _kubectl(cluster.kubeconfig(USER), runner.work / "kubectl-cache")
        tools["kubectl patch loop"] = runner.shell(_kubectl_patch_loop(kubectl, namespace, names))
    return tools


def wait_commands(runner, fleet, names):
    host, where, cluster = fleet.first()
    namespace = where["namespace"]
    until = ("r.resources | length == 1 and r.resources[0].status.observedGeneration | default(0) >= "
             "r.resources[0].metadata.generation and r.resources[0].status.replicas | default(-1) == "
             "r.resources[0].spec.replicas and r.resources[0].status.upToDateReplicas | default(-1) == "
             "r.resources[0].spec.replicas and r.resources[0].status.availableReplicas | default(-1) == "
             "r.resources[0].spec.replicas")
    k8s_get = dict(_k8s_conn(), api_version=f"{GROUP}/{API_VERSION}", kind="MachineDeployment",
                   namespace="{{ bench_namespace }}", name="{{ item }}")
    tools = {
        f"{OURS} restart wait": runner.ansible(fleet, [{"name": "restart and wait", "capi.rollout.capi_rollout_restart": dict(
            _conn(), namespace=namespace, names=names, wait=True, wait_timeout=300)}], OURS),
        "kubernetes.core wait_condition": runner.ansible(fleet, [_k8s_patch_loop(names), {
            "name": "wait (k8s_info wait_condition RollingOut=False)", "kubernetes.core.k8s_info": dict(
                k8s_get, wait=True, wait_timeout=300, wait_condition={"type": "RollingOut", "status": "False"}),
            "loop": names}], "kubernetes.core"),
        "until-loop (k8s_info, 2 s)": runner.ansible(fleet, [_k8s_patch_loop(names), {
            "name": "wait (until the counters match)", "kubernetes.core.k8s_info": k8s_get, "register": "r",
            "until": until, "retries": 150, "delay": 2, "loop": names}], "kubernetes.core"),
    }
    if runner.kubectl:
        kubectl = _kubectl(cluster.kubeconfig(USER), runner.work / "kubectl-cache")
        objects = " ".join(f"{MD_RESOURCE}/{name}" for name in names)
        tools["kubectl wait"] = runner.shell(_kubectl_patch_loop(kubectl, namespace, names) + "\n"
                                             f"{kubectl} -n {namespace} wait --for=condition=RollingOut=false "
                                             f"--timeout=300s {objects} >/dev/null")
    return tools


def report_dir(runner, tag):
    return runner.work / f"report-{tag}"


def refresh_command(runner, fleet, check, forks, tag):
    extra = dict(FAST, refresh_id=f"bench-{tag}", template_overrides={"customImage": f"kindest/node:bench-{tag}"},
                 max_in_flight=MAX_IN_FLIGHT, report_dir=str(report_dir(runner, tag)))
    if forks < fleet.hosts:
        # the playbook refuses fewer forks than management clusters per batch: fewer forks means smaller batches
        extra["batch_size"] = forks
    cmd = [str(runner.ours), "-i", str(fleet.inventory), str(REPO / "playbooks" / "hardware_refresh.yml"),
           "-e", json.dumps(extra), "-f", str(forks)]
    return cmd + (["--check"] if check else [])


def _stamp(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").timestamp()


def rollout_seconds(report):
    """How long a refresh waited for the machines: per management cluster, the sum over its waves of the time from
    the first switch of the wave to its rollout's end, plus the soak (the report's own times, the API server's
    clock, to the second); the longest management cluster (they roll side by side). The rest of the run's wall time
    is the controller's overhead (issue 12's target: <= 0.2 s per object)."""
    longest = 0.0
    for cluster in report.get("management_clusters") or []:
        switched = {}
        for obj in cluster.get("objects") or []:
            if obj.get("wave") is not None and obj.get("started"):
                switched.setdefault(obj["wave"], []).append(_stamp(obj["started"]))
        total = 0.0
        for wave in cluster.get("waves") or []:
            end = wave.get("soak_finished") or wave.get("rollout_finished")
            if end and switched.get(wave["index"]):
                total += _stamp(end) - min(switched[wave["index"]])
        longest = max(longest, total)
    return longest


# ----------------------------------------------------------------------------------------------------------------
# The matrix


def summarize(runs):
    walls = [r["wall"] for r in runs]
    out = {"runs": len(runs), "wall": statistics.median(walls), "wall_min": min(walls), "wall_max": max(walls),
           "cpu": statistics.median(r["cpu"] for r in runs), "maxrss_mib": max(r["maxrss_mib"] for r in runs),
           "requests": statistics.median(r["requests"] for r in runs),
           "requests_all": [r["requests"] for r in runs]}
    if all("rollout_s" in r for r in runs):
        out["rollout_s"] = statistics.median(r["rollout_s"] for r in runs)
        out["overhead_s"] = statistics.median(r["wall"] - r["rollout_s"] for r in runs)
    latencies = [r["latency"] for r in runs if "latency" in r]
    if latencies:
        out["latency"] = statistics.median(latencies)
        out["early"] = sum(1 for r in runs if r["early"])
    return out


def parse_sizes(text):
    """"1x10,6x10@5" -> [(hosts, mds_per_host, forks or None)]."""
    sizes = []
    for item in filter(None, (text or "").split(",")):
        size, forks = (item.split("@", 1) + [""])[:2]
        hosts, mds = size.split("x", 1)
        sizes.append((int(hosts), int(mds), int(forks) if forks else None))
    return sizes


class Bench:
    def __init__(self, args):
        self.args = args
        self.out = Path(args.out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.work = Path(tempfile.mkdtemp(prefix="work-", dir=self.out))
        self.state = self.out / "state"
        self.results = {"started": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                        "machine": machine(), "reps": args.reps, "fleet_reps": args.fleet_reps, "big": args.big,
                        "scenarios": [], "notes": [], "memory": {}}
        self.kubectl = kubectl_version()
        if self.kubectl:
            self.results["kubectl"] = self.kubectl
        else:
            note = "kubectl columns left out: no working kubectl on PATH"
            self.results["notes"].append(note)
            log(note)
        bench_venv = Path(args.bench_venv)
        if not (bench_venv / "bin" / "ansible-playbook").exists():
            raise SystemExit(f"{bench_venv}: no ansible-playbook; run `make venv-bench` (kubernetes.core from PyPI ansible)")
        self.results["kubernetes_core"] = collection_version(bench_venv, "kubernetes.core")
        self.results["ansible_core"] = subprocess.run([str(bench_venv / "bin" / "python"), "-c",
                                                       "import ansible.release as r; print(r.__version__)"],
                                                      capture_output=True, text=True, check=True).stdout.strip()
        self.runner = Runner(self.work, bench_venv, bool(self.kubectl))
        self.max_servers = args.max_servers

    def record(self, group, tool, size, runs, **extra):
        entry = dict(group=group, tool=tool, size=size, **extra, **summarize(runs), raw=runs)
        self.results["scenarios"].append(entry)
        log(f"{group} {size} {tool}: median {entry['wall']:.2f}s, {entry['requests']} requests, cpu {entry['cpu']:.2f}s, "
            f"rss {entry['maxrss_mib']:.0f} MiB")
        self.save()

    def save(self):
        (self.out / "results.json").write_text(json.dumps(self.results, indent=1) + "\n", encoding="utf-8")

    def servers_for(self, hosts):
        return max(1, min(hosts, self.max_servers))

    # --- module-level comparisons on one fleet ---
    def micro(self):
        args = self.args
        mds = max(args.info_mds, args.restart_mds, args.wait_mds)
        with BenchFleet("bench-micro", 1, mds, 1, self.state) as fleet:
            self.note_memory(fleet)
            host, where, cluster = fleet.first()
            tools = info_commands(self.runner, fleet, mds) if args.info_mds == mds else None
            if tools is None:
                raise SystemExit("--info-mds must be the largest of the micro sizes (it lists the whole namespace)")
            for tool, cmd in tools.items():
                self.record("info", tool, f"{args.info_mds} MDs", [self.runner.measure(fleet, cmd) for _rep in range(args.reps)])
            names = where["mds"][:args.restart_mds]
            for tool, cmd in restart_commands(self.runner, fleet, names).items():
                runs = []
                for _rep in range(args.reps):
                    watch = Completion(cluster, where["namespace"], names)
                    runs.append(self.runner.measure(fleet, cmd))
                    watch.wait()  # the next run starts on a settled fleet
                self.record("restart", tool, f"{args.restart_mds} MDs", runs)
            names = where["mds"][:args.wait_mds]
            for tool, cmd in wait_commands(self.runner, fleet, names).items():
                runs = []
                for _rep in range(args.reps):
                    watch = Completion(cluster, where["namespace"], names)
                    run = self.runner.measure(fleet, cmd)
                    done = watch.wait()
                    # latency > 0: the tool returned this long after the watcher saw the rollout finished. The watcher
                    # sees it up to one check (0.2 s and the check's own requests) late, so a small negative latency
                    # is no proof: a return is early only when a check that started after it still found the rollout
                    # unfinished.
                    early = watch.unfinished_at is not None and run["end"] < watch.unfinished_at
                    run.update(latency=run["end"] - done, early=early, completed_after=done - run["start"])
                    runs.append(run)
                self.record("wait", tool, f"{args.wait_mds} MDs", runs)

    def note_memory(self, fleet):
        memory = fleet.memory_kib()
        per_server = statistics.median(sum(roles.values()) for roles in memory.values())
        self.results["memory"] = {"per_server_kib": per_server, "roles_kib": next(iter(memory.values()))}
        available = available_kib()
        # half of what is free for API servers: the controller, the tools and other engineers' tests need the rest
        by_memory = max(1, int(available * 0.5 / max(per_server, 1)))
        self.max_servers = max(1, min(self.args.max_servers, by_memory))
        note = (f"one management cluster (etcd + kube-apiserver + kube-controller-manager + controller simulator, "
                f"{fleet.mds_per_host} MDs) used {per_server / 1024:.0f} MiB RSS; {available / 1048576:.1f} GiB available: "
                f"at most {self.max_servers} real API servers (--max-servers {self.args.max_servers}, memory allows "
                f"{by_memory}); more management clusters share them as inventory hosts with disjoint namespaces")
        self.results["notes"].append(note)
        log(note)

    # --- the fleet playbook ---
    def fleet_runs(self, group, sizes, check):
        """One fleet per (hosts, MDs per host), started once for every forks setting asked for that size."""
        by_size = {}
        for hosts, mds, forks in sizes:
            by_size.setdefault((hosts, mds), []).append(forks or max(5, hosts))
        for (hosts, mds), forks_list in by_size.items():
            servers = self.servers_for(hosts)
            reps = self.args.fleet_reps if hosts * mds <= self.args.big else 1
            with BenchFleet(f"bench-{group}-{hosts}x{mds}", hosts, mds, servers, self.state) as fleet:
                if not self.results["memory"]:
                    self.note_memory(fleet)
                for forks in forks_list:
                    runs = []
                    for rep in range(reps):
                        tag = f"{group}-{hosts}x{mds}-f{forks}-{rep}-{time.time_ns() % 10**6}"
                        runs.append(self.runner.measure(fleet, refresh_command(self.runner, fleet, check, forks, tag)))
                        if not check:
                            report = json.loads((report_dir(self.runner, tag) / "report.json").read_text(encoding="utf-8"))
                            runs[-1]["rollout_s"] = rollout_seconds(report)
                            fleet.wait_ready()
                    self.record(group, OURS, f"{hosts}x{mds}", runs, hosts=hosts, servers=servers, mds=hosts * mds,
                                forks=forks)

    def run(self):
        try:
            if self.args.info_mds:
                self.micro()
            self.fleet_runs("plan", parse_sizes(self.args.plan), check=True)
            self.fleet_runs("scaleout", parse_sizes(self.args.scaleout), check=True)
            self.fleet_runs("refresh", parse_sizes(self.args.refresh), check=False)
        finally:
            self.results["finished"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
            loads = [run["load"] for entry in self.results["scenarios"] for run in entry["raw"]]
            if loads:
                self.results["machine"]["load_during"] = [round(min(loads), 1), round(statistics.median(loads), 1),
                                                          round(max(loads), 1)]
            self.save()
        tables = render(self.results)
        (self.out / "tables.md").write_text("\n\n".join(f"### {name}\n\n{text}" for name, text in tables.items()) + "\n",
                                            encoding="utf-8")
        if self.args.docs:
            rewrite_docs(Path(self.args.docs), tables)
            log(f"rewrote the bench sections of {self.args.docs}")
        shutil.rmtree(self.work, ignore_errors=True)
        return tables


# ----------------------------------------------------------------------------------------------------------------
# Environment


def machine():
    load = os.getloadavg()
    return {"cpus": os.cpu_count(), "memory_gib": round(total_kib() / 1048576, 1), "python": platform.python_version(),
            "load_at_start": [round(x, 1) for x in load]}


def _meminfo(key):
    for line in Path("/proc/meminfo").read_text(encoding="utf-8").splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def total_kib():
    return _meminfo("MemTotal")


def available_kib():
    return _meminfo("MemAvailable")


def kubectl_version():
    binary = shutil.which("kubectl")
    if not binary:
        return None
    try:
        proc = subprocess.run([binary, "version", "--client", "-o", "json"], capture_output=True, text=True, timeout=60,
                              check=False)
        return json.loads(proc.stdout)["clientVersion"]["gitVersion"] if proc.returncode == 0 else None
    except (OSError, ValueError, KeyError, subprocess.TimeoutExpired):
        return None


def collection_version(venv, name):
    proc = subprocess.run([str(venv / "bin" / "ansible-galaxy"), "collection", "list", name, "--format", "json"],
                          capture_output=True, text=True, check=False,
                          env=dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg")), cwd=str(REPO))
    try:
        for collections in json.loads(proc.stdout).values():
            if name in collections:
                return collections[name]["version"]
    except ValueError:
        pass
    return "unknown"


# ----------------------------------------------------------------------------------------------------------------
# Tables

TOOL_COLUMNS = ["tool", "median s", "× capi.rollout", "requests", "CPU s", "peak RSS MiB", "runs (min-max s)", "load"]
WAIT_COLUMNS = ["tool", "median s", "× capi.rollout", "return after completion s", "early returns", "requests", "CPU s",
                "peak RSS MiB", "runs (min-max s)", "load"]
FLEET_COLUMNS = ["management clusters", "API servers", "MDs", "forks", "median s", "s per MD", "requests", "CPU s",
                 "peak RSS MiB", "runs (min-max s)", "load"]
# a refresh also says how long it waited for rollouts and soaks (rollout_seconds) and what the rest cost per object
REFRESH_COLUMNS = FLEET_COLUMNS[:6] + ["rollouts and soaks s", "overhead s", "overhead s per MD"] + FLEET_COLUMNS[6:]


def _load(entry):
    """The median 1-minute load average after the runs: the machine is shared, so this says what they competed with."""
    loads = [run["load"] for run in entry["raw"] if "load" in run]
    return f"{statistics.median(loads):.1f}" if loads else "-"


def _row(cells):
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _table(columns, rows):
    return "\n".join([_row(columns), _row(["---"] * len(columns))] + [_row(r) for r in rows])


def _runs(entry):
    return f"{entry['runs']} ({entry['wall_min']:.2f}-{entry['wall_max']:.2f})"


def _requests(entry):
    counts = sorted(set(entry["requests_all"]))
    return str(counts[0]) if len(counts) == 1 else f"{entry['requests']:g} ({counts[0]}-{counts[-1]})"


def render(results):
    tables = {}
    for group, columns in (("info", TOOL_COLUMNS), ("restart", TOOL_COLUMNS), ("wait", WAIT_COLUMNS)):
        entries = [e for e in results["scenarios"] if e["group"] == group]
        if not entries:
            continue
        ours = next((e for e in entries if e["tool"].startswith(OURS)), None)
        rows = []
        for e in entries:
            ratio = f"{e['wall'] / ours['wall']:.2f}" if ours else "-"
            cells = [f"{e['tool']} ({e['size']})", f"{e['wall']:.2f}", ratio]
            if group == "wait":
                cells += [f"{e['latency']:+.2f}", f"{e['early']}/{e['runs']}"]
            cells += [_requests(e), f"{e['cpu']:.2f}", f"{e['maxrss_mib']:.0f}", _runs(e), _load(e)]
            rows.append(cells)
        tables[group] = _table(columns, rows)
    for group in ("plan", "scaleout", "refresh"):
        entries = [e for e in results["scenarios"] if e["group"] == group]
        if not entries:
            continue
        waited = all("overhead_s" in e for e in entries)
        rows = []
        for e in entries:
            cells = [e["hosts"], e["servers"], e["mds"], e["forks"], f"{e['wall']:.1f}", f"{e['wall'] / e['mds']:.2f}"]
            if waited:
                cells += [f"{e['rollout_s']:.0f}", f"{e['overhead_s']:.1f}", f"{e['overhead_s'] / e['mds']:.2f}"]
            rows.append(cells + [_requests(e), f"{e['cpu']:.1f}", f"{e['maxrss_mib']:.0f}", _runs(e), _load(e)])
        tables[group] = _table(REFRESH_COLUMNS if waited else FLEET_COLUMNS, rows)
    m = results["machine"]
    lines = [f"Run {results['started']} - {results.get('finished', '?')}: {m['cpus']} CPUs, {m['memory_gib']} GiB, "
             f"load average {'/'.join(str(x) for x in m['load_at_start'])} (1/5/15 min) at the start, "
             f"{'/'.join(str(x) for x in m.get('load_during', []))} (min/median/max 1-min) after the commands "
             "(other engineers' work shares the machine), "
             f"{results['reps']} run(s) per tool, {results.get('fleet_reps', results['reps'])} per fleet size up to "
             f"{results.get('big', '?')} MDs and 1 above (column runs), Python {m['python']}, "
             f"ansible-core {results['ansible_core']}, kubernetes.core {results['kubernetes_core']}, "
             f"kubectl {results.get('kubectl', 'not used')}, CAPI {CAPI_VERSION} ({API_VERSION})."]
    lines += [f"- {note}" for note in results["notes"]]
    tables["environment"] = "\n".join(lines)
    return tables


def merge_results(parts):
    """Several runs (e.g. the matrix, then one big size measured later) as one: the first run's environment, the
    scenarios and notes of all, and the loads of all of them."""
    merged = dict(parts[0], scenarios=[], notes=[])
    merged["machine"] = dict(parts[0]["machine"])
    loads = []
    for part in parts:
        merged["scenarios"].extend(part["scenarios"])
        merged["notes"].extend(note for note in part["notes"] if note not in merged["notes"])
        loads.extend(run["load"] for entry in part["scenarios"] for run in entry["raw"] if "load" in run)
    merged["finished"] = parts[-1].get("finished", "?")
    if loads:
        merged["machine"]["load_during"] = [round(min(loads), 1), round(statistics.median(loads), 1), round(max(loads), 1)]
    return merged


def rewrite_docs(path, tables):
    text = path.read_text(encoding="utf-8")
    for name, table in tables.items():
        begin, end = f"<!-- bench:begin {name} -->", f"<!-- bench:end {name} -->"
        if begin not in text or end not in text:
            raise SystemExit(f"{path}: no {begin} ... {end} section")
        head, rest = text.split(begin, 1)
        tail = rest.split(end, 1)[1]
        text = f"{head}{begin}\n{table}\n{end}{tail}"
    path.write_text(text, encoding="utf-8")


# ----------------------------------------------------------------------------------------------------------------

# The smoke run puts its two scale-out hosts on one API server, so the shared-server path is exercised too.
SMOKE = {"info_mds": 3, "restart_mds": 3, "wait_mds": 2, "plan": "1x10", "scaleout": "2x3@1", "refresh": "1x4",
         "reps": 1, "max_servers": 1}
FULL = {"info_mds": 50, "restart_mds": 10, "wait_mds": 3, "plan": "1x10,1x60,1x300,1x1000,6x10,10x30,50x20",
        "scaleout": "1x10@1,1x10@5,2x10@1,2x10@5,4x10@1,4x10@5", "refresh": "1x10,1x60,1x300", "reps": 3}


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--smoke", action="store_true", help="the smallest sizes, once each")
    parser.add_argument("--reps", type=int, help="runs per scenario (default 3; smoke 1)")
    parser.add_argument("--fleet-reps", type=int, help="runs per plan/refresh/scale-out size (default: --reps)")
    parser.add_argument("--info-mds", type=int, help="MachineDeployments listed by the info scenario (default 50)")
    parser.add_argument("--restart-mds", type=int, help="MachineDeployments restarted (default 10)")
    parser.add_argument("--wait-mds", type=int, help="MachineDeployments restarted and waited for (default 3)")
    parser.add_argument("--plan", help="check-mode plan sizes, HOSTSxMDS_PER_HOST[@FORKS],... ('' for none)")
    parser.add_argument("--scaleout", help="plan sizes with forks for the scale-out table, e.g. 2x10@1,2x10@5")
    parser.add_argument("--refresh", help="refresh sizes, as --plan")
    parser.add_argument("--max-servers", type=int,
                        help="real API servers at most; more management clusters share them (default 10)")
    parser.add_argument("--big", type=int, default=200, help="fleets with more MDs than this run once (default 200)")
    parser.add_argument("--bench-venv", default=str(REPO / ".venv-bench"))
    parser.add_argument("--out", default=str(REPO / ".build" / "bench"))
    parser.add_argument("--docs", help="rewrite the bench sections of this file (docs/performance.md)")
    parser.add_argument("--from-results", help="measure nothing: render these results.json files, comma-separated, as "
                                               "one run (and rewrite --docs)")
    args = parser.parse_args(argv)
    for key, value in dict({"max_servers": 10}, **(SMOKE if args.smoke else FULL)).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.fleet_reps is None:
        args.fleet_reps = args.reps
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.from_results:
        tables = render(merge_results([json.loads(Path(p).read_text(encoding="utf-8"))
                                       for p in args.from_results.split(",")]))
        if args.docs:
            rewrite_docs(Path(args.docs), tables)
        for name, text in tables.items():
            print(f"\n## {name}\n\n{text}")
        return
    bench = Bench(args)
    tables = bench.run()
    for name, text in tables.items():
        print(f"\n## {name}\n\n{text}")
    print(f"\nresults: {bench.out / 'results.json'}")


if __name__ == "__main__":
    main()
