"""The real Cluster API CRDs, reduced to what a kube-apiserver 1.20 accepts, and their installation.

The CRD files are never copied into this repository: they are read from $CAPI_CRDS_DIR, else from
``shared/crds`` beside the repository (``<repo>/../shared/crds``), which holds one directory per
CAPI release (see RELEASES). Reductions, all measured on 1.20.2 (docs in shared/docs):

- ``default: ""`` entries are dropped: a 1.20 built with Go >= 1.18 and no fix of its vendored
  validator rejects them ("Invalid value: null", see cluster.EMPTY_STRING_BUG). They only default
  optional fields no rollout looks at, so dropping them is harmless on a fixed build too.
- ``x-kubernetes-validations`` (CEL) are dropped: unknown to 1.20.
- ``spec.conversion`` is dropped and, when several versions are served (v1.14: v1beta1 + v1beta2),
  only the storage version is kept: converting needs CAPI's webhook, which does not run here.
"""

import os
import time
from pathlib import Path

import yaml

from .kubeapi import ApiError, resource_path

# capi_version -> (directory under the CRDs dir, the one API version served by our management clusters)
RELEASES = {
    "v1.10": ("capi-v1.10.10", "v1beta1"),
    "v1.14": ("capi-v1.14.0", "v1beta2"),
}

# libyaml's loader when PyYAML has it: the CRDs are 1.5 MB of YAML per release (0.6 s in pure Python).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

CRD_PATH = resource_path("apiextensions.k8s.io", "v1", "customresourcedefinitions")

_HOW_TO_GET = """Cluster API CRDs not found for {version}: looked for {wanted}.
Put the CRD YAML files of each CAPI release in one directory per release and point CAPI_CRDS_DIR at their parent
(layout: $CAPI_CRDS_DIR/capi-v1.10.10/*.yaml, $CAPI_CRDS_DIR/capi-v1.14.0/*.yaml). Sources, from
github.com/kubernetes-sigs/cluster-api:
  - the release assets of v1.10.10 / v1.14.0 (core-components.yaml, bootstrap-components.yaml,
    control-plane-components.yaml, infrastructure-components-development.yaml): every CustomResourceDefinition
    in them is used, other objects are ignored; or
  - the generated files at the tag: config/crd/bases/ (v1.10.10) or core/config/crd/bases/ (v1.14.0) for
    cluster.x-k8s.io, bootstrap/kubeadm/config/crd/bases/, controlplane/kubeadm/config/crd/bases/ and
    test/infrastructure/docker/config/crd/bases/ (DockerMachineTemplate).
Do not copy them into this repository."""


def api_version(capi_version):
    """The CAPI API version (v1beta1 / v1beta2) a management cluster of this release serves."""
    return RELEASES[capi_version][1]


def crds_dir(capi_version):
    """The directory holding this release's CRD files; a RuntimeError explains how to get them if missing."""
    root = os.environ.get("CAPI_CRDS_DIR") or Path(__file__).resolve().parents[3] / ".." / "shared" / "crds"
    wanted = Path(root).resolve() / RELEASES[capi_version][0]
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


def load_crds(capi_version):
    """All CustomResourceDefinitions of a release, reduced; sorted by name for stable installs."""
    crds = []
    for path in sorted(crds_dir(capi_version).glob("*.yaml")):
        with open(path, encoding="utf-8") as handle:
            crds.extend(doc for doc in yaml.load_all(handle, Loader=_LOADER) if doc and doc.get("kind") == "CustomResourceDefinition")
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
