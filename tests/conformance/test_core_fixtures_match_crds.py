# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The unit-test fixtures of the core must be objects the real CRDs accept: validate them against
the CRD schemas of CAPI v1.10.10 (v1beta1) and v1.14.0 (v1beta2), as the simulator installs them
(capisim.crds.load_crds: the reduced copies in tests/crds, or upstream originals from $CAPI_CRDS_DIR).
Lives here rather than in tests/unit because ansible-test runs units in a copy of the collection
with a filtered environment, where the CRDs cannot be found."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from capisim.crds import load_crds
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core import capi_objects as objs

import jsonschema

RELEASE = {"v1beta1": "v1.10", "v1beta2": "v1.14"}  # API version -> capi_version (capisim.crds.RELEASES)
_crds = {}
_cache = {}


def _schema(kind, version):
    key = (kind, version)
    if key not in _cache:
        if version not in _crds:
            _crds[version] = load_crds(RELEASE[version])
        crd = [c for c in _crds[version] if c["spec"]["names"]["kind"] == kind][0]
        schema = [v for v in crd["spec"]["versions"] if v["name"] == version][0]["schema"]["openAPIV3Schema"]
        _cache[key] = _strict(schema)
    return _cache[key]


def _strict(schema):
    """Structural schemas prune unknown fields; make them errors so a misspelt path fails here."""
    if isinstance(schema, dict):
        schema = {k: _strict(v) for k, v in schema.items()}
        if schema.get("type") == "object" and "properties" in schema and "additionalProperties" not in schema \
                and not schema.get("x-kubernetes-preserve-unknown-fields"):
            schema["additionalProperties"] = False
        return schema
    if isinstance(schema, list):
        return [_strict(v) for v in schema]
    return schema


def _without_metadata(obj):
    # metadata is validated by the API server itself, not by the CRD schema
    return {k: v for k, v in obj.items() if k != "metadata"}


FIXTURES = [
    ("MachineDeployment", objs.machine_deployment),
    ("KubeadmControlPlane", objs.kubeadm_control_plane),
    ("MachineSet", objs.machine_set),
    ("Machine", objs.machine),
    ("Cluster", lambda v: objs.cluster(v, paused=True)),
    ("Machine", lambda v: objs.machine(v, ready=False, up_to_date=False, available=False, deleting=True)),
    ("MachineDeployment", lambda v: objs.set_rollout_after(objs.machine_deployment(v), objs.HOUR_LATER)),
    ("KubeadmControlPlane", lambda v: objs.set_rollout_after(objs.kubeadm_control_plane(v), objs.HOUR_LATER)),
]


@pytest.mark.parametrize("version", objs.VERSIONS)
@pytest.mark.parametrize("kind, build", FIXTURES)
def test_fixture_matches_crd_schema(version, kind, build):
    jsonschema.validate(_without_metadata(build(version)), _schema(kind, version))


def test_schema_check_catches_wrong_version_paths():
    md = objs.machine_deployment("v1beta2")
    md["spec"]["rolloutAfter"] = objs.NOW_TEXT  # v1beta1 field name in a v1beta2 object
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(_without_metadata(md), _schema("MachineDeployment", "v1beta2"))
