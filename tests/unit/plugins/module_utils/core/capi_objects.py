# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Realistic Cluster API objects for the core unit tests, modelled on the v1.10.10 (v1beta1) and
v1.14.0 (v1beta2) CRD schemas in tests/crds. Paths are written out literally here (not taken
from core.apiversion) so the tests check the core against the schema, not against itself.

Every builder returns a fully rolled-out object (observed, all counters == replicas, RollingOut
False); tests then bend the field they are about.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import datetime

UTC = datetime.timezone.utc
NOW = datetime.datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
NOW_TEXT = "2026-03-01T12:00:00Z"
# The rolloutAfter a restart "now" writes at NOW: one whole second before the server's second (core.restart).
TRIGGER_TEXT = "2026-03-01T11:59:59Z"
HOUR_LATER = "2026-03-01T13:00:00Z"
HOUR_EARLIER = "2026-03-01T11:00:00Z"
CREATED = "2026-01-10T08:00:00Z"
VERSIONS = ("v1beta1", "v1beta2")


def _cond_v1beta1(cond_type, status="True", reason="", message="", severity=""):
    cond = {"type": cond_type, "status": status, "lastTransitionTime": CREATED}
    if reason:
        cond["reason"] = reason
    if message:
        cond["message"] = message
    if severity:
        cond["severity"] = severity
    return cond


def _cond(cond_type, status, reason, generation, message=""):
    # metav1.Condition: message is required by the schema (may be empty)
    return {"type": cond_type, "status": status, "reason": reason, "observedGeneration": generation,
            "lastTransitionTime": CREATED, "message": message}


def _md_conditions(generation):
    return [
        _cond("Available", "True", "Available", generation),
        _cond("MachinesReady", "True", "Ready", generation),
        _cond("MachinesUpToDate", "True", "UpToDate", generation),
        _cond("RollingOut", "False", "NotRollingOut", generation),
        _cond("ScalingDown", "False", "NotScalingDown", generation),
        _cond("ScalingUp", "False", "NotScalingUp", generation),
        _cond("Remediating", "False", "NotRemediating", generation),
        _cond("Deleting", "False", "NotDeleting", generation),
        _cond("Paused", "False", "NotPaused", generation),
    ]


def _infra_ref(version, name, kind="DockerMachineTemplate", namespace="default"):
    if version == "v1beta1":
        return {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": kind, "name": name, "namespace": namespace}
    return {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": kind, "name": name}


def _bootstrap_ref(version, name):
    if version == "v1beta1":
        return {"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1", "kind": "KubeadmConfigTemplate", "name": name, "namespace": "default"}
    return {"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfigTemplate", "name": name}


def machine_deployment(version="v1beta2", name="md-0", namespace="default", cluster="c1", replicas=3, generation=2,
                       k8s_version="v1.30.2", infra="md-0-infra-v1", revision="2"):
    labels = {"cluster.x-k8s.io/cluster-name": cluster}
    selector = {"matchLabels": {"cluster.x-k8s.io/cluster-name": cluster, "cluster.x-k8s.io/deployment-name": name}}
    obj = {
        "apiVersion": f"cluster.x-k8s.io/{version}",
        "kind": "MachineDeployment",
        "metadata": {
            "name": name, "namespace": namespace, "uid": f"uid-{name}", "generation": generation,
            "resourceVersion": "4711", "creationTimestamp": CREATED, "labels": labels,
            "annotations": {"machinedeployment.clusters.x-k8s.io/revision": revision},
            "ownerReferences": [{"apiVersion": f"cluster.x-k8s.io/{version}", "kind": "Cluster", "name": cluster, "uid": "uid-c1"}],
        },
        "spec": {
            "clusterName": cluster,
            "replicas": replicas,
            "selector": selector,
            "template": {
                "metadata": {"labels": dict(selector["matchLabels"])},
                "spec": {
                    "clusterName": cluster,
                    "version": k8s_version,
                    "bootstrap": {"configRef": _bootstrap_ref(version, f"{name}-bootstrap")},
                    "infrastructureRef": _infra_ref(version, infra),
                },
            },
        },
    }
    selector_text = f"cluster.x-k8s.io/cluster-name={cluster},cluster.x-k8s.io/deployment-name={name}"
    if version == "v1beta1":
        obj["spec"].update({
            "minReadySeconds": 0, "revisionHistoryLimit": 1, "progressDeadlineSeconds": 600,
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0, "deletePolicy": "Random"}},
        })
        obj["status"] = {
            "observedGeneration": generation, "selector": selector_text, "phase": "Running",
            "replicas": replicas, "updatedReplicas": replicas, "readyReplicas": replicas,
            "availableReplicas": replicas, "unavailableReplicas": 0,
            "conditions": [_cond_v1beta1("Ready"), _cond_v1beta1("Available"), _cond_v1beta1("MachineSetReady")],
            "v1beta2": {"readyReplicas": replicas, "availableReplicas": replicas, "upToDateReplicas": replicas,
                        "conditions": _md_conditions(generation)},
        }
    else:
        obj["spec"]["rollout"] = {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}}
        obj["spec"]["deletion"] = {"order": "Random"}
        obj["status"] = {
            "observedGeneration": generation, "selector": selector_text, "phase": "Running",
            "replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas, "upToDateReplicas": replicas,
            "versions": [{"version": k8s_version, "replicas": replicas}],
            "conditions": _md_conditions(generation),
            "deprecated": {"v1beta1": {"updatedReplicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas,
                                       "unavailableReplicas": 0,
                                       "conditions": [_cond_v1beta1("Ready"), _cond_v1beta1("Available")]}},
        }
    return obj


