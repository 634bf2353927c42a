"""The controller manager: informers feed a Store and a work queue, one worker runs the reconcilers.

Events are mapped to the keys that must be looked at again (an object, its owners, and on spec changes its
children), the way controller-runtime's watches and handlers do. A reconcile that hits a 409 is re-run at once on
fresh data; other failures are retried with backoff. Every key is also resynced every ``sync_period`` seconds.
"""

import datetime
import logging
import random
import threading
import time
import traceback

from ..gitops import GitOps
from ..kubeapi import ApiError
from ..releases import RELEASES
from . import model as m
from . import reconcile_cluster, reconcile_kcp, reconcile_machine, reconcile_md, reconcile_ms
from .cache import Store
from .informer import Informer
from .workqueue import WorkQueue
from .writer import Conflict, Writer, collection_path

log = logging.getLogger("capisim.controller")

RECONCILERS = {
    "Cluster": reconcile_cluster.reconcile,
    "MachineDeployment": reconcile_md.reconcile,
    "MachineSet": reconcile_ms.reconcile,
    "Machine": reconcile_machine.reconcile,
    "KubeadmControlPlane": reconcile_kcp.reconcile,
}
WATCHED = ("Cluster", "MachineDeployment", "MachineSet", "Machine", "KubeadmControlPlane", "DockerMachineTemplate")
# Watched with --topology only (their CRDs are installed only then): the ClusterClass and the templates it references.
TOPOLOGY_WATCHED = ("ClusterClass", "KubeadmConfigTemplate", "KubeadmControlPlaneTemplate")
TEMPLATES = ("DockerMachineTemplate", "KubeadmConfigTemplate", "KubeadmControlPlaneTemplate")
# Children before owners: see workqueue.
PRIORITY = {"Machine": 0, "MachineSet": 1, "MachineDeployment": 2, "KubeadmControlPlane": 2, "Cluster": 3}


def _key(obj):
    return (obj["kind"], m.namespace(obj), m.name(obj))


