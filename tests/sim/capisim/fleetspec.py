"""The fleet spec: which management clusters to run and which CAPI workload clusters they hold.

Every mistake is reported with its path (``management_clusters[1].workload_clusters[0].replicas:
must be an integer >= 0``); unknown keys are errors. ``load_fleet`` returns the spec with every
default filled in. Schema (also in tests/fleets/README.md)::

    defaults:                              # optional
      provision_seconds: 2                 # seconds until a new Machine is ready (default 2)
      deletion_seconds: 0                  # seconds a deleted Machine stays Deleting (drain + infrastructure
                                           # teardown; default 0: gone at once)
      sync_period_seconds: 600             # the controllers' periodic resync (CAPI --sync-period, default 10 min):
                                           # a future rolloutAfter is acted on at the next event or resync
    management_clusters:                   # at least one
      - name: mgmt-a                       # DNS label, unique
        capi_version: v1.10                # v1.10 (serves v1beta1) | v1.11 | v1.12.3 | v1.12 | v1.13 | v1.14 (capisim/releases.py)
        features: []                       # CAPI feature gates to turn on: [InPlaceUpdates] (v1.12.3 and later only):
                                           # an update extension (ExtensionConfig "capisim-in-place") is registered and
                                           # the MachineDeployment controller updates Machines in place when it can
        in_place_accepts: [infrastructureRef, version, bootstrap]   # with InPlaceUpdates: the template-identity
                                           # changes the extension can do in place (default all three; [] none)
        in_place_seconds: 1                # with InPlaceUpdates: how long the extension takes to update a Machine
        cluster_classes:                   # default []; when any, the ClusterClass CRDs are installed and the
                                           # topology controller runs (capisim/controller/topology.py)
          - name: quick-start              # DNS label, unique
            namespace: default             # default "default"
            control_plane_image: kindest/node:v1.30.4   # customImage of the control plane's DockerMachineTemplate
            workers:                       # worker (MachineDeployment) classes, at least one
              - class: default-worker      # DNS label, unique in the class
                image: kindest/node:v1.30.4  # customImage of its DockerMachineTemplate
            variables:                     # default []
              - name: workerImage          # unique in the class
                default: null              # optional schema default (string)
                patch:                     # a JSON patch (op replace) of the variable onto DockerMachineTemplates
                  path: /spec/template/spec/customImage
                  worker_classes: [default-worker]   # default []: the infrastructure templates of these classes
                  control_plane: false     # and/or the control plane's machine infrastructure template
        workload_clusters:                 # default []
          - name: prod-1                   # DNS label, unique in its management cluster
            namespace: team-a              # default "default"
            kubernetes_version: v1.30.4    # "v" is added when missing, as CAPI's webhook does
            topology_owned: false          # labels only: topology.cluster.x-k8s.io/owned labels and a spec.topology
                                           # naming a ClusterClass that does not exist (nothing reconciles it)
            topology:                      # optional: a real topology Cluster; the topology controller creates its
                                           # KubeadmControlPlane, MachineDeployments and templates
              class: quick-start           # a cluster_classes entry of this management cluster, same namespace
              variables: []                # [{name, value}] Cluster-wide variable values
            paused: false                  # Cluster.spec.paused
            provision_seconds: 1           # optional, overrides defaults.provision_seconds
            deletion_seconds: 2            # optional, overrides defaults.deletion_seconds
            control_plane:                 # null or omitted: no KubeadmControlPlane
              replicas: 3                  # >= 1
              max_surge: 1                 # 0 or 1 (default 1); 0 needs replicas >= 3
            machine_health_checks:         # default []: MachineHealthChecks (nothing remediates: tests set the Machine
                                           # conditions the MachineHealthCheck controller would, docs/simulator-fidelity.md)
              - name: workers              # DNS label; the object is named <cluster>-<name>
                match_labels: {}           # its selector's matchLabels (default: every Machine of the cluster)
                max_unhealthy: 40%         # optional (v1beta1 maxUnhealthy; v1beta2 remediation.triggerIf.unhealthyLessThanOrEqualTo)
                unhealthy_range: "[1-3]"   # optional (v1beta1 unhealthyRange; v1beta2 remediation.triggerIf.unhealthyInRange)
                paused: false              # the cluster.x-k8s.io/paused annotation
            machine_deployments:           # default []
              - name: md-0                 # DNS label; the object is named <cluster>-<name> (with topology: the
                                           # topology name; the object gets a generated name <cluster>-<name>-xxxxx)
                class: default-worker      # with topology only, required: a worker class of the ClusterClass
                variables:                 # with topology only: {overrides: [{name, value}]}
                  overrides: []
                replicas: 3                # >= 0, default 1
                strategy:                  # default {type: RollingUpdate, max_surge: 1, max_unavailable: 0}
                  type: RollingUpdate      # RollingUpdate | OnDelete (OnDelete takes no max_*)
                  max_surge: 1             # integer >= 0 or "N%"
                  max_unavailable: 0       # integer >= 0 or "N%"; not both 0
                failure_domain: null       # optional string
                provision_seconds: 1       # optional, overrides the workload cluster's value
                drain:                     # optional: what the drain of its deleted Machines' Nodes meets
                  blocked_by_pdb: false    # a PodDisruptionBudget refuses the eviction until the Machine's node
                                           # drain timeout expires (forever when unset or 0)
                  seconds: 0               # the evicted Pods take this long to go
                gitops:                    # optional: the MD is applied from "Git" by a reconciler (capisim/gitops.py)
                  reconciler: flux         # flux (server-side apply as kustomize-controller, forced, every interval)
                                           # | argo (tracking annotation, client-side apply as argocd-controller)
                  interval_seconds: 5      # >= 1 (default 5)
                  self_heal: true          # argo only: put a drifted template back (default true); false: only
                                           # a change of Git is synced
                template:
                  image: kindest/node:v1.30.4   # DockerMachineTemplate customImage (default kindest/node:<version>)
"""

