"""The real Cluster API CRDs, reduced to what a kube-apiserver 1.20 accepts, and their installation.

The reduced CRDs live in this repository: ``tests/crds/<release>/`` holds, per CAPI release (see
RELEASES), one file per upstream CRD file, already reduced; ``tests/crds/PROVENANCE.md`` and
``tests/crds/provenance.yml`` record where each came from (tag, commit, path, sha256 before and
after) and the upstream licence. ``vendor()`` (``python -m capisim crds-vendor --upstream DIR``)
regenerates them from upstream originals (the files of VENDORED_FILES). $CAPI_CRDS_DIR may point at a directory of upstream
originals instead (one subdirectory per release, same names); they are then reduced on loading.
Reducing is idempotent, so load_crds() reduces whatever it loads.

Reductions, all measured on 1.20.2 (tests/crds/PROVENANCE.md lists them):

- ``default: ""`` entries are dropped: a 1.20 built with Go >= 1.18 and no fix of its vendored
  validator rejects them ("Invalid value: null", see cluster.EMPTY_STRING_BUG). They only default
  optional fields no rollout looks at, so dropping them is harmless on a fixed build too.
- ``x-kubernetes-validations`` (CEL) are dropped: unknown to 1.20.
- ``spec.conversion`` and ``status`` are dropped and, when several versions are served (v1.12+:
  v1beta1 + v1beta2), only the storage version is kept: converting needs CAPI's webhook, which
  does not run here.
"""

import copy
import hashlib
import os
import re
import time
from pathlib import Path

import yaml

from .kubeapi import ApiError, resource_path
from .releases import RELEASES


# The reduced CRDs committed to this repository (tests/crds).
VENDORED = Path(__file__).resolve().parents[2] / "crds"
UPSTREAM_REPOSITORY = "https://github.com/kubernetes-sigs/cluster-api"

# libyaml's loader when PyYAML has it: the CRDs are 1.5 MB of YAML per release (0.6 s in pure Python).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

CRD_PATH = resource_path("apiextensions.k8s.io", "v1", "customresourcedefinitions")

# The upstream CRD files vendored per release (the upstream directories hold more, e.g. DockerCluster, MachineDrainRule):
# what the simulated controllers and the collection read or write, and what a ClusterClass references (the
# ClusterClass itself, its control-plane template and its infrastructure-cluster template). Each CRD adds to the
# time a fleet takes to start (docs/simulator-fidelity.md, "Topology").
VENDORED_FILES = (
    "bootstrap.cluster.x-k8s.io_kubeadmconfigtemplates.yaml",
    "cluster.x-k8s.io_clusterclasses.yaml",
    "cluster.x-k8s.io_clusters.yaml",
    "cluster.x-k8s.io_machinedeployments.yaml",
    "cluster.x-k8s.io_machinehealthchecks.yaml",
    "cluster.x-k8s.io_machinepools.yaml",
    "cluster.x-k8s.io_machines.yaml",
    "cluster.x-k8s.io_machinesets.yaml",
    "controlplane.cluster.x-k8s.io_kubeadmcontrolplanes.yaml",
    "controlplane.cluster.x-k8s.io_kubeadmcontrolplanetemplates.yaml",
    "infrastructure.cluster.x-k8s.io_dockerclustertemplates.yaml",
    "infrastructure.cluster.x-k8s.io_dockermachinetemplates.yaml",
    "runtime.cluster.x-k8s.io_extensionconfigs.yaml",
)
# Installed only on management clusters whose fleet spec declares ClusterClasses: they add about 3 s (30 %) to the
# start of a management cluster (9.5 s -> 12.5 s, measured on v1.10 and v1.14, 2 cores).
TOPOLOGY_FILES = (
    "cluster.x-k8s.io_clusterclasses.yaml",
    "controlplane.cluster.x-k8s.io_kubeadmcontrolplanetemplates.yaml",
    "infrastructure.cluster.x-k8s.io_dockerclustertemplates.yaml",
)
# Installed only on management clusters whose fleet spec turns on InPlaceUpdates: the ExtensionConfig registering the
# simulated update extension (capisim.objects.in_place_extension_config).
IN_PLACE_FILES = ("runtime.cluster.x-k8s.io_extensionconfigs.yaml",)

