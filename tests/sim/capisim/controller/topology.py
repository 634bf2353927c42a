"""The Cluster topology controller: a Cluster with spec.topology gets its KubeadmControlPlane, MachineDeployments and
their templates from its ClusterClass (docs/simulator-fidelity.md, "Topology", cites the upstream file per rule).

``desired_state`` is pure (dicts in, a DesiredState out) and follows upstream's desired state computation
(v1.10.10 exp/topology/desiredstate/desired_state.go, same at v1.14.0): generated names (internal/topology/names),
templates cloned from the class's templates with the class's JSON patches of variables applied, a template that
would change is *rotated* (a new generated name; v1.14.0 core/reconcilers/topology/cluster/reconcile_state.go
reconcileReferencedTemplate) and never patched in place. ``reconcile`` writes it by server-side apply as field manager
``capi-topology`` with force (structuredmerge/serversidepatchhelper.go), so a direct change of a field the topology
computes is put back, and removes templates no longer in use.

Interface for the collection (issue 26 §2-§4): the objects carry ``topology.cluster.x-k8s.io/owned: ""`` and
MachineDeployments ``topology.cluster.x-k8s.io/deployment-name: <topology name>``; the Cluster's
``TopologyReconciled`` condition is True once every object matches the topology.
"""

import collections
import copy

from . import model as m
from .names import random_suffix

TOPOLOGY_MANAGER = "capi-topology"
OWNED = "topology.cluster.x-k8s.io/owned"
TOPOLOGY_MD_NAME = "topology.cluster.x-k8s.io/deployment-name"
TEMPLATE_KINDS = ("KubeadmConfigTemplate", "DockerMachineTemplate")
_MAX_NAME, _RANDOM = 63, 5

DesiredState = collections.namedtuple("DesiredState", "control_plane control_plane_infra machine_deployments")
# One desired MachineDeployment with its templates (each template: the object to create or the current one kept).
DesiredMD = collections.namedtuple("DesiredMD", "md bootstrap infra")


# --- names (internal/topology/names/names.go at v1.10.10 and v1.14.0) -------------------------------------------

def generate_name(base, rng):
    """SimpleNameGenerator: the prefix cut to 58 characters plus 5 random characters."""
    return base[:_MAX_NAME - _RANDOM] + random_suffix(rng)


def template_generated_name(rendered, rng):
    """templateGenerator: the rendered template; when longer than 63, cut to 58 plus 5 random characters."""
    return rendered if len(rendered) <= _MAX_NAME else rendered[:_MAX_NAME - _RANDOM] + random_suffix(rng)


def control_plane_name(cluster_name, rng):
    """Default control plane naming template "{{ .cluster.name }}-{{ .random }}" (desired_state.go)."""
    return template_generated_name(f"{cluster_name}-{random_suffix(rng)}", rng)


def machine_deployment_name(cluster_name, topology_name, rng):
    """Default "{{ .cluster.name }}-{{ .machineDeployment.topologyName }}-{{ .random }}" (desired_state.go)."""
    return template_generated_name(f"{cluster_name}-{topology_name}-{random_suffix(rng)}", rng)


def md_template_prefix(cluster_name, topology_name):
    """BootstrapTemplateNamePrefix and InfrastructureMachineTemplateNamePrefix: "<cluster>-<md topology name>-"."""
    return f"{cluster_name}-{topology_name}-"


def control_plane_template_prefix(cluster_name):
    """ControlPlaneInfrastructureMachineTemplateNamePrefix: "<cluster>-"."""
    return f"{cluster_name}-"


# --- reading the Cluster and its ClusterClass, either API version ------------------------------------------------

def class_name(cluster):
    """spec.topology.class (v1beta1) or spec.topology.classRef.name (v1beta2); None without a topology."""
    topology = m.dig(cluster, "spec", "topology")
    if not topology:
        return None
    return m.dig(topology, "classRef", "name") if m.is_v1beta2(cluster) else topology.get("class")


