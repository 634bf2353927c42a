"""A GitOps reconciler for MachineDeployments (fleet spec ``gitops``), run by the controller process.

"Git" holds an MD's template reference (annotation ``GIT_REF``, written at creation: a test changes Git by changing
it). Flux-like (``flux``): every interval, a server-side apply of Git's state as field manager
``kustomize-controller`` with force, as Flux's kustomize-controller does, whether it drifted or not; the MD carries
Flux's label. Argo-CD-like (``argo``): the MD carries Argo CD's tracking annotation; Git's state is written with a
client-side apply (a merge patch) as ``argocd-controller`` when Git changed, and with ``self_heal`` also whenever
the MD drifted from it.
"""

import json
import logging
import threading
import time

import urllib3

from .kubeapi import ApiError, resource_path

log = logging.getLogger("capisim.gitops")

RECONCILER = "sim.capi-rollout.dev/gitops"  # flux | argo
INTERVAL = "sim.capi-rollout.dev/gitops-interval-seconds"
SELF_HEAL = "sim.capi-rollout.dev/gitops-self-heal"
GIT_REF = "sim.capi-rollout.dev/git-infrastructure-ref"  # the template reference in Git (JSON)
FLUX_LABEL = "kustomize.toolkit.fluxcd.io/name"
ARGO_TRACKING = "argocd.argoproj.io/tracking-id"
MANAGERS = {"flux": "kustomize-controller", "argo": "argocd-controller"}


def mark(md, settings, app):
    """Put an MD (as the fleet loader creates it) under a reconciler: its settings, Git's state, the tool's marks."""
    meta = md["metadata"]
    namespace = meta.get("namespace", "default")
    annotations = meta.setdefault("annotations", {})
    annotations.update({RECONCILER: settings["reconciler"], INTERVAL: str(settings["interval_seconds"]),
                        SELF_HEAL: str(settings["self_heal"]).lower(),
                        GIT_REF: json.dumps(md["spec"]["template"]["spec"]["infrastructureRef"], sort_keys=True)})
    if settings["reconciler"] == "flux":
        meta.setdefault("labels", {})[FLUX_LABEL] = app
    else:
        annotations[ARGO_TRACKING] = f"{app}:cluster.x-k8s.io/MachineDeployment:{namespace}/{meta['name']}"


def _desired(md, git_ref):
    meta = md["metadata"]
    body = {"apiVersion": md["apiVersion"], "kind": "MachineDeployment",
            "metadata": {"name": meta["name"], "namespace": meta["namespace"]},
            "spec": {"clusterName": md["spec"]["clusterName"], "template": {"spec": {
                "clusterName": md["spec"]["template"]["spec"]["clusterName"], "infrastructureRef": git_ref}}}}
    labels = {FLUX_LABEL: (meta.get("labels") or {})[FLUX_LABEL]} if FLUX_LABEL in (meta.get("labels") or {}) else None
    if labels:
        body["metadata"]["labels"] = labels
    return body


class GitOps:
    """Reconciles the marked MDs of a Store; ``api`` is a KubeAPI of its own."""

    def __init__(self, api, store, stop, group_version):
        self.api = api
        self.store = store
        self.stop = stop
        self.group, self.version = group_version
        self.due = {}  # (namespace, name) -> monotonic time of the next reconcile
        self.synced = {}  # (namespace, name) -> the Git state last synced (argo)

    def start(self):
        threading.Thread(target=self._run, name="gitops", daemon=True).start()

    def _run(self):
        while not self.stop.wait(0.5):
            self.reconcile_all()

    def reconcile_all(self, now=None):
        for md in self.store.list("MachineDeployment"):
            annotations = md["metadata"].get("annotations") or {}
            if annotations.get(RECONCILER) in MANAGERS:
                try:
                    self.reconcile(md, annotations, now=now)
                # An API server that restarts or hangs (tests do both) must not end the thread; the next interval
                # tries again, as Flux and Argo CD do.
                except (ApiError, urllib3.exceptions.HTTPError, OSError) as err:
                    log.warning("gitops %s/%s: %s", md["metadata"]["namespace"], md["metadata"]["name"], err)

    def reconcile(self, md, annotations, now=None):
        now = time.monotonic() if now is None else now
        key = (md["metadata"]["namespace"], md["metadata"]["name"])
        if now < self.due.get(key, 0):
            return None
        self.due[key] = now + float(annotations.get(INTERVAL) or 5)
        git_ref = json.loads(annotations[GIT_REF])
        path = resource_path(self.group, self.version, "machinedeployments", *key)
        reconciler = annotations[RECONCILER]
        if reconciler == "flux":
            return self.api.request("PATCH", path, body=_desired(md, git_ref), content_type="application/apply-patch+yaml",
                                    params={"fieldManager": MANAGERS["flux"], "force": "true"})
        current = md["spec"]["template"]["spec"]["infrastructureRef"]
        git_changed = self.synced.get(key) != git_ref
        drifted = any(current.get(field) != value for field, value in git_ref.items())
        if not (git_changed or (drifted and annotations.get(SELF_HEAL) == "true")):
            return None
        self.synced[key] = git_ref
        if not drifted:
            return None
        return self.api.request("PATCH", path, body={"spec": {"template": {"spec": {"infrastructureRef": git_ref}}}},
                                content_type="application/merge-patch+json", params={"fieldManager": MANAGERS["argo"]})
