"""The CAPI objects of one workload cluster, as CAPI's defaulting webhooks would leave them.

No CAPI webhook runs on our management clusters, so what the webhooks would add is written here:
strategy defaults, cluster-name labels, selectors with the deployment-name label, the "v" version
prefix, and on v1beta1 revisionHistoryLimit/progressDeadlineSeconds/minReadySeconds and namespaced
refs. v1beta1 refs are ObjectReferences (apiVersion/kind/name/namespace); v1beta2 refs are
{apiGroup, kind, name} and a bootstrap configRef is required.

Per workload cluster, in creation order: Namespace (unless "default"), Cluster, the control plane's
DockerMachineTemplate and KubeadmControlPlane, then per MachineDeployment a KubeadmConfigTemplate,
a DockerMachineTemplate and the MachineDeployment. Template names end in a short hash of their spec,
as template rotation in real fleets produces (<cluster>-<md>-<hash>).
"""

import hashlib
import json

from . import gitops
from .kubeapi import resource_path

CLUSTER_NAME = "cluster.x-k8s.io/cluster-name"
DEPLOYMENT_NAME = "cluster.x-k8s.io/deployment-name"
TOPOLOGY_OWNED = "topology.cluster.x-k8s.io/owned"
TOPOLOGY_DEPLOYMENT_NAME = "topology.cluster.x-k8s.io/deployment-name"
PROVISION_SECONDS = "sim.capi-rollout.dev/provision-seconds"
DELETION_SECONDS = "sim.capi-rollout.dev/deletion-seconds"
DRAIN_SECONDS = "sim.capi-rollout.dev/drain-seconds"
DRAIN_BLOCKED_BY_PDB = "sim.capi-rollout.dev/drain-blocked-by-pdb"

CORE, CONTROLPLANE = "cluster.x-k8s.io", "controlplane.cluster.x-k8s.io"
BOOTSTRAP, INFRA = "bootstrap.cluster.x-k8s.io", "infrastructure.cluster.x-k8s.io"
RUNTIME = "runtime.cluster.x-k8s.io"

# kind -> (API group, plural)
KINDS = {
    "Namespace": ("", "namespaces"),
    "Cluster": (CORE, "clusters"),
    "MachineDeployment": (CORE, "machinedeployments"),
    "MachineSet": (CORE, "machinesets"),
    "Machine": (CORE, "machines"),
    "MachineHealthCheck": (CORE, "machinehealthchecks"),
    "KubeadmControlPlane": (CONTROLPLANE, "kubeadmcontrolplanes"),
    "KubeadmConfigTemplate": (BOOTSTRAP, "kubeadmconfigtemplates"),
    "DockerMachineTemplate": (INFRA, "dockermachinetemplates"),
    "ClusterClass": (CORE, "clusterclasses"),
    "KubeadmControlPlaneTemplate": (CONTROLPLANE, "kubeadmcontrolplanetemplates"),
    "DockerClusterTemplate": (INFRA, "dockerclustertemplates"),
    "ExtensionConfig": (RUNTIME, "extensionconfigs"),
}

# The simulated update extension (fleet spec features: [InPlaceUpdates]) and the hooks it serves, as an ExtensionConfig
# lists them once CAPI's runtime extension controller has discovered them: handler names "<handler>.<ExtensionConfig>"
# (v1.12.3 internal/runtime/registry, docs/book/src/tasks/experimental-features/runtime-sdk/implement-in-place-update-hooks.md).
IN_PLACE_EXTENSION = "capisim-in-place"
IN_PLACE_HOOKS = ("CanUpdateMachineSet", "CanUpdateMachine", "UpdateMachine")
HOOKS_API_VERSION = "hooks.runtime.cluster.x-k8s.io/v1alpha1"

# The ClusterClass named by topology-owned Clusters. It does not exist (its CRD is not installed);
# the API server accepts the reference because only CAPI's webhook would check it.
SIM_CLUSTER_CLASS = "capisim-clusterclass"
SIM_WORKER_CLASS = "default-worker"