def _class_template_ref(node, v1beta2):
    """(group, kind, name) of a ClusterClass template reference: v1beta1 ``ref``, v1beta2 ``templateRef``."""
    ref = (node or {}).get("templateRef" if v1beta2 else "ref") or {}
    return (ref.get("apiVersion", "").split("/", 1)[0], ref.get("kind"), ref.get("name"))


def worker_class(cclass, name):
    """The worker class entry ``name`` of a ClusterClass, or None."""
    for worker in m.dig(cclass, "spec", "workers", "machineDeployments", default=[]):
        if worker.get("class") == name:
            return worker
    return None


def class_refs(cclass):
    """{"control_plane": ref, "control_plane_infra": ref, "workers": {class: (bootstrap ref, infra ref)}}."""
    v1beta2 = m.is_v1beta2(cclass)
    spec = cclass.get("spec") or {}
    control_plane = spec.get("controlPlane") or {}
    workers = {}
    for worker in m.dig(spec, "workers", "machineDeployments", default=[]):
        template = worker if v1beta2 else worker.get("template") or {}
        workers[worker["class"]] = (_class_template_ref(template.get("bootstrap"), v1beta2),
                                    _class_template_ref(template.get("infrastructure"), v1beta2))
    return {"control_plane": _class_template_ref(control_plane, v1beta2),
            "control_plane_infra": _class_template_ref(control_plane.get("machineInfrastructure"), v1beta2)
            if control_plane.get("machineInfrastructure") else None,
            "workers": workers}


def variable_values(cclass, cluster, md_topology=None):
    """name -> value: the class's schema defaults, then the Cluster's topology variables, then the MachineDeployment
    topology's ``variables.overrides`` (v1.10.10 internal/controllers/topology/cluster/patches/variables)."""
    values = {}
    for var in m.dig(cclass, "spec", "variables", default=[]):
        default = m.dig(var, "schema", "openAPIV3Schema", "default")
        if default is not None:
            values[var["name"]] = default
    for var in m.dig(cluster, "spec", "topology", "variables", default=[]):
        values[var["name"]] = var.get("value")
    for var in m.dig(md_topology or {}, "variables", "overrides", default=[]):
        values[var["name"]] = var.get("value")
    return values


def _set_pointer(doc, pointer, value):
    """JSON patch add/replace at an RFC 6901 pointer (missing intermediate objects are created)."""
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.lstrip("/").split("/")]
    for part in parts[:-1]:
        doc = doc.setdefault(part, {})
    doc[parts[-1]] = copy.deepcopy(value)


def apply_patches(cclass, template, target, values):
    """The class's inline JSON patches whose selector matches ``template`` (apiVersion and kind) and ``target``
    ("controlPlane" or ("machineDeploymentClass", class)), with each ``valueFrom.variable`` value (v1.10.10
    internal/controllers/topology/cluster/patches/inline/json_patch_generator.go matchesSelector, calculateValue).
    A variable without a value is an error there too (LookupError). Returns a patched copy."""
    template = copy.deepcopy(template)
    for patch in m.dig(cclass, "spec", "patches", default=[]):
        for definition in patch.get("definitions") or []:
            selector = definition.get("selector") or {}
            if selector.get("kind") != template["kind"] or selector.get("apiVersion") != template["apiVersion"]:
                continue
            match = selector.get("matchResources") or {}
            if target == "controlPlane":
                if not match.get("controlPlane"):
                    continue
            elif target[1] not in m.dig(match, "machineDeploymentClass", "names", default=[]):
                continue
            for op in definition.get("jsonPatches") or []:
                if op.get("op") not in ("add", "replace"):
                    continue
                name = m.dig(op, "valueFrom", "variable")
                value = op.get("value") if name is None else values.get(name)
                if value is None:
                    raise LookupError(f"patch {patch.get('name')} of ClusterClass {m.name(cclass)}: variable {name!r} has "
                                      f"no value (no schema default, not set in the Cluster topology, no override)")
                _set_pointer(template, op["path"], value)
    return template


