"""API writes of the controller: every answer goes into the Store at once, a 409 refreshes it and asks for a retry.

Spec/metadata changes are PUTs carrying the cached resourceVersion (optimistic concurrency, like a controller-runtime
Update); status goes through the status subresource. On 409 Conflict the object is read again into the Store and
``Conflict`` is raised so the worker re-runs the whole reconcile on fresh data. ``on_write(event, old, new)`` is
told about every change at once, so the keys it affects are queued before the worker takes its next key (the watch
event that follows later changes nothing).
"""

import copy

from ..kubeapi import ApiError, resource_path
from . import model as m

# kind -> (group, plural)
KINDS = {
    "Cluster": (m.CLUSTER_GROUP, "clusters"),
    "MachineDeployment": (m.CLUSTER_GROUP, "machinedeployments"),
    "MachineSet": (m.CLUSTER_GROUP, "machinesets"),
    "Machine": (m.CLUSTER_GROUP, "machines"),
    "KubeadmControlPlane": (m.CONTROLPLANE_GROUP, "kubeadmcontrolplanes"),
    "DockerMachineTemplate": (m.INFRA_GROUP, "dockermachinetemplates"),
    "KubeadmConfigTemplate": (m.BOOTSTRAP_GROUP, "kubeadmconfigtemplates"),
    "ClusterClass": (m.CLUSTER_GROUP, "clusterclasses"),
    "KubeadmControlPlaneTemplate": (m.CONTROLPLANE_GROUP, "kubeadmcontrolplanetemplates"),
}


class Conflict(Exception):
    """The object changed under us; the Store now holds the current version."""


def collection_path(kind, version, ns=None):
    group, plural = KINDS[kind]
    return resource_path(group, version, plural, ns)


def object_path(obj):
    group, plural = KINDS[obj["kind"]]
    return resource_path(group, obj["apiVersion"].rsplit("/", 1)[-1], plural, m.namespace(obj), m.name(obj))


class Writer:
    def __init__(self, api, store, on_write):
        self.api, self.store, self.on_write = api, store, on_write

    def _stored(self, kind, answer):
        answer.setdefault("kind", kind)
        if m.deleting(answer) and not m.meta(answer).get("finalizers"):
            # The write removed the last finalizer: the object is gone now.
            old = self.store.remove(kind, m.namespace(answer), m.name(answer))
            self.on_write("DELETED", old, answer)
        else:
            old, stored = self.store.upsert(answer)
            if stored is not None:
                self.on_write("ADDED" if old is None else "MODIFIED", old, answer)
        return answer

    def _refresh(self, obj, err):
        try:
            current = self.api.get(object_path(obj))
        except ApiError as gone:
            if gone.status == 404:
                self.store.remove(obj["kind"], m.namespace(obj), m.name(obj))
                raise Conflict(f"{obj['kind']} {m.namespace(obj)}/{m.name(obj)} is gone") from err
            raise
        self._stored(obj["kind"], current)
        raise Conflict(f"{obj['kind']} {m.namespace(obj)}/{m.name(obj)}: {err.message}") from err

    def create(self, obj):
        body = copy.deepcopy(obj)
        body["metadata"].pop("creationTimestamp", None)
        body.pop("status", None)
        group, plural = KINDS[obj["kind"]]
        path = resource_path(group, obj["apiVersion"].rsplit("/", 1)[-1], plural, m.namespace(obj))
        return self._stored(obj["kind"], self.api.create(path, body))

    def update(self, obj):
        try:
            return self._stored(obj["kind"], self.api.replace(object_path(obj), obj))
        except ApiError as err:
            if err.status in (404, 409):
                self._refresh(obj, err)
            raise

    def update_status(self, obj, status):
        body = dict(obj)
        body["status"] = status
        try:
            return self._stored(obj["kind"], self.api.replace_status(object_path(obj), body))
        except ApiError as err:
            if err.status in (404, 409):
                self._refresh(obj, err)
            raise

    def apply(self, obj, field_manager):
        """Server-side apply with force (the topology controller's writes); creates the object when missing."""
        return self._stored(obj["kind"], self.api.apply(object_path(obj), obj, field_manager, force=True))

    def patch(self, obj, patch):
        """A merge patch (no resourceVersion precondition), for fields nobody else writes."""
        try:
            return self._stored(obj["kind"], self.api.patch_merge(object_path(obj), patch))
        except ApiError as err:
            if err.status == 404:
                self._refresh(obj, err)
            raise

    def delete(self, obj):
        """Delete (background propagation); the answer is the object with its deletionTimestamp while finalizers
        hold it, else the object is gone from the Store. None when it was already gone."""
        answer = self.api.delete(object_path(obj))
        if answer is None or answer.get("kind") == "Status" or not m.meta(answer).get("finalizers"):
            old = self.store.remove(obj["kind"], m.namespace(obj), m.name(obj))
            self.on_write("DELETED", old, obj)
            return None
        return self._stored(obj["kind"], answer)