def kubeadm_control_plane(version="v1beta2", name="c1-cp", namespace="default", cluster="c1", replicas=3, generation=2,
                          k8s_version="v1.30.2", infra="c1-cp-infra-v1"):
    obj = {
        "apiVersion": f"controlplane.cluster.x-k8s.io/{version}",
        "kind": "KubeadmControlPlane",
        "metadata": {
            "name": name, "namespace": namespace, "uid": f"uid-{name}", "generation": generation,
            "resourceVersion": "815", "creationTimestamp": CREATED,
            "labels": {"cluster.x-k8s.io/cluster-name": cluster},
            "ownerReferences": [{"apiVersion": f"cluster.x-k8s.io/{version}", "kind": "Cluster", "name": cluster, "uid": "uid-c1",
                                 "controller": True, "blockOwnerDeletion": True}],
        },
        "spec": {
            "replicas": replicas,
            "version": k8s_version,
            "kubeadmConfigSpec": {"clusterConfiguration": {"apiServer": {"certSANs": ["localhost", "127.0.0.1"]}}},
        },
    }
    selector_text = f"cluster.x-k8s.io/cluster-name={cluster},cluster.x-k8s.io/control-plane"
    if version == "v1beta1":
        obj["spec"]["machineTemplate"] = {"infrastructureRef": _infra_ref(version, infra)}
        obj["spec"]["rolloutStrategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}
        obj["status"] = {
            "observedGeneration": generation, "selector": selector_text, "replicas": replicas, "updatedReplicas": replicas,
            "readyReplicas": replicas, "unavailableReplicas": 0, "version": k8s_version, "ready": True, "initialized": True,
            "conditions": [_cond_v1beta1("Ready"), _cond_v1beta1("Available"), _cond_v1beta1("MachinesSpecUpToDate"),
                           _cond_v1beta1("Resized")],
            "v1beta2": {"readyReplicas": replicas, "availableReplicas": replicas, "upToDateReplicas": replicas,
                        "conditions": _md_conditions(generation)},
        }
    else:
        obj["spec"]["machineTemplate"] = {"spec": {"infrastructureRef": _infra_ref(version, infra)}}
        obj["spec"]["rollout"] = {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}
        obj["status"] = {
            "observedGeneration": generation, "selector": selector_text, "replicas": replicas, "upToDateReplicas": replicas,
            "readyReplicas": replicas, "availableReplicas": replicas, "version": k8s_version,
            "versions": [{"version": k8s_version, "replicas": replicas}],
            "initialization": {"controlPlaneInitialized": True},
            "conditions": _md_conditions(generation),
            "deprecated": {"v1beta1": {"updatedReplicas": replicas, "readyReplicas": replicas, "unavailableReplicas": 0,
                                       "conditions": [_cond_v1beta1("Ready"), _cond_v1beta1("MachinesSpecUpToDate")]}},
        }
    return obj


def machine_set(version="v1beta2", md_name="md-0", suffix="abcde", revision="2", revision_history=None, replicas=3,
                k8s_version="v1.30.2", infra="md-0-infra-v1", created=CREATED, owner_uid=None, cluster="c1"):
    name = f"{md_name}-{suffix}"
    template_hash = f"3911463341-{suffix}"
    labels = {"cluster.x-k8s.io/cluster-name": cluster, "cluster.x-k8s.io/deployment-name": md_name,
              "machine-template-hash": template_hash}
    annotations = {"machinedeployment.clusters.x-k8s.io/revision": revision,
                   "machinedeployment.clusters.x-k8s.io/desired-replicas": "3",
                   "machinedeployment.clusters.x-k8s.io/max-replicas": "4"}
    if revision_history:
        annotations["machinedeployment.clusters.x-k8s.io/revision-history"] = revision_history
    obj = {
        "apiVersion": f"cluster.x-k8s.io/{version}",
        "kind": "MachineSet",
        "metadata": {
            "name": name, "namespace": "default", "uid": f"uid-{name}", "generation": 1, "creationTimestamp": created,
            "labels": labels, "annotations": annotations,
            "ownerReferences": [{"apiVersion": f"cluster.x-k8s.io/{version}", "kind": "MachineDeployment", "name": md_name,
                                 "uid": owner_uid or f"uid-{md_name}", "controller": True, "blockOwnerDeletion": True}],
        },
        "spec": {
            "clusterName": cluster,
            "replicas": replicas,
            "selector": {"matchLabels": {"cluster.x-k8s.io/cluster-name": cluster, "cluster.x-k8s.io/deployment-name": md_name,
                                         "machine-template-hash": template_hash}},
            "template": {
                "metadata": {"labels": {"cluster.x-k8s.io/cluster-name": cluster, "cluster.x-k8s.io/deployment-name": md_name,
                                        "machine-template-hash": template_hash}},
                "spec": {
                    "clusterName": cluster,
                    "version": k8s_version,
                    "bootstrap": {"configRef": _bootstrap_ref(version, f"{md_name}-bootstrap")},
                    "infrastructureRef": _infra_ref(version, infra),
                },
            },
        },
    }
    if version == "v1beta1":
        obj["status"] = {"observedGeneration": 1, "replicas": replicas, "fullyLabeledReplicas": replicas,
                         "readyReplicas": replicas, "availableReplicas": replicas,
                         "v1beta2": {"readyReplicas": replicas, "availableReplicas": replicas, "upToDateReplicas": replicas}}
    else:
        obj["status"] = {"observedGeneration": 1, "replicas": replicas, "readyReplicas": replicas,
                         "availableReplicas": replicas, "upToDateReplicas": replicas,
                         "deprecated": {"v1beta1": {"readyReplicas": replicas, "availableReplicas": replicas,
                                                    "fullyLabeledReplicas": replicas}}}
    return obj


def machine(version="v1beta2", name="md-0-abcde-x1y2z", ms_name="md-0-abcde", md_name="md-0", ready=True, up_to_date=True,
            available=True, phase="Running", node="node-1", k8s_version="v1.30.2", deleting=False):
    def status_word(flag):
        return "True" if flag else "False"

    conditions = [
        _cond("Available", status_word(available), "Available" if available else "NotReady", 1),
        _cond("Ready", status_word(ready), "Ready" if ready else "NotReady", 1,
              "" if ready else "* NodeHealthy: Waiting for a Node with spec.providerID docker:////" + name + " to exist"),
        _cond("UpToDate", status_word(up_to_date), "UpToDate" if up_to_date else "NotUpToDate", 1,
              "" if up_to_date else "* Version v1.30.2, v1.31.0 required"),
    ]
    obj = {
        "apiVersion": f"cluster.x-k8s.io/{version}",
        "kind": "Machine",
        "metadata": {
            "name": name, "namespace": "default", "uid": f"uid-{name}", "generation": 1, "creationTimestamp": CREATED,
            "labels": {"cluster.x-k8s.io/cluster-name": "c1", "cluster.x-k8s.io/deployment-name": md_name,
                       "cluster.x-k8s.io/set-name": ms_name},
            "ownerReferences": [{"apiVersion": f"cluster.x-k8s.io/{version}", "kind": "MachineSet", "name": ms_name,
                                 "uid": f"uid-{ms_name}", "controller": True, "blockOwnerDeletion": True}],
        },
        "spec": {
            "clusterName": "c1",
            "version": k8s_version,
            "bootstrap": {"dataSecretName": name},
            "infrastructureRef": _infra_ref(version, name, kind="DockerMachine"),
            "providerID": f"docker:////{name}",
        },
        "status": {"phase": phase, "observedGeneration": 1},
    }
    if deleting:
        obj["metadata"]["deletionTimestamp"] = NOW_TEXT
    if node:
        obj["status"]["nodeInfo"] = {
            "architecture": "amd64", "bootID": "b0", "containerRuntimeVersion": "containerd://1.7.20",
            "kernelVersion": "6.1.0", "kubeProxyVersion": k8s_version, "kubeletVersion": k8s_version, "machineID": "m0",
            "operatingSystem": "linux", "osImage": "Debian GNU/Linux 12 (bookworm)", "systemUUID": "u0",
        }
    if version == "v1beta1":
        if node:
            obj["status"]["nodeRef"] = {"apiVersion": "v1", "kind": "Node", "name": node, "uid": f"uid-{node}"}
        obj["status"].update({"bootstrapReady": True, "infrastructureReady": True,
                              "conditions": [_cond_v1beta1("Ready", status_word(ready), "" if ready else "WaitingForNode",
                                                           severity="" if ready else "Info")],
                              "v1beta2": {"conditions": conditions}})
    else:
        if node:
            obj["status"]["nodeRef"] = {"name": node}
        obj["status"].update({"initialization": {"bootstrapDataSecretCreated": True, "infrastructureProvisioned": True},
                              "conditions": conditions})
    return obj


def cluster(version="v1beta2", name="c1", paused=False, topology=None):
    obj = {
        "apiVersion": f"cluster.x-k8s.io/{version}",
        "kind": "Cluster",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "generation": 1},
        "spec": {},
    }
    if paused:
        obj["spec"]["paused"] = True
    if topology is not None:
        obj["spec"]["topology"] = topology
    return obj