_HOW_TO_GET = """Cluster API CRDs not found for {version}: looked for {wanted}.
The reduced CRDs of every supported release are part of this repository, in tests/crds/<release>/ (see
tests/crds/PROVENANCE.md): restore them from git, or regenerate them from upstream originals with
`python -m capisim crds-vendor --upstream DIR` (PYTHONPATH=tests/sim). Alternatively point CAPI_CRDS_DIR at a
directory of upstream originals, one directory per release (layout: $CAPI_CRDS_DIR/capi-v1.10.10/*.yaml,
$CAPI_CRDS_DIR/capi-v1.14.0/*.yaml); they are reduced on loading. Sources, from github.com/kubernetes-sigs/cluster-api:
  - the release assets of the tag (core-components.yaml, bootstrap-components.yaml,
    control-plane-components.yaml, infrastructure-components-development.yaml): every CustomResourceDefinition
    in them is used, other objects are ignored; or
  - the generated files at the tag: config/crd/bases/ (up to v1.13.x) or core/config/crd/bases/ (v1.14.0) for
    cluster.x-k8s.io, bootstrap/kubeadm/config/crd/bases/, controlplane/kubeadm/config/crd/bases/ and
    test/infrastructure/docker/config/crd/bases/ (DockerMachineTemplate)."""


def api_version(capi_version):
    """The CAPI API version (v1beta1 / v1beta2) a management cluster of this release serves."""
    return RELEASES[capi_version].api_version


def crds_dir(capi_version):
    """This release's CRD files: tests/crds/<release>, or upstream originals under $CAPI_CRDS_DIR.

    A RuntimeError explains how to get them if missing."""
    root = os.environ.get("CAPI_CRDS_DIR") or VENDORED
    wanted = Path(root).resolve() / RELEASES[capi_version].crds
    if not wanted.is_dir() or not any(wanted.glob("*.yaml")):
        raise RuntimeError(_HOW_TO_GET.format(version=capi_version, wanted=wanted))
    return wanted


def _strip(node):
    """Drop CEL rules and empty-string defaults anywhere in a schema (in place)."""
    if isinstance(node, dict):
        node.pop("x-kubernetes-validations", None)
        if node.get("default") == "":
            del node["default"]
        for value in node.values():
            _strip(value)
    elif isinstance(node, list):
        for value in node:
            _strip(value)


def reduce_crd(crd):
    """Make one CRD acceptable to kube-apiserver 1.20 without a conversion webhook (in place; returned)."""
    spec = crd["spec"]
    spec.pop("conversion", None)
    crd.pop("status", None)
    if sum(1 for v in spec["versions"] if v.get("served")) > 1:
        spec["versions"] = [dict(v, served=True) for v in spec["versions"] if v.get("storage")]
    _strip(spec["versions"])
    return crd


# What the MachineDeployment admission webhook of v1.11+ refuses, as an OpenAPI rule: an integer maxSurge 0
# together with an integer maxUnavailable 0 ("maxUnavailable and maxSurge cannot both be 0"; a string such as
# "0%" is not an integer and passes, as upstream). The API server's answer is its own ("must not validate the
# schema (not)"), the refusal (422, nothing stored) the same.
_ZERO_SURGE_AND_UNAVAILABLE = {"not": {"required": ["maxSurge", "maxUnavailable"],
                                       "properties": {"maxSurge": {"enum": [0]}, "maxUnavailable": {"enum": [0]}}}}


def with_admission_rules(crds, capi_version):
    """The CRDs with the admission rules of ``capi_version`` added to their schemas (copies; capisim.releases)."""
    if not RELEASES[capi_version].refuses_zero_surge:
        return crds
    out = []
    for crd in crds:
        crd = copy.deepcopy(crd)
        if crd["spec"]["names"]["kind"] == "MachineDeployment":
            for version in crd["spec"]["versions"]:
                spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
                strategy = (spec["rollout"]["properties"]["strategy"] if version["name"] == "v1beta2" else spec["strategy"])
                strategy["properties"]["rollingUpdate"].update(copy.deepcopy(_ZERO_SURGE_AND_UNAVAILABLE))
        out.append(crd)
    return out


