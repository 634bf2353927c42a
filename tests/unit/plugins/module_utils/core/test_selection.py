# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core import selection as sel
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core import capi_objects as objs


def _mds():
    return [
        objs.machine_deployment(name="md-b", cluster="c1"),
        objs.machine_deployment(name="md-a", cluster="c1"),
        objs.machine_deployment(name="md-c", cluster="c2"),
        objs.machine_deployment(name="md-a", cluster="c3", namespace="other"),
    ]


@pytest.mark.parametrize("kwargs, expected", [
    ({}, {"kind": "MachineDeployment", "namespace": None, "names": [], "cluster_name": None, "label_selector": None}),
    ({"kind": "kcp", "namespace": "ns", "name": "x"},
     {"kind": "KubeadmControlPlane", "namespace": "ns", "names": ["x"], "cluster_name": None, "label_selector": None}),
    ({"name": "a", "names": ["b", "a"], "cluster_name": "c1", "label_selectors": ["env=prod", " tier in (a,b) "]},
     {"kind": "MachineDeployment", "namespace": None, "names": ["a", "b"], "cluster_name": "c1",
      "label_selector": "env=prod,tier in (a,b)"}),
    ({"label_selectors": "env=prod"},
     {"kind": "MachineDeployment", "namespace": None, "names": [], "cluster_name": None, "label_selector": "env=prod"}),
])
def test_selection(kwargs, expected):
    result = sel.selection(**kwargs)
    assert {k: result[k] for k in expected} == expected


def test_selection_resource():
    expected = {"group": "controlplane.cluster.x-k8s.io", "plural": "kubeadmcontrolplanes"}
    assert sel.selection(kind="KubeadmControlPlane")["resource"] == expected


@pytest.mark.parametrize("kwargs, reason", [
    ({"kind": "MachineSet"}, "invalid_kind"),
    ({"names": ["a", ""]}, "invalid_selection"),
    ({"label_selectors": [""]}, "invalid_selection"),
])
def test_selection_rejects(kwargs, reason):
    with pytest.raises(RolloutError) as exc:
        sel.selection(**kwargs)
    assert exc.value.reason == reason


@pytest.mark.parametrize("kwargs, expected", [
    ({"namespace": "default"}, [("default", "md-a"), ("default", "md-b"), ("default", "md-c")]),
    ({}, [("default", "md-a"), ("default", "md-b"), ("default", "md-c"), ("other", "md-a")]),
    ({"cluster_name": "c1"}, [("default", "md-a"), ("default", "md-b")]),
    ({"name": "md-a"}, [("default", "md-a"), ("other", "md-a")]),
    ({"namespace": "default", "names": ["md-c", "md-b"]}, [("default", "md-b"), ("default", "md-c")]),
    ({"cluster_name": "c3", "name": "md-a"}, [("other", "md-a")]),
])
def test_select(kwargs, expected):
    chosen = sel.select(_mds(), sel.selection(**kwargs))
    assert [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in chosen] == expected


def test_select_kcp_cluster_from_owner_reference():
    kcp = objs.kubeadm_control_plane(cluster="c9")
    del kcp["metadata"]["labels"]
    assert sel.select([kcp], sel.selection(kind="kcp", cluster_name="c9")) == [kcp]


def test_not_found_lists_existing_names():
    with pytest.raises(RolloutError) as exc:
        sel.select(_mds(), sel.selection(namespace="default", name="md-x"))
    err = exc.value
    assert err.reason == "not_found"
    assert err.ref == "machinedeployment/default/md-x"
    assert str(err) == ("machinedeployment/default/md-x: MachineDeployment md-x not found in namespace default. "
                        "existing in namespace default: md-a, md-b, md-c.")


def test_not_found_with_cluster_filter_lists_only_that_cluster():
    with pytest.raises(RolloutError) as exc:
        sel.select(_mds(), sel.selection(namespace="default", cluster_name="c2", names=["md-a", "md-z"]))
    assert exc.value.ref is None
    assert "MachineDeployment md-a, md-z not found in namespace default, cluster c2" in str(exc.value)
    assert exc.value.hint == "existing in namespace default, cluster c2: md-c"


def test_not_found_many_existing_points_to_info():
    many = [objs.machine_deployment(name=f"md-{i:02d}") for i in range(11)]
    with pytest.raises(RolloutError) as exc:
        sel.select(many, sel.selection(namespace="default", name="nope"))
    assert exc.value.hint == "11 exist in namespace default; list them with capi_rollout_info"


def test_nothing_matches():
    selection = sel.selection(kind="kcp", namespace="default", label_selectors=["env=prod"])
    with pytest.raises(RolloutError) as exc:
        sel.select([], selection)
    assert "no KubeadmControlPlane found in namespace default, labels env=prod" in str(exc.value)
    assert "check namespace, cluster_name and label_selectors" in exc.value.hint
    assert sel.select([], selection, require_match=False) == []
