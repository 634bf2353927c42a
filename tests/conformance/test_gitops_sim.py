"""The simulator's GitOps reconciler (capisim/gitops.py), against a recording stand-in for the API."""

import json

import pytest
import urllib3

from capisim import gitops
from capisim.fleetspec import validate
from capisim.objects import workload_objects


class Recorder:
    def __init__(self):
        self.sent = []

    def request(self, method, path, body=None, params=None, content_type=None):
        self.sent.append({"method": method, "path": path, "body": body, "params": params, "content_type": content_type})
        return {}


def marked_md(reconciler, **settings):
    spec = validate({"management_clusters": [{"name": "m", "capi_version": "v1.14", "workload_clusters": [
        {"name": "wg", "namespace": "team-g", "kubernetes_version": "v1.30.4",
         "machine_deployments": [{"name": "md-0", "gitops": dict(settings, reconciler=reconciler)}]}]}]})
    (md,) = [obj for obj in workload_objects(spec["management_clusters"][0]["workload_clusters"][0], "v1beta2")
             if obj["kind"] == "MachineDeployment"]
    md["metadata"]["namespace"] = "team-g"
    return md


def reconcile(rec, md, now):
    return rec.reconcile(md, md["metadata"]["annotations"], now=now)


def test_flux_applies_git_as_kustomize_controller_with_force_every_interval():
    md = marked_md("flux", interval_seconds=3)
    assert md["metadata"]["labels"]["kustomize.toolkit.fluxcd.io/name"] == "wg"
    api = Recorder()
    rec = gitops.GitOps(api, None, None, ("cluster.x-k8s.io", "v1beta2"))
    git_ref = json.loads(md["metadata"]["annotations"][gitops.GIT_REF])
    md["spec"]["template"]["spec"]["infrastructureRef"] = dict(git_ref, name="switched")
    for now in (0.0, 1.0, 3.0):
        reconcile(rec, md, now)
    assert len(api.sent) == 2  # at 0 and 3: not before the interval has passed
    sent = api.sent[0]
    assert sent["params"] == {"fieldManager": "kustomize-controller", "force": "true"}
    assert sent["content_type"] == "application/apply-patch+yaml"
    assert sent["body"]["spec"]["template"]["spec"]["infrastructureRef"] == git_ref
    assert sent["path"].endswith("/namespaces/team-g/machinedeployments/wg-md-0")


@pytest.mark.parametrize("self_heal, heals", [(True, True), (False, False)])
def test_argo_tracks_and_heals_a_drift_only_with_self_heal_but_always_syncs_a_change_of_git(self_heal, heals):
    md = marked_md("argo", interval_seconds=1, self_heal=self_heal)
    assert md["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"] == \
        "wg:cluster.x-k8s.io/MachineDeployment:team-g/wg-md-0"
    api = Recorder()
    rec = gitops.GitOps(api, None, None, ("cluster.x-k8s.io", "v1beta2"))
    reconcile(rec, md, 0.0)
    assert api.sent == []  # in sync
    git_ref = json.loads(md["metadata"]["annotations"][gitops.GIT_REF])
    md["spec"]["template"]["spec"]["infrastructureRef"] = dict(git_ref, name="hand-edit")
    reconcile(rec, md, 1.0)
    assert len(api.sent) == int(heals)
    md["metadata"]["annotations"][gitops.GIT_REF] = json.dumps(dict(git_ref, name="from-git"))  # a commit
    reconcile(rec, md, 2.0)
    assert api.sent[-1]["body"] == {"spec": {"template": {"spec": {"infrastructureRef": dict(git_ref, name="from-git")}}}}
    assert api.sent[-1]["params"] == {"fieldManager": "argocd-controller"}


class Store:
    def __init__(self, *objects):
        self.objects = objects

    def list(self, kind):
        return [obj for obj in self.objects if obj["kind"] == kind]


class Dropping(Recorder):
    """An API server that restarts: the first request ends with a dropped connection."""

    def request(self, method, path, body=None, params=None, content_type=None):
        if not self.sent:
            self.sent.append(None)
            raise urllib3.exceptions.ProtocolError("Connection aborted.", ConnectionResetError(104, "reset"))
        return super().request(method, path, body=body, params=params, content_type=content_type)


def test_a_dropped_connection_is_retried_at_the_next_interval_not_the_end_of_the_reconciler():
    md = marked_md("flux", interval_seconds=2)
    api = Dropping()
    rec = gitops.GitOps(api, Store(md), None, ("cluster.x-k8s.io", "v1beta2"))
    for now in (0.0, 1.0, 2.0):
        rec.reconcile_all(now=now)
    assert api.sent[0] is None and len(api.sent) == 2, api.sent  # at 0 (dropped) and 2 (applied)
    assert api.sent[1]["params"] == {"fieldManager": "kustomize-controller", "force": "true"}