def _read_crds(path):
    """The CustomResourceDefinitions of one YAML file (other objects, e.g. of a components.yaml, are ignored)."""
    with open(path, encoding="utf-8") as handle:
        return [doc for doc in yaml.load_all(handle, Loader=_LOADER) if doc and doc.get("kind") == "CustomResourceDefinition"]


def load_crds(capi_version, topology=False, in_place=False):
    """All CustomResourceDefinitions of a release, reduced; sorted by name for stable installs. Those of
    TOPOLOGY_FILES (ClusterClass and the templates it references) only with ``topology``, those of IN_PLACE_FILES
    (ExtensionConfig) only with ``in_place``.

    The files in tests/crds are already reduced (reducing again changes nothing); originals from
    $CAPI_CRDS_DIR are reduced here."""
    crds = []
    for path in sorted(crds_dir(capi_version).glob("*.yaml")):
        if (topology or path.name not in TOPOLOGY_FILES) and (in_place or path.name not in IN_PLACE_FILES):
            crds.extend(_read_crds(path))
    return sorted((reduce_crd(c) for c in crds), key=lambda c: c["metadata"]["name"])


def install_crds(api, crds, timeout=60.0):
    """Create the CRDs (existing ones are kept) and wait until all are Established."""
    names = set()
    for crd in crds:
        names.add(crd["metadata"]["name"])
        try:
            api.create(CRD_PATH, crd)
        except ApiError as err:
            if err.status != 409:
                raise
    deadline = time.monotonic() + timeout
    while True:
        established = {c["metadata"]["name"] for c in api.list(CRD_PATH)["items"]
                       if any(cond.get("type") == "Established" and cond.get("status") == "True"
                              for cond in (c.get("status") or {}).get("conditions") or [])}
        if names <= established:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"CRDs not Established after {timeout}s: {', '.join(sorted(names - established))}")
        time.sleep(0.1)


# --- tests/crds: the reduced CRDs committed to this repository, and their provenance ---------------------------------

_HEADER = "# Reduced for kube-apiserver 1.20 from {path} at {tag}; see tests/crds/PROVENANCE.md\n"

# One row of the tables of an upstream directory's SOURCES.md: | dir/file | tag | tag commit | path | git blob | size | sha256 |
_SOURCES_ROW = re.compile(r"^\|\s*([^/|\s]+)/([^|\s]+)\s*\|\s*(\S+)\s*\|\s*([0-9a-f]{40})\s*\|\s*`?([^|`\s]+)`?\s*\|"
                          r"\s*([0-9a-f]{40})\s*\|\s*(\d+)\s*\|\s*([0-9a-f]{64})\s*\|\s*$")