class Controller:
    """State shared by the reconcilers (``ctx``): Store, Writer, clock, action log, provisioning starts."""

    def __init__(self, make_api, capi_version, sync_period=600.0, topology=False, in_place_accepts=None,
                 in_place_seconds=1.0):
        """``make_api()`` returns a new KubeAPI: each watch gets its own connection pool, the worker another.
        ``capi_version`` is a release of capisim.releases; ``logic`` the controller logic it follows."""
        self.api = api = make_api()
        self.release = RELEASES[capi_version]
        self.logic = self.release.logic
        self.api_version = self.release.api_version
        self.sync_period = sync_period
        self.topology = topology
        # InPlaceUpdates on (a list, maybe empty): the template fields the update extension accepts in place; None: off
        self.in_place_accepts = in_place_accepts
        self.in_place_seconds = in_place_seconds
        self.store = Store()
        self.writer = Writer(api, self.store, self._on_event)
        self.queue = WorkQueue(priority=lambda key: PRIORITY[key[0]])
        self.rng = random.Random()
        self.provisioning = {}  # Machine uid -> provisioning start (shared by the Machines of one batch)
        self.stop = threading.Event()
        self._failures = {}
        # MDs a fleet spec puts under a GitOps reconciler (capisim/gitops.py): another writer, as in real fleets
        self.gitops = GitOps(make_api(), self.store, self.stop, ("cluster.x-k8s.io", self.api_version))
        self.informers = [Informer(make_api(), kind, collection_path(kind, self.api_version), self.store, self._on_event,
                                   self.stop) for kind in WATCHED + (TOPOLOGY_WATCHED if topology else ())]

    # --- services for the reconcilers ---
    @staticmethod
    def now():
        return datetime.datetime.now(datetime.timezone.utc)

    @staticmethod
    def log(message, *args):
        log.info(message, *args)

    def requeue_at(self, key, when):
        self.queue.add_at(key, when.timestamp())

    def cluster_of(self, obj):
        name = m.dig(obj, "spec", "clusterName") or m.labels(obj).get(m.CLUSTER_NAME)
        return self.store.get("Cluster", m.namespace(obj), name) if name else None

    def template_exists(self, ref, ns):
        """Only DockerMachineTemplates are watched; other infrastructure kinds are assumed to exist."""
        if not ref or ref.get("kind") != "DockerMachineTemplate":
            return True
        return self.store.get("DockerMachineTemplate", ns, ref.get("name")) is not None

    def write_status(self, obj, new_status):
        """Write the status subresource when it changed; returns the object as it now is."""
        if not self.release.status_versions:
            new_status.pop("versions", None)
        if obj.get("status") == new_status:
            return obj
        answer = self.writer.update_status(obj, new_status)
        if answer.get("status") != new_status:
            log.warning("%s %s/%s: the API server changed the status we wrote (pruned fields?)", obj["kind"],
                        m.namespace(obj), m.name(obj))
        return answer

    # --- event handling ---
    def _on_event(self, event_type, old, obj):
        kind = obj["kind"]
        keys = [_key(obj)] if kind in RECONCILERS else []
        changed = event_type in ("ADDED", "DELETED") or old is None or _spec_or_meta(old) != _spec_or_meta(obj)
        ns = m.namespace(obj)
        if kind == "Cluster":
            if changed:
                keys += [_key(x) for k in RECONCILERS for x in self.store.list(k, ns)
                         if k != "Cluster" and (m.dig(x, "spec", "clusterName") or m.labels(x).get(m.CLUSTER_NAME)) == m.name(obj)]
        elif kind == "MachineDeployment":
            keys += self._cluster_key(obj)
            if changed:
                for ms in self.store.controlled_by("MachineSet", obj):
                    keys.append(_key(ms))
                    keys += [_key(x) for x in self.store.controlled_by("Machine", ms)]
        elif kind == "MachineSet":
            keys += self._owner_key(obj, "MachineDeployment")
            if event_type == "DELETED" and self.topology:  # its templates may be unused now (reconcile_topology)
                keys += self._cluster_key(obj)
        elif kind == "Machine":
            keys += self._owner_key(obj, "MachineSet") + self._owner_key(obj, "KubeadmControlPlane")
        elif kind == "KubeadmControlPlane":
            keys += self._cluster_key(obj)
            if changed:
                keys += [_key(x) for x in self.store.controlled_by("Machine", obj)]
        if kind == "DockerMachineTemplate":
            keys += [_key(x) for k in ("MachineDeployment", "MachineSet", "KubeadmControlPlane") for x in self.store.list(k, ns)]
        if kind in TEMPLATES + ("ClusterClass",) and self.topology:
            keys += [_key(x) for x in self.store.list("Cluster", ns) if m.dig(x, "spec", "topology")]
        for key in keys:
            self.queue.add(key)

    def _owner_key(self, obj, kind):
        ref = m.controller_ref(obj)
        return [(kind, m.namespace(obj), ref["name"])] if ref and ref.get("kind") == kind else []

    def _cluster_key(self, obj):
        name = m.dig(obj, "spec", "clusterName") or m.labels(obj).get(m.CLUSTER_NAME)
        return [("Cluster", m.namespace(obj), name)] if name else []

    # --- the worker ---
    def run(self):
        for informer in self.informers:
            informer.start()
        for informer in self.informers:
            while not informer.synced.wait(0.5):
                if self.stop.is_set():
                    return
        log.info("caches synced; %d objects", sum(len(self.store.list(k)) for k in WATCHED))
        self.gitops.start()
        next_resync = time.monotonic() + self.sync_period
        while not self.stop.is_set():
            key = self.queue.get(max_wait=1.0)
            if time.monotonic() >= next_resync:
                next_resync = time.monotonic() + self.sync_period
                for kind in RECONCILERS:
                    for obj in self.store.list(kind):
                        self.queue.add(_key(obj))
            if key is not None:
                self._process(key)

    def _process(self, key):
        kind, ns, name = key
        obj = self.store.get(kind, ns, name)
        if obj is None:
            return
        try:
            RECONCILERS[kind](self, obj)
            self._failures.pop(key, None)
        except Conflict as err:
            log.debug("conflict, reconciling %s %s/%s again: %s", kind, ns, name, err)
            self.queue.add(key)
        except Exception as err:  # pylint: disable=broad-except  # one bad object must not stop the manager
            count = self._failures[key] = self._failures.get(key, 0) + 1
            delay = min(0.5 * 2 ** (count - 1), 30.0)
            detail = "" if isinstance(err, ApiError) else "\n" + traceback.format_exc()
            log.error("reconcile %s %s/%s failed (retry in %.1fs): %s%s", kind, ns, name, delay, err, detail)
            self.queue.add_at(key, time.time() + delay)


def _spec_or_meta(obj):
    meta = obj.get("metadata") or {}
    return (obj.get("spec"), meta.get("labels"), meta.get("annotations"), meta.get("deletionTimestamp"), meta.get("ownerReferences"))