def contains(current, desired):
    """Whether every field of ``desired`` has the same value in ``current`` (what an apply of ``desired`` would
    leave unchanged; other fields of ``current`` are someone else's)."""
    if isinstance(desired, dict):
        return isinstance(current, dict) and all(contains(current.get(k), v) for k, v in desired.items())
    return current == desired


# --- the desired state --------------------------------------------------------------------------------------------

class _Desired:
    """Builds the objects of one topology Cluster in its API version."""

    def __init__(self, cluster, cclass, rollout_after, rng):
        self.cluster, self.cclass, self.rng = cluster, cclass, rng
        self.rollout_after = rollout_after
        self.v1beta2 = m.is_v1beta2(cluster)
        self.version = cluster["apiVersion"].rsplit("/", 1)[-1]
        self.name, self.ns = m.name(cluster), m.namespace(cluster)
        self.topology = m.dig(cluster, "spec", "topology", default={})

    def owner(self):
        return [{"apiVersion": self.cluster["apiVersion"], "kind": "Cluster", "name": self.name, "uid": m.uid(self.cluster)}]

    def labels(self, topology_name=None):
        labels = {m.CLUSTER_NAME: self.name, OWNED: ""}
        if topology_name is not None:
            labels[TOPOLOGY_MD_NAME] = topology_name
        return labels

    def ref(self, obj):
        group = obj["apiVersion"].split("/", 1)[0]
        if self.v1beta2:
            return {"apiGroup": group, "kind": obj["kind"], "name": m.name(obj)}
        return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": m.name(obj), "namespace": self.ns}

    def template(self, source, target, values, current, prefix, topology_name=None):
        """The clone of class template ``source`` for ``target``: the current template when it already holds
        the computed spec, else a new one with a generated name (rotation)."""
        patched = apply_patches(self.cclass, source, target, values)
        if current is not None and current["kind"] == source["kind"] and contains(current.get("spec"), patched["spec"]):
            return current
        # templateToTemplate: the class template's own labels and annotations, the topology labels and cloned-from
        # annotations enforced, kubectl's last-applied-configuration dropped
        annotations = {k: v for k, v in m.annotations(source).items() if k != m.LAST_APPLIED}
        annotations.update({m.CLONED_FROM_NAME: m.name(source),
                            m.CLONED_FROM_GROUPKIND: f"{source['kind']}.{source['apiVersion'].split('/', 1)[0]}"})
        return {"apiVersion": source["apiVersion"], "kind": source["kind"],
                "metadata": {"name": generate_name(prefix, self.rng), "namespace": self.ns,
                             "labels": dict(m.labels(source), **self.labels(topology_name)),
                             "ownerReferences": self.owner(), "annotations": annotations},
                "spec": copy.deepcopy(patched["spec"])}

    def control_plane(self, source, infra, current):
        """The KubeadmControlPlane: the class template's spec with replicas, version, infrastructure ref and (v1.13+)
        rollout.after of the topology."""
        spec = copy.deepcopy(m.dig(source, "spec", "template", "spec", default={}))
        cp_topology = self.topology.get("controlPlane") or {}
        if cp_topology.get("replicas") is not None:
            spec["replicas"] = cp_topology["replicas"]
        spec["version"] = self.topology.get("version")
        if self.v1beta2:
            spec.setdefault("machineTemplate", {}).setdefault("spec", {})["infrastructureRef"] = self.ref(infra)
            after = m.dig(cp_topology, "rollout", "after")
            if after and self.rollout_after:
                spec.setdefault("rollout", {})["after"] = after
        else:
            spec.setdefault("machineTemplate", {})["infrastructureRef"] = self.ref(infra)
        name = m.name(current) if current is not None else control_plane_name(self.name, self.rng)
        return {"apiVersion": f"{m.CONTROLPLANE_GROUP}/{self.version}", "kind": "KubeadmControlPlane",
                "metadata": {"name": name, "namespace": self.ns, "labels": self.labels(), "ownerReferences": self.owner()},
                "spec": spec}

    def machine_deployment(self, md_topology, bootstrap, infra, current):
        topology_name = md_topology["name"]
        name = m.name(current) if current is not None else machine_deployment_name(self.name, topology_name, self.rng)
        # cluster.x-k8s.io/deployment-name is what the MachineDeployment defaulting webhook adds
        selector = dict(self.labels(topology_name), **{m.DEPLOYMENT_NAME: name})
        template_spec = {"clusterName": self.name, "version": self.topology.get("version"),
                         "bootstrap": {"configRef": self.ref(bootstrap)}, "infrastructureRef": self.ref(infra)}
        spec = {"clusterName": self.name, "selector": {"matchLabels": selector},
                "template": {"metadata": {"labels": dict(selector)}, "spec": template_spec}}
        if md_topology.get("replicas") is not None:
            spec["replicas"] = md_topology["replicas"]
        after = m.dig(md_topology, "rollout", "after")
        if self.v1beta2 and after and self.rollout_after:
            spec["rollout"] = {"after": after}
        return {"apiVersion": f"{m.CLUSTER_GROUP}/{self.version}", "kind": "MachineDeployment",
                "metadata": {"name": name, "namespace": self.ns, "labels": self.labels(topology_name),
                             "ownerReferences": self.owner()},
                "spec": spec}