def sha256_file(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def reduced_text(upstream_file, tag, upstream_path):
    """The committed form of one upstream CRD file: a header line, then its CRDs reduced, as deterministic YAML
    (pure-Python dumper, sorted keys, block style, no folding, ASCII with escapes)."""
    docs = [reduce_crd(crd) for crd in _read_crds(upstream_file)]
    if not docs:
        raise RuntimeError(f"{upstream_file}: no CustomResourceDefinition in it")
    body = yaml.safe_dump_all(docs, sort_keys=True, default_flow_style=False, allow_unicode=False, width=1 << 20)
    return _HEADER.format(path=upstream_path, tag=tag) + body


def load_provenance(root=VENDORED):
    """The entries of tests/crds/provenance.yml (dicts: release_dir, file, tag, commit, upstream_path, ...)."""
    with open(Path(root) / "provenance.yml", encoding="utf-8") as handle:
        return yaml.safe_load(handle)["files"]


def _upstream_sources(upstream_root):
    """"dir/file" -> where that upstream original came from: from <upstream_root>/SOURCES.md (the tables of
    upstream directory) when present, else from the committed tests/crds/provenance.yml."""
    sources = Path(upstream_root) / "SOURCES.md"
    if not sources.is_file():
        return {f"{e['release_dir']}/{e['file']}": e for e in load_provenance()}
    found = {}
    for line in sources.read_text(encoding="utf-8").splitlines():
        match = _SOURCES_ROW.match(line)
        if match:
            release_dir, name, tag, commit, path, blob, size, digest = match.groups()
            found[f"{release_dir}/{name}"] = {"tag": tag, "commit": commit, "upstream_path": path, "upstream_git_blob": blob,
                                              "upstream_size": int(size), "upstream_sha256": digest}
    return found


def _changes(upstream_file):
    """What reduce_crd removes from one upstream file, in words (for PROVENANCE.md)."""
    cel = empty = 0
    dropped, other = [], []

    def count(node):
        nonlocal cel, empty
        if isinstance(node, dict):
            cel += len(node.get("x-kubernetes-validations") or [])
            empty += node.get("default") == ""
            for value in node.values():
                count(value)
        elif isinstance(node, list):
            for value in node:
                count(value)
    for crd in _read_crds(upstream_file):
        versions = crd["spec"]["versions"]
        if sum(1 for v in versions if v.get("served")) > 1:
            dropped += [v["name"] for v in versions if not v.get("storage")]
            versions = [v for v in versions if v.get("storage")]
        count(versions)
        other += [name for name, present in (("spec.conversion", "conversion" in crd["spec"]), ("status", "status" in crd)) if present]
    words = [f"versions {', '.join(dropped)} (not storage)"] if dropped else []
    words += [f"{cel} CEL rule(s)"] if cel else []
    words += [f"{empty} `default: \"\"`"] if empty else []
    return "; ".join(words + other) or "nothing (re-serialised only)"


def vendor(upstream_root, dest_root=VENDORED):
    """Regenerate tests/crds from upstream originals (one directory per release, with a SOURCES.md): the reduced file
    of every upstream file of every release in RELEASES, provenance.yml and PROVENANCE.md. Every original must be
    listed in <upstream_root>/SOURCES.md (else in the committed provenance.yml) with its sha256. Only the files of
    VENDORED_FILES are taken. Returns the entries."""
    upstream_root, dest_root = Path(upstream_root), Path(dest_root)
    sources = _upstream_sources(upstream_root)
    entries, changes = [], {}
    for release_dir in sorted({release.crds for release in RELEASES.values()}):
        originals = [upstream_root / release_dir / name for name in VENDORED_FILES]
        missing = [str(path) for path in originals if not path.is_file()]
        if missing:
            raise RuntimeError(f"upstream CRD files missing: {', '.join(missing)}")
        target = dest_root / release_dir
        target.mkdir(parents=True, exist_ok=True)
        for stale in sorted({p.name for p in target.glob("*.yaml")} - {p.name for p in originals}):
            (target / stale).unlink()
        for original in originals:
            meta = sources.get(f"{release_dir}/{original.name}")
            if meta is None:
                raise RuntimeError(f"{original}: its source (tag, commit, path, sha256) is not recorded in "
                                   f"{upstream_root / 'SOURCES.md'} nor in {VENDORED / 'provenance.yml'}")
            digest = sha256_file(original)
            if digest != meta["upstream_sha256"]:
                raise RuntimeError(f"{original}: sha256 {digest}, but its recorded source has {meta['upstream_sha256']}")
            data = reduced_text(original, meta["tag"], meta["upstream_path"]).encode("utf-8")
            (target / original.name).write_bytes(data)
            entries.append({"release_dir": release_dir, "file": original.name, "tag": meta["tag"], "commit": meta["commit"],
                            "upstream_path": meta["upstream_path"], "upstream_git_blob": meta["upstream_git_blob"],
                            "upstream_size": original.stat().st_size, "upstream_sha256": digest,
                            "reduced_sha256": hashlib.sha256(data).hexdigest()})
            changes[release_dir, original.name] = _changes(original)
    (dest_root / "provenance.yml").write_bytes(_provenance_yml(entries).encode("utf-8"))
    (dest_root / "PROVENANCE.md").write_bytes(_provenance_md(entries, changes).encode("utf-8"))
    return entries


def _provenance_yml(entries):
    doc = {"repository": UPSTREAM_REPOSITORY, "copyright": "The Kubernetes Authors", "license": "Apache-2.0",
           "license_url": "http://www.apache.org/licenses/LICENSE-2.0", "files": entries}
    return ("# Generated by capisim.crds.vendor() (python -m capisim crds-vendor); see PROVENANCE.md. Checked by\n"
            "# tests/conformance/test_crds_vendored.py.\n"
            + yaml.safe_dump(doc, sort_keys=False, default_flow_style=False, width=1 << 20))


_PROVENANCE_INTRO = """# Provenance of tests/crds

Generated by `capisim.crds.vendor()`; do not edit by hand. Regenerate from upstream originals (one directory
per release, with a `SOURCES.md` of tag, commit, path and sha256, or files recorded in `provenance.yml`) with

    PYTHONPATH=tests/sim .venv/bin/python -m capisim crds-vendor --upstream DIR

`tests/conformance/test_crds_vendored.py` checks every file against `provenance.yml`, that reducing it again
reproduces it byte for byte, and, with `CAPI_CRDS_DIR` pointing at the upstream originals, that reducing them
reproduces these files and the provenance files byte for byte.

## Licence

These files are derived from Cluster API, {repository}.
Cluster API is Copyright The Kubernetes Authors, licensed under the Apache License, Version 2.0
(http://www.apache.org/licenses/LICENSE-2.0). The files in this directory are derived works of the upstream
files listed below, with the modifications listed under "Reductions"; they remain under the Apache License,
Version 2.0.

## Releases

| directory | tag | simulator `capi_version` | API version served |
|---|---|---|---|
{releases}

## Reductions

Each upstream file was parsed, reduced by `capisim.crds.reduce_crd()` and written back as YAML (keys sorted,
block style, one header comment line, ASCII only: a non-ASCII character such as a typographic quote in a
description is written as a YAML escape, which parses to the same text); nothing else was changed. The reductions make the CRDs acceptable to
the kube-apiserver 1.20 the simulator runs, without CAPI's controllers or webhooks:

1. `spec.conversion` is removed: it configures CAPI's conversion webhook, and no conversion webhook runs here.
2. When more than one version is served (v1.12 and later serve v1beta1 and v1beta2), only the storage version
   is kept (and served): converting between served versions needs that webhook.
3. `status` (of the CustomResourceDefinition itself) is removed: it is set by the API server.
4. Every `x-kubernetes-validations` (CEL validation rules) is removed: kube-apiserver 1.20 has no CEL (the field
   is unknown to it), so the rules could not be enforced there anyway.
5. Every `default: ""` is removed: a kube-apiserver 1.20 built with Go >= 1.18 rejects them (its vendored
   OpenAPI validator treats `""` as null: "Invalid value: null"). They only default optional fields.

Reducing is idempotent: reducing these files again changes nothing.

## Files

sha256 of the upstream file (as at the tag, `git show <tag>:<upstream path>`) and of the reduced file here;
"removed" says what the reductions took out of that file.

| file | tag | tag commit | upstream path | upstream git blob | upstream sha256 | reduced sha256 | removed |
|---|---|---|---|---|---|---|---|
{files}
"""


def _provenance_md(entries, changes):
    releases = "\n".join(f"| {r.crds} | {r.crds[len('capi-'):]} | {v} | {r.api_version} |" for v, r in RELEASES.items())
    files = "\n".join(
        f"| {e['release_dir']}/{e['file']} | {e['tag']} | {e['commit']} | {e['upstream_path']} | {e['upstream_git_blob']} "
        f"| {e['upstream_sha256']} | {e['reduced_sha256']} | {changes[e['release_dir'], e['file']]} |" for e in entries)
    return _PROVENANCE_INTRO.format(repository=UPSTREAM_REPOSITORY, releases=releases, files=files)