import re

import yaml

from .releases import RELEASES

DEFAULT_PROVISION_SECONDS = 2
DEFAULT_SYNC_PERIOD_SECONDS = 600  # CAPI's --sync-period default (v1.14.0 main.go)
CAPI_VERSIONS = tuple(RELEASES)
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_K8S_VERSION = re.compile(r"^v?\d+\.\d+\.\d+([-+][0-9A-Za-z.+-]+)?$")
_PERCENT = re.compile(r"^\d+%$")
_MAX_LABEL = 63
FEATURES = ("InPlaceUpdates",)
# The Machine template fields whose change the simulated update extension may accept (mdplan.template_up_to_date
# compares them; a failure-domain change is never done in place, v1.12.3 mdutil/util.go MachineTemplateUpToDate).
IN_PLACE_FIELDS = ("infrastructureRef", "version", "bootstrap")


class FleetSpecError(ValueError):
    """All the mistakes of a fleet spec, one "path: message" per line."""

    def __init__(self, errors):
        self.errors = errors
        super().__init__("invalid fleet spec:\n  " + "\n  ".join(errors))


class _Checker:
    """Collects errors; each helper returns the (defaulted) value or None when it was wrong."""

    def __init__(self):
        self.errors = []

    def error(self, path, message):
        self.errors.append(f"{path}: {message}")

    def mapping(self, value, path, required, optional):
        """Check a mapping's keys; required/optional are key lists. Returns the value or None."""
        if not isinstance(value, dict):
            self.error(path, "must be a mapping")
            return None
        for key in value:
            if key not in required and key not in optional:
                self.error(f"{path}.{key}", f"unknown key (allowed: {', '.join(list(required) + list(optional))})")
        for key in required:
            if key not in value:
                self.error(f"{path}.{key}", "is required")
        return value

    def seq(self, value, path, min_items=0):
        if not isinstance(value, list):
            self.error(path, "must be a list")
            return []
        if len(value) < min_items:
            self.error(path, f"must have at least {min_items} item(s)")
        return value

    def integer(self, value, path, minimum=0):
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            self.error(path, f"must be an integer >= {minimum}")
            return None
        return value

    def boolean(self, value, path):
        if not isinstance(value, bool):
            self.error(path, "must be true or false")
            return None
        return value

    def dns_label(self, value, path, max_len=_MAX_LABEL):
        if not isinstance(value, str) or not _DNS_LABEL.match(value) or len(value) > max_len:
            self.error(path, f"must be a DNS label (lower-case letters, digits, '-', at most {max_len} characters)")
            return None
        return value

    def unique(self, items, path, what):
        seen = set()
        for index, item in enumerate(items):
            name = item.get("name") if isinstance(item, dict) else None
            if isinstance(name, str):
                if name in seen:
                    self.error(f"{path}[{index}].name", f"duplicate {what} name {name!r}")
                seen.add(name)

    def int_or_percent(self, value, path):
        if isinstance(value, str) and _PERCENT.match(value):
            return value
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            self.error(path, 'must be an integer >= 0 or a percentage like "25%"')
            return None
        return value


