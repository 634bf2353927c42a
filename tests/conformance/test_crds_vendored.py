"""The reduced CAPI CRDs committed in tests/crds: provenance, reproducibility from upstream, reductions (no server needed)."""

import copy
import hashlib
import json
import os
from pathlib import Path

import pytest
import yaml

from capisim import crds

ENTRIES = crds.load_provenance()
RELEASE_DIRS = {release.crds: capi_version for capi_version, release in crds.RELEASES.items()}


def _sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _upstream_root():
    """Upstream originals: $CAPI_CRDS_DIR, else shared/crds beside the repository."""
    return Path(os.environ.get("CAPI_CRDS_DIR") or crds.VENDORED.parents[2] / "shared" / "crds")


def test_provenance_covers_exactly_the_committed_files():
    listed = {(e["release_dir"], e["file"]) for e in ENTRIES}
    present = {(p.parent.name, p.name) for p in crds.VENDORED.glob("*/*.yaml")}
    assert present == listed
    assert {e["release_dir"] for e in ENTRIES} == set(RELEASE_DIRS)
    for entry in ENTRIES:
        assert set(entry) >= {"release_dir", "file", "tag", "commit", "upstream_path", "upstream_sha256", "reduced_sha256"}
        assert entry["release_dir"] == f"capi-{entry['tag']}"
        assert Path(entry["upstream_path"]).name == entry["file"]


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: f"{e['release_dir']}/{e['file']}")
def test_committed_file_matches_provenance(entry):
    path = crds.VENDORED / entry["release_dir"] / entry["file"]
    assert path.is_file()
    assert _sha256(path) == entry["reduced_sha256"]
    assert path.read_text(encoding="utf-8").splitlines()[0] == (
        f"# Reduced for kube-apiserver 1.20 from {entry['upstream_path']} at {entry['tag']}; see tests/crds/PROVENANCE.md")
    assert entry["reduced_sha256"] in (crds.VENDORED / "PROVENANCE.md").read_text(encoding="utf-8")


def test_upstream_originals_reproduce_committed_files(tmp_path):
    root = _upstream_root()
    present = [e for e in ENTRIES if (root / e["release_dir"] / e["file"]).is_file()]
    if not present:
        pytest.skip(f"upstream CRD originals not found in {root} (set CAPI_CRDS_DIR or put shared/crds beside the "
                    "repository): only the committed files and their recorded sha256 were checked")
    for entry in present:
        original = root / entry["release_dir"] / entry["file"]
        assert _sha256(original) == entry["upstream_sha256"], original
        committed = (crds.VENDORED / entry["release_dir"] / entry["file"]).read_bytes()
        assert crds.reduced_text(original, entry["tag"], entry["upstream_path"]).encode("utf-8") == committed, original
    if len(present) < len(ENTRIES):
        missing = sorted(f"{e['release_dir']}/{e['file']}" for e in ENTRIES if e not in present)
        pytest.skip(f"{len(present)} originals reproduce their committed files; missing in {root}: {', '.join(missing)}")
    # the whole directory, provenance files included, regenerates unchanged
    crds.vendor(root, tmp_path)
    for name in ("provenance.yml", "PROVENANCE.md"):
        assert (tmp_path / name).read_bytes() == (crds.VENDORED / name).read_bytes(), name
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.glob("*/*.yaml")) == \
        sorted(p.relative_to(crds.VENDORED) for p in crds.VENDORED.glob("*/*.yaml"))


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: f"{e['release_dir']}/{e['file']}")
def test_committed_crd_is_reduced(entry):
    served = crds.api_version(RELEASE_DIRS[entry["release_dir"]])
    with open(crds.VENDORED / entry["release_dir"] / entry["file"], encoding="utf-8") as handle:
        docs = [d for d in yaml.safe_load_all(handle) if d]
    assert docs and all(d["kind"] == "CustomResourceDefinition" for d in docs)
    for crd in docs:
        text = json.dumps(crd)
        assert "x-kubernetes-validations" not in text
        assert '"default": ""' not in text
        assert "conversion" not in crd["spec"]
        assert "status" not in crd
        assert [v["name"] for v in crd["spec"]["versions"] if v.get("served")] == [served]
        assert [v["name"] for v in crd["spec"]["versions"] if v.get("storage")] == [served]
        assert crds.reduce_crd(copy.deepcopy(crd)) == crd  # idempotent: loading reduces again


def test_repository_copy_is_used_without_capi_crds_dir(monkeypatch):
    monkeypatch.delenv("CAPI_CRDS_DIR", raising=False)
    for capi_version, release in crds.RELEASES.items():
        assert crds.crds_dir(capi_version) == crds.VENDORED / release.crds