# ------------------------------------------------------------------------------------------------
# bending helpers


def status_v1beta2_block(obj):
    """Where v1beta2-meaning counters/conditions live for this object's API version."""
    if obj["apiVersion"].endswith("/v1beta1"):
        return obj["status"]["v1beta2"]
    return obj["status"]


def set_counts(obj, replicas=None, up_to_date=None, available=None, ready=None, legacy_updated=None, legacy_available=None,
               legacy_ready=None):
    """Set status counters at the literal schema locations for the object's version; None = keep."""
    obj = copy.deepcopy(obj)
    status = obj["status"]
    new = status_v1beta2_block(obj)
    v1beta1 = obj["apiVersion"].endswith("/v1beta1")
    legacy = status if v1beta1 else status["deprecated"]["v1beta1"]
    if replicas is not None:
        status["replicas"] = replicas
    if up_to_date is not None:
        new["upToDateReplicas"] = up_to_date
    if available is not None:
        new["availableReplicas"] = available
    if ready is not None:
        new["readyReplicas"] = ready
    if legacy_updated is not None:
        legacy["updatedReplicas"] = legacy_updated
    if legacy_available is not None:
        legacy["availableReplicas"] = legacy_available
    if legacy_ready is not None:
        legacy["readyReplicas"] = legacy_ready
    return obj