def _strategy(chk, value, path):
    if value is None:
        return {"type": "RollingUpdate", "max_surge": 1, "max_unavailable": 0}
    if chk.mapping(value, path, ["type"], ["max_surge", "max_unavailable"]) is None:
        return None
    kind = value.get("type")
    if kind == "OnDelete":
        for key in ("max_surge", "max_unavailable"):
            if key in value:
                chk.error(f"{path}.{key}", "is only allowed with type RollingUpdate")
        return {"type": "OnDelete"}
    if kind != "RollingUpdate":
        chk.error(f"{path}.type", "must be RollingUpdate or OnDelete")
        return None
    surge = chk.int_or_percent(value.get("max_surge", 1), f"{path}.max_surge")
    unavailable = chk.int_or_percent(value.get("max_unavailable", 0), f"{path}.max_unavailable")
    if surge in (0, "0%") and unavailable in (0, "0%"):
        chk.error(path, "max_surge and max_unavailable cannot both be 0 (the rollout could never progress)")
    return {"type": "RollingUpdate", "max_surge": surge, "max_unavailable": unavailable}


def _values(chk, value, path, known):
    """[{name, value}] variable values; names must be variables of the class (``known``)."""
    result = []
    for index, item in enumerate(chk.seq(value, path)):
        if chk.mapping(item, f"{path}[{index}]", ["name", "value"], []) is None:
            continue
        if known is not None and item["name"] not in known:
            chk.error(f"{path}[{index}].name", f"{item['name']!r} is not a variable of the ClusterClass "
                                               f"(its variables: {', '.join(sorted(known)) or 'none'})")
        result.append({"name": item["name"], "value": item["value"]})
    chk.unique(result, path, "variable")
    return result


def _topology_md(chk, md, path, cluster, cclass):
    if chk.mapping(md, path, ["name", "class"], ["replicas", "variables", "provision_seconds"]) is None:
        return None
    worker_classes = [w["class"] for w in cclass["workers"]] if cclass else None
    if worker_classes is not None and md.get("class") not in worker_classes:
        chk.error(f"{path}.class", f"{md.get('class')!r} is not a worker class of ClusterClass {cclass['name']!r} "
                                   f"(its classes: {', '.join(worker_classes)})")
    variables = md.get("variables") or {}
    overrides = []
    if chk.mapping(variables, f"{path}.variables", [], ["overrides"]) is not None:
        known = {v["name"] for v in cclass["variables"]} if cclass else None
        overrides = _values(chk, variables.get("overrides", []), f"{path}.variables.overrides", known)
    return {
        # the generated name <cluster>-<name>-xxxxx must fit 63 characters (names.MachineDeploymentNameGenerator)
        "name": chk.dns_label(md.get("name"), f"{path}.name", _MAX_LABEL - len(cluster["name"] or "") - 7),
        "class": md.get("class"),
        "replicas": chk.integer(md.get("replicas", 1), f"{path}.replicas"),
        "overrides": overrides,
        "provision_seconds": chk.integer(md["provision_seconds"], f"{path}.provision_seconds")
        if "provision_seconds" in md else cluster["provision_seconds"],
    }


def _machine_deployment(chk, md, path, cluster, cclass=None):
    if cluster["topology"] is not None:
        return _topology_md(chk, md, path, cluster, cclass)
    keys = ["replicas", "strategy", "failure_domain", "provision_seconds", "template", "gitops", "drain"]
    if chk.mapping(md, path, ["name"], keys) is None:
        return None
    # The object name <cluster>-<md> must stay a valid label value (cluster.x-k8s.io/deployment-name).
    name = chk.dns_label(md.get("name"), f"{path}.name", _MAX_LABEL - len(cluster["name"] or "") - 1)
    failure_domain = md.get("failure_domain")
    if failure_domain is not None and (not isinstance(failure_domain, str) or not failure_domain):
        chk.error(f"{path}.failure_domain", "must be a non-empty string or null")
    template = md.get("template") or {}
    if chk.mapping(template, f"{path}.template", [], ["image"]) is not None and \
            not isinstance(template.get("image", ""), str):
        chk.error(f"{path}.template.image", "must be a string")
    provision = cluster["provision_seconds"]
    if "provision_seconds" in md:
        provision = chk.integer(md["provision_seconds"], f"{path}.provision_seconds")
    return {
        "name": name,
        "replicas": chk.integer(md.get("replicas", 1), f"{path}.replicas"),
        "strategy": _strategy(chk, md.get("strategy"), f"{path}.strategy"),
        "failure_domain": failure_domain,
        "provision_seconds": provision,
        "image": template.get("image") or f"kindest/node:{cluster['kubernetes_version']}",
        "gitops": _gitops(chk, md.get("gitops"), f"{path}.gitops"),
        "drain": _drain(chk, md.get("drain"), f"{path}.drain"),
    }