def collection_path(obj):
    """The collection an object is created in."""
    group, plural = KINDS[obj["kind"]]
    version = obj["apiVersion"].rsplit("/", 1)[-1]
    return resource_path(group, version, plural, obj["metadata"].get("namespace"))


def object_path(obj):
    group, plural = KINDS[obj["kind"]]
    version = obj["apiVersion"].rsplit("/", 1)[-1]
    return resource_path(group, version, plural, obj["metadata"].get("namespace"), obj["metadata"]["name"])


def _short_hash(value):
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode("utf-8")).hexdigest()[:5]


class _Builder:
    """Objects of one workload cluster (wc: a validated fleetspec workload cluster) in one API version."""

    def __init__(self, wc, api_version):
        self.wc = wc
        self.v1beta2 = api_version == "v1beta2"
        self.api_version = api_version
        self.name = wc["name"]
        self.namespace = wc["namespace"]

    def labels(self, extra=None):
        labels = {CLUSTER_NAME: self.name}
        if self.wc["topology_owned"]:
            labels[TOPOLOGY_OWNED] = ""
        labels.update(extra or {})
        return labels

    def meta(self, name, labels=None, annotations=None):
        meta = {"name": name, "namespace": self.namespace}
        labels = self.labels() if labels is None else labels
        if labels:
            meta["labels"] = labels
        if annotations:
            meta["annotations"] = annotations
        return meta

    def ref(self, group, kind, name):
        if self.v1beta2:
            return {"apiGroup": group, "kind": kind, "name": name}
        return {"apiVersion": f"{group}/{self.api_version}", "kind": kind, "name": name, "namespace": self.namespace}

    def template(self, kind, group, base_name, spec, annotations=None):
        """A *Template object named <base>-<hash of spec>."""
        return {"apiVersion": f"{group}/{self.api_version}", "kind": kind,
                "metadata": self.meta(f"{base_name}-{_short_hash(spec)}", annotations=annotations),
                "spec": {"template": {"spec": spec}}}

    def machine_template(self, base_name, image, provision_seconds, drain=None):
        """A DockerMachineTemplate; ``drain`` (fleet spec) says what its Machines' drains meet (controller/drainplan)."""
        annotations = {PROVISION_SECONDS: str(provision_seconds)}
        if drain and drain["blocked_by_pdb"]:
            annotations[DRAIN_BLOCKED_BY_PDB] = "true"
        if drain and drain["seconds"]:
            annotations[DRAIN_SECONDS] = str(drain["seconds"])
        return self.template("DockerMachineTemplate", INFRA, base_name, {"customImage": image}, annotations)

    def cluster(self, kcp):
        wc = self.wc
        spec = {"clusterNetwork": {"pods": {"cidrBlocks": ["192.168.0.0/16"]},
                                   "services": {"cidrBlocks": ["10.128.0.0/12"]}, "serviceDomain": "cluster.local"}}
        if kcp:
            spec["controlPlaneRef"] = self.ref(CONTROLPLANE, "KubeadmControlPlane", kcp["metadata"]["name"])
        # No infrastructureRef: the DockerCluster CRD is not installed. spec.paused is set by the
        # fleet loader once the cluster's machines are up (a paused Cluster would never get them).
        if wc.get("topology"):
            spec["topology"] = self.topology()  # controlPlaneRef: set by the topology controller
        elif wc["topology_owned"]:
            topology = {"version": wc["kubernetes_version"], "workers": {"machineDeployments": [
                {"class": SIM_WORKER_CLASS, "name": md["name"], "replicas": md["replicas"]}
                for md in wc["machine_deployments"]]}}
            if wc["control_plane"]:
                topology["controlPlane"] = {"replicas": wc["control_plane"]["replicas"]}
            if self.v1beta2:
                topology["classRef"] = {"name": SIM_CLUSTER_CLASS}
            else:
                topology["class"] = SIM_CLUSTER_CLASS
            spec["topology"] = topology
        labels = {TOPOLOGY_OWNED: ""} if wc["topology_owned"] else {}
        return {"apiVersion": f"{CORE}/{self.api_version}", "kind": "Cluster",
                "metadata": self.meta(self.name, labels, {PROVISION_SECONDS: str(wc["provision_seconds"]),
                                                          DELETION_SECONDS: str(wc["deletion_seconds"])}),
                "spec": spec}

    def topology(self):
        """spec.topology of a real topology Cluster (v1beta1: class; v1beta2: classRef)."""
        wc = self.wc
        workers = []
        for md in wc["machine_deployments"]:
            worker = {"class": md["class"], "name": md["name"], "replicas": md["replicas"]}
            if md["overrides"]:
                worker["variables"] = {"overrides": md["overrides"]}
            workers.append(worker)
        topology = {"version": wc["kubernetes_version"], "workers": {"machineDeployments": workers}}
        if wc["control_plane"]:
            topology["controlPlane"] = {"replicas": wc["control_plane"]["replicas"]}
        if wc["topology"]["variables"]:
            topology["variables"] = wc["topology"]["variables"]
        if self.v1beta2:
            topology["classRef"] = {"name": wc["topology"]["class"]}
        else:
            topology["class"] = wc["topology"]["class"]
        return topology

    def control_plane(self):
        """[DockerMachineTemplate, KubeadmControlPlane]"""
        cp = self.wc["control_plane"]
        dmt = self.machine_template(f"{self.name}-control-plane", f"kindest/node:{self.wc['kubernetes_version']}",
                                    self.wc["provision_seconds"])
        infra_ref = self.ref(INFRA, "DockerMachineTemplate", dmt["metadata"]["name"])
        strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": cp["max_surge"]}}
        spec = {"replicas": cp["replicas"], "version": self.wc["kubernetes_version"],
                "kubeadmConfigSpec": {"format": "cloud-config"}}
        if self.v1beta2:
            spec["machineTemplate"] = {"spec": {"infrastructureRef": infra_ref}}
            spec["rollout"] = {"strategy": strategy}
        else:
            spec["machineTemplate"] = {"infrastructureRef": infra_ref}
            spec["rolloutStrategy"] = strategy
        kcp = {"apiVersion": f"{CONTROLPLANE}/{self.api_version}", "kind": "KubeadmControlPlane",
               "metadata": self.meta(f"{self.name}-control-plane"), "spec": spec}
        return [dmt, kcp]

    def machine_deployment(self, md):
        """[KubeadmConfigTemplate, DockerMachineTemplate, MachineDeployment]"""
        name = f"{self.name}-{md['name']}"
        kct = self.template("KubeadmConfigTemplate", BOOTSTRAP, name, {"format": "cloud-config"})
        dmt = self.machine_template(name, md["image"], md["provision_seconds"], md.get("drain"))
        selector = {CLUSTER_NAME: self.name, DEPLOYMENT_NAME: name}
        if self.wc["topology_owned"]:
            selector.update({TOPOLOGY_OWNED: "", TOPOLOGY_DEPLOYMENT_NAME: md["name"]})
        template_spec = {
            "clusterName": self.name, "version": self.wc["kubernetes_version"],
            "bootstrap": {"configRef": self.ref(BOOTSTRAP, "KubeadmConfigTemplate", kct["metadata"]["name"])},
            "infrastructureRef": self.ref(INFRA, "DockerMachineTemplate", dmt["metadata"]["name"]),
        }
        if md["failure_domain"]:
            template_spec["failureDomain"] = md["failure_domain"]
        spec = {"clusterName": self.name, "replicas": md["replicas"], "selector": {"matchLabels": selector},
                "template": {"metadata": {"labels": dict(selector)}, "spec": template_spec}}
        strategy = {"type": md["strategy"]["type"]}
        if strategy["type"] == "RollingUpdate":
            strategy["rollingUpdate"] = {"maxSurge": md["strategy"]["max_surge"],
                                         "maxUnavailable": md["strategy"]["max_unavailable"]}
        if self.v1beta2:
            template_spec["minReadySeconds"] = 0
            spec["rollout"] = {"strategy": strategy}
        else:
            spec.update({"strategy": strategy, "minReadySeconds": 0, "revisionHistoryLimit": 1,
                         "progressDeadlineSeconds": 600})
        labels = self.labels({TOPOLOGY_DEPLOYMENT_NAME: md["name"]} if self.wc["topology_owned"] else None)
        mdobj = {"apiVersion": f"{CORE}/{self.api_version}", "kind": "MachineDeployment",
                 "metadata": self.meta(name, labels), "spec": spec}
        if md.get("gitops"):
            gitops.mark(mdobj, md["gitops"], self.name)
        return [kct, dmt, mdobj]


