"""One local management cluster: etcd + kube-apiserver + kube-controller-manager on loopback ports.

Everything lives in ``<state>/<name>/``: PKI, static token file, audit policy and ``audit.log``,
one kubeconfig per identity, process logs, etcd data and ``cluster.json`` (ports, PIDs, paths).
``stop`` signals exactly the PIDs recorded there. Real RBAC is on; CAPI's CRDs are installed
through the API. kube-controller-manager runs only the garbage collector and the namespace
controller: owner-reference cascading and namespace deletion then behave as on a real cluster.
"""

import base64
import json
import os
import secrets
import signal
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import urllib3
import yaml

from . import crds, procs, rbac
from .kubeapi import ApiError, KubeAPI, resource_path
from .objects import INFRA
from .pki import write_pki
from .progress import progress

REPO = Path(__file__).resolve().parents[3]

# user name -> (kubeconfig file name, groups). "admin" is in system:masters and bypasses RBAC;
# the controller-manager needs cluster-wide list/delete for garbage collection, hence masters too.
USERS = {
    "admin": ("kubeconfig", "system:masters"),
    "rollout-operator": ("kubeconfig-operator", ""),
    "viewer": ("kubeconfig-viewer", ""),
    "capi-controller-manager": ("kubeconfig-controller", ""),
    "system:kube-controller-manager": ("kubeconfig-kube-controller-manager", "system:masters"),
}


def kubeconfig_user_name(user, cluster):
    """The name of ``user``'s entry in the kubeconfigs of management cluster ``cluster`` (the audit log names the user
    itself, from the token file)."""
    return f"{user}@{cluster}"


# Every request is logged once: at ResponseComplete, except watches, which may stay open for
# minutes and are logged when their stream starts. Metadata level: user, verb, URI, user agent, code.
AUDIT_POLICY = """apiVersion: audit.k8s.io/v1
kind: Policy
rules:
  - level: Metadata
    verbs: [watch]
    omitStages: [RequestReceived, ResponseComplete]
  - level: Metadata
    omitStages: [RequestReceived]
"""

EMPTY_STRING_BUG = (
    "this kube-apiserver rejects every empty string in a custom resource (\"\" validated as null), which breaks CAPI "
    "objects (condition messages, topology labels). Cause: the vendored go-openapi/kube-openapi type validator "
    "(validate/type.go) compares reflect.Zero with reflect.ValueOf, which Go >= 1.18 makes equal for \"\". "
    "scripts/build-kube.sh must patch that check to `if data == nil {` and rebuild.")

_PORT_LOCK = threading.Lock()
_PORTS_GIVEN = set()


def free_port():
    """A currently free loopback port, never the same twice in this process (parallel starts)."""
    with _PORT_LOCK:
        while True:
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                port = sock.getsockname()[1]
            if port not in _PORTS_GIVEN:
                _PORTS_GIVEN.add(port)
                return port


def kube_bin_dir():
    """Directory with kube-apiserver/kube-controller-manager v1.20.2 ($KUBE_BIN_DIR, else scripts/build-kube.sh)."""
    if os.environ.get("KUBE_BIN_DIR"):
        return os.environ["KUBE_BIN_DIR"]
    out = subprocess.run(["bash", str(REPO / "scripts" / "build-kube.sh")], check=True, stdout=subprocess.PIPE,
                         text=True).stdout
    return out.strip().splitlines()[-1]


def kubectl_binary():
    """kubectl v1.20.2, built with the API server (scripts/build-kube.sh): what users merge kubeconfigs with."""
    found = os.path.join(kube_bin_dir(), "kubectl")
    if not os.access(found, os.X_OK):
        raise RuntimeError(f"no kubectl in {kube_bin_dir()}: unset KUBE_BIN_DIR so that scripts/build-kube.sh builds it, "
                           "or put kubectl v1.20.2 there")
    return found


def etcd_binary():
    found = os.environ.get("ETCD_BIN") or shutil.which("etcd") or "/usr/bin/etcd"
    if not os.access(found, os.X_OK):
        raise RuntimeError("etcd not found: install Debian's etcd-server package or set ETCD_BIN")
    return found


def _wait_tcp(port, timeout, what):
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what} did not listen on port {port} within {timeout}s") from None
            time.sleep(0.05)