def _drain(chk, value, path):
    value = {} if value is None else value
    if chk.mapping(value, path, [], ["blocked_by_pdb", "seconds"]) is None:
        return None
    return {"blocked_by_pdb": chk.boolean(value.get("blocked_by_pdb", False), f"{path}.blocked_by_pdb"),
            "seconds": chk.integer(value.get("seconds", 0), f"{path}.seconds")}


def _gitops(chk, value, path):
    if value is None:
        return None
    if chk.mapping(value, path, ["reconciler"], ["interval_seconds", "self_heal"]) is None:
        return None
    reconciler = value.get("reconciler")
    if reconciler not in ("flux", "argo"):
        chk.error(f"{path}.reconciler", "must be flux or argo")
    if reconciler == "flux" and "self_heal" in value:
        chk.error(f"{path}.self_heal", "is only allowed with reconciler argo (Flux always applies)")
    return {"reconciler": reconciler,
            "interval_seconds": chk.integer(value.get("interval_seconds", 5), f"{path}.interval_seconds", minimum=1),
            "self_heal": chk.boolean(value.get("self_heal", True), f"{path}.self_heal")}


def _control_plane(chk, value, path):
    if value is None:
        return None
    if chk.mapping(value, path, ["replicas"], ["max_surge"]) is None:
        return None
    replicas = chk.integer(value.get("replicas"), f"{path}.replicas", minimum=1)
    surge = value.get("max_surge", 1)
    if isinstance(surge, bool) or surge not in (0, 1):
        chk.error(f"{path}.max_surge", "must be 0 or 1")
    elif surge == 0 and replicas is not None and replicas < 3:
        chk.error(path, "max_surge 0 (scale in) needs replicas >= 3")
    return {"replicas": replicas, "max_surge": surge}


def _topology(chk, value, path, classes, namespace):
    """(topology or None, its ClusterClass or None)"""
    if value is None:
        return None, None
    if chk.mapping(value, path, ["class"], ["variables"]) is None:
        return None, None
    cclass = classes.get((namespace, value.get("class")))
    if cclass is None:
        chk.error(f"{path}.class", f"no ClusterClass {value.get('class')!r} in namespace {namespace!r} among this "
                                   f"management cluster's cluster_classes ({', '.join(n for _ns, n in sorted(classes)) or 'none'})")
    known = {v["name"] for v in cclass["variables"]} if cclass else None
    return {"class": value.get("class"), "variables": _values(chk, value.get("variables", []), f"{path}.variables", known)}, cclass


def _cluster_class(chk, value, path):
    if chk.mapping(value, path, ["name", "workers"], ["namespace", "control_plane_image", "variables"]) is None:
        return None
    workers = []
    for index, worker in enumerate(chk.seq(value.get("workers"), f"{path}.workers", min_items=1)):
        wpath = f"{path}.workers[{index}]"
        if chk.mapping(worker, wpath, ["class"], ["image"]) is not None:
            workers.append({"class": chk.dns_label(worker.get("class"), f"{wpath}.class"),
                            "image": worker.get("image") or "kindest/node:v1.30.4"})
    chk.unique([{"name": w["class"]} for w in workers], f"{path}.workers", "worker class")
    variables = []
    for index, var in enumerate(chk.seq(value.get("variables", []), f"{path}.variables")):
        vpath = f"{path}.variables[{index}]"
        if chk.mapping(var, vpath, ["name", "patch"], ["default"]) is None:
            continue
        patch = var.get("patch")
        if chk.mapping(patch, f"{vpath}.patch", ["path"], ["worker_classes", "control_plane"]) is None:
            continue
        if not isinstance(patch.get("path"), str) or not patch["path"].startswith("/spec/"):
            chk.error(f"{vpath}.patch.path", "must be a JSON pointer into the template's spec, like /spec/template/spec/customImage")
        targets = chk.seq(patch.get("worker_classes", []), f"{vpath}.patch.worker_classes")
        for name in targets:
            if name not in [w["class"] for w in workers]:
                chk.error(f"{vpath}.patch.worker_classes", f"{name!r} is not a worker class of this ClusterClass")
        variables.append({"name": var["name"], "default": var.get("default"), "path": patch.get("path"),
                          "worker_classes": list(targets),
                          "control_plane": chk.boolean(patch.get("control_plane", False), f"{vpath}.patch.control_plane")})
    chk.unique(variables, f"{path}.variables", "variable")
    return {"name": chk.dns_label(value.get("name"), f"{path}.name"),
            "namespace": chk.dns_label(value.get("namespace", "default"), f"{path}.namespace"),
            "control_plane_image": value.get("control_plane_image") or "kindest/node:v1.30.4",
            "workers": workers, "variables": variables}