def set_condition(obj, cond_type, status, reason, generation=None, message=""):
    """Replace/add a metav1 condition at the right place for the object's version."""
    obj = copy.deepcopy(obj)
    block = status_v1beta2_block(obj)
    generation = obj["metadata"]["generation"] if generation is None else generation
    new = _cond(cond_type, status, reason, generation, message)
    block["conditions"] = [c for c in block.get("conditions", []) if c["type"] != cond_type] + [new]
    return obj


def set_rollout_after(obj, value):
    obj = copy.deepcopy(obj)
    if obj["apiVersion"].endswith("/v1beta1"):
        obj["spec"]["rolloutAfter"] = value
    else:
        obj["spec"].setdefault("rollout", {})["after"] = value
    return obj


def rollout_after_of(obj):
    spec = obj.get("spec") or {}
    if obj["apiVersion"].endswith("/v1beta1"):
        return spec.get("rolloutAfter")
    return (spec.get("rollout") or {}).get("after")


def rollout_after_in_patch(version, patch):
    if version == "v1beta1":
        return ((patch or {}).get("spec") or {}).get("rolloutAfter")
    return (((patch or {}).get("spec") or {}).get("rollout") or {}).get("after")


def annotate(obj, key, value):
    obj = copy.deepcopy(obj)
    obj["metadata"].setdefault("annotations", {})[key] = value
    return obj