class ManagementCluster:
    """A management cluster's state directory and processes; see the module docstring."""

    def __init__(self, name, state_root, capi_version, topology=False, in_place=False):
        self.name = name
        self.capi_version = capi_version
        # also install the ClusterClass CRDs (capisim.crds.TOPOLOGY_FILES) and run the topology controller
        self.topology = topology
        # InPlaceUpdates on: also install the ExtensionConfig CRD (capisim.crds.IN_PLACE_FILES)
        self.in_place = in_place
        self.dir = Path(state_root).resolve() / name
        self.info_file = self.dir / "cluster.json"

    # ----- state -----
    def info(self):
        """The recorded cluster.json ({} when never started)."""
        try:
            return json.loads(self.info_file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}

    def _save(self, info):
        tmp = self.info_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(info, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        tmp.replace(self.info_file)

    def kubeconfig(self, user="admin"):
        return self.dir / USERS[user][0]

    def api(self, user="admin"):
        return KubeAPI.from_kubeconfig(str(self.kubeconfig(user)))

    @property
    def audit_log(self):
        return self.dir / "audit.log"

    def pids(self):
        return self.info().get("pids", {})

    def running(self):
        """True when every recorded process is alive."""
        pids = self.pids()
        return bool(pids) and all(procs.alive(pid, str(self.dir)) for pid in pids.values())

    def record_process(self, role, popen):
        """Add a process started for this cluster (e.g. the CAPI controller simulator) to cluster.json."""
        info = self.info()
        info.setdefault("pids", {})[role] = popen.pid
        self._save(info)

    # ----- lifecycle -----
    def _write_files(self, port, tokens):
        pki = write_pki(self.dir / "pki", self.name)
        with open(self.dir / "tokens.csv", "w", encoding="utf-8") as handle:
            os.fchmod(handle.fileno(), 0o600)
            for user, (_filename, groups) in USERS.items():
                handle.write(f'{tokens[user]},{user},{user},"{groups}"\n')
        (self.dir / "audit-policy.yaml").write_text(AUDIT_POLICY, encoding="utf-8")
        ca_data = base64.b64encode(Path(pki["ca.crt"]).read_bytes()).decode("ascii")
        cluster = {"server": f"https://127.0.0.1:{port}", "certificate-authority-data": ca_data}
        for user, (filename, _groups) in USERS.items():
            # Every entry is named after the management cluster, as clusterctl's and kind's kubeconfigs are: merged
            # with `kubectl config view --flatten` (docs/awx.md), same-named users would keep only the first token.
            entry = kubeconfig_user_name(user, self.name)
            config = {
                "apiVersion": "v1", "kind": "Config", "current-context": self.name, "preferences": {},
                "clusters": [{"name": self.name, "cluster": cluster}],
                "users": [{"name": entry, "user": {"token": tokens[user]}}],
                "contexts": [{"name": self.name, "context": {"cluster": self.name, "user": entry}}],
            }
            path = self.dir / filename
            path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
            path.chmod(0o600)
        return pki

    def _apiserver_argv(self, bins, pki, ports):
        return [
            os.path.join(bins, "kube-apiserver"),
            f"--etcd-servers=http://127.0.0.1:{ports['etcd']}",
            "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", f"--secure-port={ports['apiserver']}",
            f"--cert-dir={self.dir / 'apiserver-certs'}",
            f"--tls-cert-file={pki['apiserver.crt']}", f"--tls-private-key-file={pki['apiserver.key']}",
            f"--token-auth-file={self.dir / 'tokens.csv'}", "--authorization-mode=RBAC",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-account-key-file={pki['sa.pub']}", f"--service-account-signing-key-file={pki['sa.key']}",
            "--service-cluster-ip-range=10.96.0.0/24", "--disable-admission-plugins=ServiceAccount",
            # No node or endpoint objects exist here: don't reconcile the kubernetes Service endpoints.
            "--endpoint-reconciler-type=none",
            f"--audit-policy-file={self.dir / 'audit-policy.yaml'}", f"--audit-log-path={self.audit_log}",
            "--audit-log-format=json", "--audit-log-mode=blocking",
            # API Priority and Fairness updates its metrics every few ms: a third of an idle server's CPU (pprof). The
            # client's answer to a 429 is unit-tested; nothing here relies on APF's queueing.
            "--enable-priority-and-fairness=false",
        ]

    def start(self, bin_dir):
        """Start the three processes (binaries from bin_dir, see kube_bin_dir), apply RBAC and the CAPI CRDs;
        returns the cluster.json data."""
        started = time.monotonic()
        # fails early, before any process, when CRDs are missing
        crd_list = crds.with_admission_rules(crds.load_crds(self.capi_version, self.topology, self.in_place), self.capi_version)
        if self.dir.exists():
            shutil.rmtree(self.dir)
        self.dir.mkdir(parents=True)
        ports = {"etcd": free_port(), "etcd_peer": free_port(), "apiserver": free_port()}
        tokens = {user: secrets.token_hex(16) for user in USERS}
        pki = self._write_files(ports["apiserver"], tokens)
        info = {"name": self.name, "capi_version": self.capi_version, "api_version": crds.api_version(self.capi_version),
                "server": f"https://127.0.0.1:{ports['apiserver']}", "ports": ports, "pids": {},
                "paths": {"dir": str(self.dir), "ca": pki["ca.crt"], "audit_log": str(self.audit_log),
                          "kubeconfigs": {user: str(self.kubeconfig(user)) for user in USERS}}}
        self._save(info)
        etcd_url = f"http://127.0.0.1:{ports['etcd']}"
        peer_url = f"http://127.0.0.1:{ports['etcd_peer']}"
        self.record_process("etcd", procs.spawn([
            etcd_binary(), "--name", self.name, f"--data-dir={self.dir / 'etcd'}",
            f"--listen-client-urls={etcd_url}", f"--advertise-client-urls={etcd_url}",
            f"--listen-peer-urls={peer_url}", f"--initial-advertise-peer-urls={peer_url}",
            f"--initial-cluster={self.name}={peer_url}", "--log-level=warn", "--logger=zap",
        ], self.dir / "etcd.log"))
        _wait_tcp(ports["etcd"], 20, "etcd")
        self.record_process("kube-apiserver", procs.spawn(self._apiserver_argv(bin_dir, pki, ports),
                                                          self.dir / "kube-apiserver.log"))
        admin = self.api("admin")
        self._wait_ready(admin, 60)
        self.record_process("kube-controller-manager", procs.spawn([
            os.path.join(bin_dir, "kube-controller-manager"),
            f"--kubeconfig={self.kubeconfig('system:kube-controller-manager')}",
            "--controllers=garbagecollector,namespace", "--leader-elect=false",
            # No serving ports: three clusters side by side would fight over the defaults.
            "--port=0", "--secure-port=0",
        ], self.dir / "kube-controller-manager.log"))
        rbac.apply_rbac(admin)
        crds.install_crds(admin, crd_list)
        self._check_empty_strings(admin)
        info = self.info()
        info["ready_seconds"] = round(time.monotonic() - started, 2)
        self._save(info)
        progress(f"{self.name}: kube-apiserver {info['server']} ready with CAPI {self.capi_version} CRDs "
                 f"({info['api_version']}) in {info['ready_seconds']}s")
        return info

    def _wait_ready(self, admin, timeout):
        deadline = time.monotonic() + timeout
        while True:
            try:
                admin.request("GET", "/readyz")
                return
            except (ApiError, urllib3.exceptions.HTTPError) as err:
                if not procs.alive(self.pids().get("kube-apiserver")):
                    raise RuntimeError(f"{self.name}: kube-apiserver exited; see {self.dir / 'kube-apiserver.log'}") from err
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{self.name}: kube-apiserver not ready after {timeout}s: {err}") from err
                time.sleep(0.1)

    def _check_empty_strings(self, admin):
        """Fail fast (instead of at the first status write) on a server built with the empty-string bug."""
        probe = {"apiVersion": f"{INFRA}/{crds.api_version(self.capi_version)}", "kind": "DockerMachineTemplate",
                 "metadata": {"name": "capisim-empty-string-probe", "namespace": "default"},
                 "spec": {"template": {"spec": {"customImage": ""}}}}
        path = resource_path(INFRA, crds.api_version(self.capi_version), "dockermachinetemplates", "default")
        try:
            admin.request("POST", path, probe, params={"dryRun": "All"})
        except ApiError as err:
            if err.status == 422 and 'must be of type string: "null"' in err.message:
                raise RuntimeError(f"{self.name}: {EMPTY_STRING_BUG}\n{err}") from err
            raise

    def restart_apiserver(self, down_seconds):
        """Stop kube-apiserver, keep it down for ``down_seconds``, start it again on the same port with the same
        arguments (etcd keeps the data), and wait until it is ready: an API-server restart as operators see one."""
        pid = self.pids()["kube-apiserver"]
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            argv = [arg.decode("utf-8") for arg in handle.read().split(b"\0") if arg]
        procs.stop([pid], str(self.dir))
        time.sleep(down_seconds)
        self.record_process("kube-apiserver", procs.spawn(argv, self.dir / "kube-apiserver.log"))
        self._wait_ready(self.api("admin"), 60)

    def freeze_apiserver(self):
        """SIGSTOP kube-apiserver: connections are still accepted by the kernel, nothing is answered (a hang).
        ``thaw_apiserver`` resumes it."""
        os.kill(self.pids()["kube-apiserver"], signal.SIGSTOP)

    def thaw_apiserver(self):
        os.kill(self.pids()["kube-apiserver"], signal.SIGCONT)

    def stop(self):
        """Stop every recorded process (SIGTERM, then SIGKILL after a grace); returns their PIDs."""
        pids = list(self.pids().values())
        procs.stop(pids, str(self.dir))
        return pids