def _workload_cluster(chk, wc, path, defaults, classes):
    optional = ["namespace", "topology_owned", "paused", "provision_seconds", "deletion_seconds", "control_plane",
                "machine_deployments", "topology", "machine_health_checks"]
    if chk.mapping(wc, path, ["name", "kubernetes_version"], optional) is None:
        return None
    version = wc.get("kubernetes_version")
    if not isinstance(version, str) or not _K8S_VERSION.match(version):
        chk.error(f"{path}.kubernetes_version", "must be a Kubernetes version like v1.30.4")
        version = None
    elif not version.startswith("v"):
        version = "v" + version
    cluster = {
        # Room for "-control-plane" in the KubeadmControlPlane name, which is also a label value.
        "name": chk.dns_label(wc.get("name"), f"{path}.name", _MAX_LABEL - len("-control-plane")),
        "namespace": chk.dns_label(wc.get("namespace", "default"), f"{path}.namespace"),
        "kubernetes_version": version,
        "topology_owned": chk.boolean(wc.get("topology_owned", False), f"{path}.topology_owned"),
        "paused": chk.boolean(wc.get("paused", False), f"{path}.paused"),
        **{key: chk.integer(wc[key], f"{path}.{key}") if key in wc else defaults[key]
           for key in ("provision_seconds", "deletion_seconds")},
        "control_plane": _control_plane(chk, wc.get("control_plane"), f"{path}.control_plane"),
    }
    cluster["topology"], cclass = _topology(chk, wc.get("topology"), f"{path}.topology", classes, cluster["namespace"])
    if cluster["topology"] is not None and cluster["topology_owned"]:
        chk.error(f"{path}.topology_owned", "labels-only topology_owned cannot be combined with a real topology")
    mds = chk.seq(wc.get("machine_deployments", []), f"{path}.machine_deployments")
    chk.unique(mds, f"{path}.machine_deployments", "machine deployment")
    cluster["machine_deployments"] = [_machine_deployment(chk, md, f"{path}.machine_deployments[{i}]", cluster, cclass)
                                      for i, md in enumerate(mds)]
    mhcs = chk.seq(wc.get("machine_health_checks", []), f"{path}.machine_health_checks")
    chk.unique(mhcs, f"{path}.machine_health_checks", "machine health check")
    cluster["machine_health_checks"] = [_machine_health_check(chk, mhc, f"{path}.machine_health_checks[{i}]")
                                        for i, mhc in enumerate(mhcs)]
    return cluster


def _machine_health_check(chk, mhc, path):
    if chk.mapping(mhc, path, ["name"], ["match_labels", "max_unhealthy", "unhealthy_range", "paused"]) is None:
        return None
    labels = mhc.get("match_labels") or {}
    if not isinstance(labels, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in labels.items()):
        chk.error(f"{path}.match_labels", "must be a mapping of label keys to string values")
    unhealthy_range = mhc.get("unhealthy_range")
    if unhealthy_range is not None and not (isinstance(unhealthy_range, str) and re.match(r"^\[[0-9]+-[0-9]+\]$", unhealthy_range)):
        chk.error(f"{path}.unhealthy_range", 'must be a range like "[1-3]"')
    return {"name": chk.dns_label(mhc.get("name"), f"{path}.name"), "match_labels": labels,
            "max_unhealthy": None if mhc.get("max_unhealthy") is None else chk.int_or_percent(mhc["max_unhealthy"], f"{path}.max_unhealthy"),
            "unhealthy_range": unhealthy_range, "paused": chk.boolean(mhc.get("paused", False), f"{path}.paused")}