def desired_state(cluster, cclass, get_template, current, rollout_after, rng):
    """The objects a topology Cluster must have.

    get_template(kind, name) -> a template object in the Cluster's namespace or None. current: {"control_plane":
    KCP or None, "control_plane_infra": its DockerMachineTemplate or None, "machine_deployments": {topology name:
    (MD, bootstrap template or None, infra template or None)}}. rollout_after: the release copies topology
    rollout.after into the MachineDeployment/KubeadmControlPlane (v1.13+). A LookupError names a missing class
    template or worker class."""
    builder = _Desired(cluster, cclass, rollout_after, rng)
    refs = class_refs(cclass)
    topology = builder.topology

    def template(ref, what):
        found = get_template(ref[1], ref[2])
        if found is None:
            raise LookupError(f"{what} {ref[1]} {builder.ns}/{ref[2]} of ClusterClass {m.name(cclass)} not found")
        return found

    control_plane = control_plane_infra = None
    if topology.get("controlPlane") is not None or refs["control_plane"][2]:
        values = variable_values(cclass, cluster)
        if refs["control_plane_infra"]:
            control_plane_infra = builder.template(template(refs["control_plane_infra"], "control plane machine template"),
                                                   "controlPlane", values, current.get("control_plane_infra"),
                                                   control_plane_template_prefix(builder.name))
        control_plane = builder.control_plane(template(refs["control_plane"], "control plane template"),
                                              control_plane_infra, current.get("control_plane"))
    mds = {}
    for md_topology in m.dig(topology, "workers", "machineDeployments", default=[]):
        if md_topology.get("class") not in refs["workers"]:
            raise LookupError(f"MachineDeployment topology {md_topology.get('name')}: class {md_topology.get('class')!r} "
                              f"is not a worker class of ClusterClass {m.name(cclass)} (classes: {', '.join(refs['workers'])})")
        bootstrap_ref, infra_ref = refs["workers"][md_topology["class"]]
        values = variable_values(cclass, cluster, md_topology)
        target = ("machineDeploymentClass", md_topology["class"])
        prefix = md_template_prefix(builder.name, md_topology["name"])
        current_md, current_bootstrap, current_infra = current.get("machine_deployments", {}).get(
            md_topology["name"], (None, None, None))
        bootstrap = builder.template(template(bootstrap_ref, "bootstrap template"), target, values, current_bootstrap,
                                     prefix, md_topology["name"])
        infra = builder.template(template(infra_ref, "infrastructure machine template"), target, values, current_infra,
                                 prefix, md_topology["name"])
        mds[md_topology["name"]] = DesiredMD(builder.machine_deployment(md_topology, bootstrap, infra, current_md),
                                             bootstrap, infra)
    return DesiredState(control_plane, control_plane_infra, mds)