def label(obj, key, value):
    obj = copy.deepcopy(obj)
    obj["metadata"].setdefault("labels", {})[key] = value
    return obj


def bare(kind, name, version="v1beta2", namespace="default"):
    """An object with no spec and no status, as in clusterctl's Test_ObjectRestarter fixtures."""
    group = "controlplane.cluster.x-k8s.io" if kind == "KubeadmControlPlane" else "cluster.x-k8s.io"
    return {"apiVersion": f"{group}/{version}", "kind": kind, "metadata": {"name": name, "namespace": namespace}}


def apply_merge_patch(obj, patch):
    """RFC 7386, as the API server applies application/merge-patch+json."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(obj) if isinstance(obj, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = apply_merge_patch(out.get(key), value)
    return out


class TestFailed(Exception):
    """A ``test`` operation failed (the API server answers 422)."""


def apply_json_patch(obj, ops):
    """The subset of RFC 6902 the core emits, as the API server (evanphx/json-patch) applies it: test /
    add / replace / remove on object members; a ``test`` with value null passes when the member is absent."""
    out = copy.deepcopy(obj)
    for op in ops:
        keys = [part.replace("~1", "/").replace("~0", "~") for part in op["path"].split("/")[1:]]
        parent = out
        for key in keys[:-1]:
            # list members by index (a Cluster topology's workers.machineDeployments)
            child = parent[int(key)] if isinstance(parent, list) and int(key) < len(parent) else \
                None if isinstance(parent, list) else parent.get(key)
            if op["op"] == "test" and not isinstance(child, (dict, list)):
                raise TestFailed(f"test operation does not apply: is missing path: {op['path']}")
            if child is None:
                raise KeyError(key)  # the server's 422 for an add / replace / remove under a missing member
            parent = child
        if op["op"] == "test":
            if parent.get(keys[-1]) != op["value"]:
                raise TestFailed(f"testing value {op['path']} failed")
        elif op["op"] == "remove":
            del parent[keys[-1]]  # KeyError like the server's 422 when absent
        elif op["op"] == "replace":
            assert keys[-1] in parent, op  # the server: "replace operation does not apply: doc is missing key"
            parent[keys[-1]] = copy.deepcopy(op["value"])
        else:
            parent[keys[-1]] = copy.deepcopy(op["value"])
    return out