def _features(chk, mgmt, path):
    """{features, in_place_accepts}: feature gates exist per release (capisim.releases in_place_updates)."""
    features = chk.seq(mgmt.get("features", []), f"{path}.features")
    for index, name in enumerate(features):
        if name not in FEATURES:
            chk.error(f"{path}.features[{index}]", f"unknown feature gate {name!r} (simulated: {', '.join(FEATURES)})")
    release = RELEASES.get(mgmt.get("capi_version"))
    if "InPlaceUpdates" in features and release is not None and not release.in_place_updates:
        chk.error(f"{path}.features", f"InPlaceUpdates does not exist in CAPI {mgmt.get('capi_version')} (it came with "
                                      f"v1.12); use capi_version v1.12.3 or later, or drop the feature")
    accepts = mgmt.get("in_place_accepts", list(IN_PLACE_FIELDS))
    for key in ("in_place_accepts", "in_place_seconds"):
        if key in mgmt and "InPlaceUpdates" not in features:
            chk.error(f"{path}.{key}", "needs features: [InPlaceUpdates]")
    for index, field in enumerate(chk.seq(accepts, f"{path}.in_place_accepts")):
        if field not in IN_PLACE_FIELDS:
            chk.error(f"{path}.in_place_accepts[{index}]", f"{field!r} is not a template field updatable in place "
                                                           f"(one of {', '.join(IN_PLACE_FIELDS)})")
    in_place = "InPlaceUpdates" in features
    return {"features": list(features), "in_place_accepts": list(accepts) if in_place else [],
            "in_place_seconds": chk.integer(mgmt.get("in_place_seconds", 1), f"{path}.in_place_seconds")}


def validate(data):
    """Check a parsed fleet spec; returns it with defaults filled in, raises FleetSpecError listing every mistake."""
    chk = _Checker()
    if chk.mapping(data, "spec", ["management_clusters"], ["defaults"]) is None:
        raise FleetSpecError(chk.errors)
    defaults = data.get("defaults") or {}
    filled = {"provision_seconds": DEFAULT_PROVISION_SECONDS, "deletion_seconds": 0,
              "sync_period_seconds": DEFAULT_SYNC_PERIOD_SECONDS}
    if chk.mapping(defaults, "defaults", [], list(filled)) is not None:
        filled = {key: chk.integer(defaults.get(key, value), f"defaults.{key}", 1 if key == "sync_period_seconds" else 0)
                  for key, value in filled.items()}
    mgmts = chk.seq(data.get("management_clusters", []), "management_clusters", min_items=1)
    chk.unique(mgmts, "management_clusters", "management cluster")
    result = []
    for index, mgmt in enumerate(mgmts):
        path = f"management_clusters[{index}]"
        if chk.mapping(mgmt, path, ["name", "capi_version"],
                       ["workload_clusters", "cluster_classes", "features", "in_place_accepts", "in_place_seconds"]) is None:
            continue
        ccs = chk.seq(mgmt.get("cluster_classes", []), f"{path}.cluster_classes")
        chk.unique(ccs, f"{path}.cluster_classes", "cluster class")
        classes = [_cluster_class(chk, cc, f"{path}.cluster_classes[{i}]") for i, cc in enumerate(ccs)]
        by_name = {(c["namespace"], c["name"]): c for c in classes if c}
        if mgmt.get("capi_version") not in CAPI_VERSIONS:
            chk.error(f"{path}.capi_version", f"must be one of {', '.join(CAPI_VERSIONS)}")
        wcs = chk.seq(mgmt.get("workload_clusters", []), f"{path}.workload_clusters")
        chk.unique(wcs, f"{path}.workload_clusters", "workload cluster")
        result.append({
            "name": chk.dns_label(mgmt.get("name"), f"{path}.name"),
            "capi_version": mgmt.get("capi_version"),
            **_features(chk, mgmt, path),
            "cluster_classes": classes,
            "workload_clusters": [_workload_cluster(chk, wc, f"{path}.workload_clusters[{i}]", filled, by_name)
                                  for i, wc in enumerate(wcs)],
        })
    if chk.errors:
        raise FleetSpecError(chk.errors)
    return {"defaults": filled, "management_clusters": result}


def load_fleet(spec):
    """A validated fleet from a dict or a YAML file path."""
    if isinstance(spec, dict):
        return validate(spec)
    with open(spec, encoding="utf-8") as handle:
        return validate(yaml.safe_load(handle))