def _class_ref(builder, group, kind, name):
    """A ClusterClass template reference: v1beta1 {ref: ObjectReference}, v1beta2 {templateRef: {apiVersion, kind, name}}."""
    if builder.v1beta2:
        return {"templateRef": {"apiVersion": f"{group}/{builder.api_version}", "kind": kind, "name": name}}
    return {"ref": builder.ref(group, kind, name)}


def cluster_class_objects(cc, api_version):
    """A validated fleetspec cluster class: its Namespace (unless "default"), templates, then the ClusterClass."""
    builder = _Builder({"name": cc["name"], "namespace": cc["namespace"], "topology_owned": False}, api_version)
    objects = [] if cc["namespace"] == "default" else [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": cc["namespace"]}}]

    def template(kind, group, name, spec):
        return {"apiVersion": f"{group}/{api_version}", "kind": kind, "metadata": {"name": name, "namespace": cc["namespace"]},
                "spec": {"template": {"spec": spec}}}
    objects.append(template("DockerClusterTemplate", INFRA, cc["name"], {}))
    objects.append(template("KubeadmControlPlaneTemplate", CONTROLPLANE, f"{cc['name']}-control-plane",
                            {"kubeadmConfigSpec": {"format": "cloud-config"}}))
    objects.append(template("DockerMachineTemplate", INFRA, f"{cc['name']}-control-plane", {"customImage": cc["control_plane_image"]}))
    workers = []
    for worker in cc["workers"]:
        base = f"{cc['name']}-{worker['class']}"
        objects.append(template("KubeadmConfigTemplate", BOOTSTRAP, base, {"format": "cloud-config"}))
        objects.append(template("DockerMachineTemplate", INFRA, base, {"customImage": worker["image"]}))
        refs = {"bootstrap": _class_ref(builder, BOOTSTRAP, "KubeadmConfigTemplate", base),
                "infrastructure": _class_ref(builder, INFRA, "DockerMachineTemplate", base)}
        workers.append({"class": worker["class"], **(refs if builder.v1beta2 else {"template": refs})})
    control_plane = _class_ref(builder, CONTROLPLANE, "KubeadmControlPlaneTemplate", f"{cc['name']}-control-plane")
    control_plane["machineInfrastructure"] = _class_ref(builder, INFRA, "DockerMachineTemplate", f"{cc['name']}-control-plane")
    variables, patches = [], []
    for var in cc["variables"]:
        schema = {"type": "string"}
        if var["default"] is not None:
            schema["default"] = var["default"]
        variables.append({"name": var["name"], "required": False, "schema": {"openAPIV3Schema": schema}})
        match = {}
        if var["control_plane"]:
            match["controlPlane"] = True
        if var["worker_classes"]:
            match["machineDeploymentClass"] = {"names": var["worker_classes"]}
        patches.append({"name": var["name"], "definitions": [{
            "selector": {"apiVersion": f"{INFRA}/{api_version}", "kind": "DockerMachineTemplate", "matchResources": match},
            "jsonPatches": [{"op": "replace", "path": var["path"], "valueFrom": {"variable": var["name"]}}]}]})
    spec = {"infrastructure": _class_ref(builder, INFRA, "DockerClusterTemplate", cc["name"]), "controlPlane": control_plane,
            "workers": {"machineDeployments": workers}}
    if variables:
        spec.update(variables=variables, patches=patches)
    objects.append({"apiVersion": f"{CORE}/{api_version}", "kind": "ClusterClass",
                    "metadata": {"name": cc["name"], "namespace": cc["namespace"]}, "spec": spec})
    return objects


def machine_health_check(wc, mhc, api_version):
    """A MachineHealthCheck of the workload cluster ``wc`` (fleet spec machine_health_checks); its limits where each API
    version keeps them (v1beta1 spec.maxUnhealthy / unhealthyRange, v1beta2 spec.remediation.triggerIf). Nothing
    remediates: no MachineHealthCheck controller runs (docs/simulator-fidelity.md)."""
    spec = {"clusterName": wc["name"], "selector": {"matchLabels": mhc["match_labels"] or {CLUSTER_NAME: wc["name"]}}}
    limits = {"maxUnhealthy": mhc["max_unhealthy"], "unhealthyRange": mhc["unhealthy_range"]}
    if api_version == "v1beta2":
        limits = {"unhealthyLessThanOrEqualTo": limits["maxUnhealthy"], "unhealthyInRange": limits["unhealthyRange"]}
    limits = {key: value for key, value in limits.items() if value is not None}
    if limits and api_version == "v1beta2":
        spec["remediation"] = {"triggerIf": limits}
    else:
        spec.update(limits)
    meta = {"name": f"{wc['name']}-{mhc['name']}", "namespace": wc["namespace"], "labels": {CLUSTER_NAME: wc["name"]}}
    if mhc["paused"]:
        meta["annotations"] = {"cluster.x-k8s.io/paused": ""}
    return {"apiVersion": f"{CORE}/{api_version}", "kind": "MachineHealthCheck", "metadata": meta, "spec": spec}


def workload_objects(wc, api_version):
    """All objects of a validated workload cluster, in creation order. A topology cluster is its Cluster only: the
    topology controller (capisim.controller.topology) creates the rest from its ClusterClass."""
    builder = _Builder(wc, api_version)
    objects = []
    if wc["namespace"] != "default":
        objects.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": wc["namespace"]}})
    if wc.get("topology"):
        objects.append(builder.cluster(None))
        return objects
    control_plane = builder.control_plane() if wc["control_plane"] else []
    objects.append(builder.cluster(control_plane[1] if control_plane else None))
    objects.extend(control_plane)
    for md in wc["machine_deployments"]:
        objects.extend(builder.machine_deployment(md))
    objects.extend(machine_health_check(wc, mhc, api_version) for mhc in wc.get("machine_health_checks") or [])
    return objects


def in_place_extension_config():
    """(ExtensionConfig, its status): the registration of the simulated update extension. No extension server runs:
    the controller simulator answers the hooks itself (capisim.controller.mdplan in-place planning)."""
    obj = {"apiVersion": f"{RUNTIME}/v1beta2", "kind": "ExtensionConfig",
           "metadata": {"name": IN_PLACE_EXTENSION},
           "spec": {"clientConfig": {"service": {"name": "capisim-in-place", "namespace": "capi-system", "port": 443}}}}
    status = {"handlers": [{"name": f"{hook[0].lower()}{hook[1:]}.{IN_PLACE_EXTENSION}",
                            "requestHook": {"apiVersion": HOOKS_API_VERSION, "hook": hook},
                            "failurePolicy": "Fail", "timeoutSeconds": 10} for hook in IN_PLACE_HOOKS]}
    return obj, status
