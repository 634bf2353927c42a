# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import hashlib
import json

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core import template_clone as tc
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError

CLUSTER_OWNER = {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "name": "prod-eu-1",
                 "uid": "5d0d3f4e-0000-4000-8000-000000000001"}
MD_OWNER = {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineDeployment", "name": "prod-eu-1-md-0",
            "uid": "5d0d3f4e-0000-4000-8000-000000000002", "controller": True, "blockOwnerDeletion": True}


def aws_template(name="prod-eu-1-md-0", labels=None, annotations=None, owners=None, spec=None, extra_meta=None):
    """An AWSMachineTemplate as a GET returns it (server fields included)."""
    meta = {
        "name": name, "namespace": "fleet-a", "uid": "0b8f0c1a-1111-4000-8000-000000000003",
        "resourceVersion": "48213", "generation": 1, "creationTimestamp": "2026-01-10T08:00:00Z",
        "managedFields": [{"manager": "clusterctl", "operation": "Apply"}],
        "labels": {"cluster.x-k8s.io/cluster-name": "prod-eu-1"} if labels is None else labels,
        "ownerReferences": [CLUSTER_OWNER] if owners is None else owners,
    }
    if annotations is not None:
        meta["annotations"] = annotations
    meta.update(extra_meta or {})
    template_spec = spec if spec is not None else {
        "instanceType": "m5.xlarge",
        "iamInstanceProfile": "nodes.cluster-api-provider-aws.sigs.k8s.io",
        "ami": {"id": "ami-0aaaaaaaaaaaaaaa0"},
        "rootVolume": {"size": 80, "type": "gp3"},
        "additionalSecurityGroups": [{"id": "sg-1"}, {"id": "sg-2"}],
        "sshKeyName": "ops",
    }
    return {
        "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "AWSMachineTemplate", "metadata": meta,
        "spec": {"template": {"metadata": {"labels": {"pool": "general"}}, "spec": template_spec}},
        "status": {"capacity": {"cpu": "4"}},
    }


def sha8(spec):
    text = json.dumps(spec, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def created_from(plan, **changes):
    """The object as the API server would return it after creating plan['object']."""
    obj = copy.deepcopy(plan["object"])
    obj["metadata"].update({"uid": "new-uid", "resourceVersion": "50000", "creationTimestamp": "2026-03-01T12:00:00Z"})
    obj["metadata"].update(changes)
    return obj


# ---------------------------------------------------------------------------------------------
# deterministic names


def test_default_name_is_source_name_plus_hash_of_merged_spec():
    source = aws_template()
    plan = tc.plan_clone(source, {"instanceType": "m6i.2xlarge"})
    merged = dict(source["spec"]["template"]["spec"], instanceType="m6i.2xlarge")
    assert plan["hash"] == sha8(merged)
    assert plan["name"] == f"prod-eu-1-md-0-{sha8(merged)}"
    assert plan["ref"] == f"awsmachinetemplate/fleet-a/prod-eu-1-md-0-{sha8(merged)}"
    assert plan["infrastructure_ref"] == {"api_group": "infrastructure.cluster.x-k8s.io", "kind": "AWSMachineTemplate",
                                          "name": plan["name"]}
    assert plan["source_ref"] == {"api_group": "infrastructure.cluster.x-k8s.io", "kind": "AWSMachineTemplate",
                                  "name": "prod-eu-1-md-0", "namespace": "fleet-a",
                                  "api_version": "infrastructure.cluster.x-k8s.io/v1beta2"}


NAME_CASES = [
    # (what, overrides a, overrides b, same name?)
    ("same overrides", {"instanceType": "m6i.2xlarge"}, {"instanceType": "m6i.2xlarge"}, True),
    ("key order does not matter", {"instanceType": "m6i.2xlarge", "rootVolume": {"size": 120, "type": "gp3"}},
     {"rootVolume": {"type": "gp3", "size": 120}, "instanceType": "m6i.2xlarge"}, True),
    ("overriding with the current value is no change", {"sshKeyName": "ops"}, {}, True),
    ("different values", {"instanceType": "m6i.2xlarge"}, {"instanceType": "m6i.4xlarge"}, False),
    ("list order matters", {"additionalSecurityGroups": [{"id": "sg-2"}, {"id": "sg-1"}]}, {}, False),
    ("deleting a key changes the name", {"sshKeyName": None}, {}, False),
    ("int vs string", {"rootVolume": {"size": 120}}, {"rootVolume": {"size": "120"}}, False),
]


@pytest.mark.parametrize("what, first, second, same", NAME_CASES, ids=[c[0] for c in NAME_CASES])
def test_names_are_deterministic(what, first, second, same):
    one = tc.plan_clone(aws_template(), first)
    again = tc.plan_clone(aws_template(), copy.deepcopy(first))
    other = tc.plan_clone(aws_template(), second)
    assert one["name"] == again["name"], what
    assert (one["name"] == other["name"]) is same, what


def test_no_overrides_is_a_copy_under_a_hashed_name():
    source = aws_template()
    plan = tc.plan_clone(source, {})
    assert plan["name"] == f"prod-eu-1-md-0-{sha8(source['spec']['template']['spec'])}"
    assert plan["object"]["spec"] == source["spec"]
    assert plan["changes"] == []
    assert tc.plan_clone(source, None)["name"] == plan["name"]


LONG = "a-very-long-machine-deployment-name-for-the-prod-eu-west-1-cluster"  # 66 characters


@pytest.mark.parametrize("source_name", [LONG, "x" * 62, "pool-" + "-" * 50 + "z", "n" * 54 + "." + "m" * 10])
def test_default_names_are_cut_to_63_characters(source_name):
    plan = tc.plan_clone(aws_template(name=source_name), {"instanceType": "c7i.large"})
    assert len(plan["name"]) <= 63
    assert plan["name"].endswith("-" + plan["hash"])
    stem = plan["name"][:-9]
    assert stem and stem[-1] not in "-." and source_name.startswith(stem)


def test_explicit_name_is_used_as_given():
    plan = tc.plan_clone(aws_template(), {"instanceType": "m6i.2xlarge"}, name="prod-eu-1-md-0-2026-03")
    assert plan["name"] == "prod-eu-1-md-0-2026-03"
    assert plan["object"]["metadata"]["name"] == "prod-eu-1-md-0-2026-03"
    assert plan["infrastructure_ref"]["name"] == "prod-eu-1-md-0-2026-03"
    assert plan["default_name"] == f"prod-eu-1-md-0-{plan['hash']}"


@pytest.mark.parametrize("bad", ["Prod-EU", "pool_1", "-pool", "pool-", "x" * 254, "a..b", "pool/1"])
def test_invalid_explicit_name_is_refused_naming_the_object(bad):
    with pytest.raises(RolloutError) as exc:
        tc.plan_clone(aws_template(), {}, name=bad)
    assert exc.value.reason == "invalid_name"
    assert exc.value.ref == f"awsmachinetemplate/fleet-a/{bad}"
    assert "leave name unset" in str(exc.value) and "nothing was changed" in str(exc.value)


# ---------------------------------------------------------------------------------------------
# clone of a clone


def test_clone_of_clone_with_same_overrides_is_stable():
    overrides = {"instanceType": "m6i.2xlarge", "rootVolume": {"size": 120}}
    first = tc.plan_clone(aws_template(), overrides)
    clone = created_from(first)
    second = tc.plan_clone(clone, overrides)
    assert second["name"] == first["name"]
    assert second["hash"] == first["hash"]
    assert second["object"]["spec"] == first["object"]["spec"]
    assert second["compare"](clone)["changed"] is False


def test_chains_replace_the_hash_suffix_instead_of_growing():
    source = aws_template(name=LONG[:50])
    names = []
    for size in (100, 120, 140, 160):
        plan = tc.plan_clone(source, {"rootVolume": {"size": size}})
        names.append(plan["name"])
        source = created_from(plan)
    assert all(name.startswith(LONG[:50] + "-") and len(name) == 59 for name in names)
    assert len(set(names)) == 4
    assert source["metadata"]["annotations"]["rollout.capi-rollout.dev/cloned-from"] == f"AWSMachineTemplate/{names[2]}"


@pytest.mark.parametrize("name, annotations, base", [
    # a suffix that only looks like a hash is kept when the template was not made here
    ("pool-0-1234abcd", None, "pool-0-1234abcd"),
    ("pool-0-1234abcd", {"rollout.capi-rollout.dev/spec-hash": "ffffffff"}, "pool-0-1234abcd"),
    ("pool-0-1234abcd", {"rollout.capi-rollout.dev/spec-hash": "1234abcd"}, "pool-0"),
    # an explicitly named clone keeps its name as the base
    ("pool-0-2026-03", {"rollout.capi-rollout.dev/spec-hash": "1234abcd"}, "pool-0-2026-03"),
    ("1234abcd", {"rollout.capi-rollout.dev/spec-hash": "1234abcd"}, "1234abcd"),
])
def test_base_name(name, annotations, base):
    assert tc.base_name(aws_template(name=name, annotations=annotations)) == base


# ---------------------------------------------------------------------------------------------
# deep merge


MERGE_CASES = [
    ("scalar replaces", {"a": 1, "b": 2}, {"a": 3}, {"a": 3, "b": 2}),
    ("new key is added", {"a": 1}, {"b": {"c": 1}}, {"a": 1, "b": {"c": 1}}),
    ("dicts merge recursively", {"v": {"size": 80, "type": "gp3", "tags": {"x": "1"}}},
     {"v": {"size": 120, "tags": {"y": "2"}}}, {"v": {"size": 120, "type": "gp3", "tags": {"x": "1", "y": "2"}}}),
    ("lists replace whole", {"l": [1, 2, 3]}, {"l": [4]}, {"l": [4]}),
    ("lists of dicts replace whole", {"l": [{"id": "a", "x": 1}]}, {"l": [{"id": "a"}]}, {"l": [{"id": "a"}]}),
    ("null deletes a key", {"a": 1, "b": 2}, {"b": None}, {"a": 1}),
    ("null deletes a nested key", {"v": {"size": 80, "type": "gp3"}}, {"v": {"type": None}}, {"v": {"size": 80}}),
    ("null of an absent key is nothing", {"a": 1}, {"zz": None}, {"a": 1}),
    ("null inside a new dict is dropped", {"a": 1}, {"b": {"c": None, "d": 1}}, {"a": 1, "b": {"d": 1}}),
    ("dict replaces a scalar", {"a": 1}, {"a": {"b": 1}}, {"a": {"b": 1}}),
    ("scalar replaces a dict", {"a": {"b": 1}}, {"a": "x"}, {"a": "x"}),
    ("empty dict merges nothing", {"a": {"b": 1}}, {"a": {}}, {"a": {"b": 1}}),
    ("false and 0 are values, not deletes", {"a": True, "b": 5}, {"a": False, "b": 0}, {"a": False, "b": 0}),
    ("nulls inside lists are kept", {"l": [1]}, {"l": [None, 2]}, {"l": [None, 2]}),
]


@pytest.mark.parametrize("what, base, overrides, expected", MERGE_CASES, ids=[c[0] for c in MERGE_CASES])
def test_deep_merge_rules(what, base, overrides, expected):
    before = (copy.deepcopy(base), copy.deepcopy(overrides))
    assert tc.deep_merge(base, overrides) == expected, what
    assert (base, overrides) == before  # inputs untouched


def test_overrides_go_into_spec_template_spec_only():
    source = aws_template()
    plan = tc.plan_clone(source, {"instanceType": "m6i.2xlarge", "sshKeyName": None, "rootVolume": {"size": 120}})
    spec = plan["object"]["spec"]
    assert spec["template"]["metadata"] == {"labels": {"pool": "general"}}
    assert spec["template"]["spec"] == {
        "instanceType": "m6i.2xlarge", "iamInstanceProfile": "nodes.cluster-api-provider-aws.sigs.k8s.io",
        "ami": {"id": "ami-0aaaaaaaaaaaaaaa0"}, "rootVolume": {"size": 120, "type": "gp3"},
        "additionalSecurityGroups": [{"id": "sg-1"}, {"id": "sg-2"}]}
    assert plan["changes"] == [
        {"path": "spec.template.spec.instanceType", "before": "m5.xlarge", "after": "m6i.2xlarge"},
        {"path": "spec.template.spec.rootVolume.size", "before": 80, "after": 120},
        {"path": "spec.template.spec.sshKeyName", "before": "ops", "after": None},
    ]
    assert source == aws_template()  # the source is not modified


def test_empty_template_spec_is_a_valid_source():
    plan = tc.plan_clone(aws_template(spec={}), {"customImage": "kindest/node:v1.31.0"})
    assert plan["object"]["spec"]["template"]["spec"] == {"customImage": "kindest/node:v1.31.0"}


@pytest.mark.parametrize("bad", [["a"], "instanceType=m6i", 3])
def test_overrides_must_be_a_mapping(bad):
    with pytest.raises(RolloutError) as exc:
        tc.plan_clone(aws_template(), bad)
    assert exc.value.reason == "invalid_input"
    assert exc.value.ref == "awsmachinetemplate/fleet-a/prod-eu-1-md-0"


@pytest.mark.parametrize("mutate", [
    lambda obj: obj["spec"].pop("template"),
    lambda obj: obj["spec"]["template"].pop("spec"),
    lambda obj: obj["spec"]["template"].update(spec="x"),
])
def test_source_without_template_spec_is_refused(mutate):
    source = aws_template()
    mutate(source)
    with pytest.raises(RolloutError) as exc:
        tc.plan_clone(source, {})
    assert exc.value.reason == "invalid_source"
    assert str(exc.value).startswith("awsmachinetemplate/fleet-a/prod-eu-1-md-0: ")
    assert "MachineTemplate" in exc.value.hint


# ---------------------------------------------------------------------------------------------
# metadata: labels, annotations, owner references, server fields


def test_server_fields_and_status_are_not_copied():
    source = aws_template(extra_meta={"finalizers": ["x"], "generateName": "pool-", "selfLink": "/apis/x",
                                      "deletionGracePeriodSeconds": 30})
    obj = tc.plan_clone(source, {})["object"]
    assert set(obj) == {"apiVersion", "kind", "metadata", "spec"}
    assert set(obj["metadata"]) == {"name", "namespace", "labels", "annotations", "ownerReferences"}
    assert obj["apiVersion"] == "infrastructure.cluster.x-k8s.io/v1beta2" and obj["kind"] == "AWSMachineTemplate"
    assert obj["metadata"]["namespace"] == "fleet-a"


LABEL_CASES = [
    ("cluster-name and user labels are kept",
     {"cluster.x-k8s.io/cluster-name": "c1", "team": "a", "clusterctl.cluster.x-k8s.io/move": ""},
     {"cluster.x-k8s.io/cluster-name": "c1", "team": "a", "clusterctl.cluster.x-k8s.io/move": ""}),
    ("topology labels are dropped",
     {"cluster.x-k8s.io/cluster-name": "c1", "topology.cluster.x-k8s.io/owned": "",
      "topology.cluster.x-k8s.io/deployment-name": "md-0"},
     {"cluster.x-k8s.io/cluster-name": "c1"}),
    ("controller-managed labels are dropped",
     {"cluster.x-k8s.io/cluster-name": "c1", "machine-template-hash": "123", "cluster.x-k8s.io/set-name": "ms"},
     {"cluster.x-k8s.io/cluster-name": "c1"}),
    ("GitOps ownership labels are dropped",
     {"app.kubernetes.io/managed-by": "Helm", "app.kubernetes.io/instance": "argo-app",
      "kustomize.toolkit.fluxcd.io/name": "infra", "app.kubernetes.io/part-of": "fleet"},
     {"app.kubernetes.io/part-of": "fleet"}),
    ("no labels", {}, {}),
]


@pytest.mark.parametrize("what, labels, expected", LABEL_CASES, ids=[c[0] for c in LABEL_CASES])
def test_label_filtering(what, labels, expected):
    meta = tc.plan_clone(aws_template(labels=labels), {}, force=True)["object"]["metadata"]
    assert meta.get("labels", {}) == expected, what


def test_annotations_are_copied_filtered_and_ours_added():
    source = aws_template(name="pool-0", annotations={
        "kubectl.kubernetes.io/last-applied-configuration": '{"big": "json"}',
        "meta.helm.sh/release-name": "infra", "argocd.argoproj.io/tracking-id": "x",
        "cluster.x-k8s.io/cloned-from-name": "class-tmpl", "cluster.x-k8s.io/cloned-from-groupkind": "X.y",
        "rollout.capi-rollout.dev/spec-hash": "00000000", "rollout.capi-rollout.dev/cloned-from": "X/old",
        "ops.example.com/ticket": "CHG-1"})
    plan = tc.plan_clone(source, {"instanceType": "c7i.large"})
    assert plan["object"]["metadata"]["annotations"] == {
        "ops.example.com/ticket": "CHG-1",
        "rollout.capi-rollout.dev/cloned-from": "AWSMachineTemplate/pool-0",
        "rollout.capi-rollout.dev/spec-hash": plan["hash"],
    }


def test_user_labels_and_annotations_are_added_and_null_leaves_out():
    source = aws_template(labels={"cluster.x-k8s.io/cluster-name": "c1", "hw": "2025", "team": "a"})
    meta = tc.plan_clone(source, {}, labels={"hw": 2026, "new": True, "team": None},
                         annotations={"note": "refresh", "rollout.capi-rollout.dev/cloned-from": None})["object"]["metadata"]
    assert meta["labels"] == {"cluster.x-k8s.io/cluster-name": "c1", "hw": "2026", "new": "true"}
    assert meta["annotations"]["note"] == "refresh"
    assert "rollout.capi-rollout.dev/cloned-from" not in meta["annotations"]


def test_labels_do_not_change_the_name():
    assert tc.plan_clone(aws_template(), {}, labels={"x": "1"})["name"] == tc.plan_clone(aws_template(), {})["name"]


@pytest.mark.parametrize("bad", [{"a": ["list"]}, {"a": {"b": 1}}])
def test_label_values_must_be_strings(bad):
    with pytest.raises(RolloutError) as exc:
        tc.plan_clone(aws_template(), {}, labels=bad)
    assert exc.value.reason == "invalid_input"


OWNER_CASES = [
    ("cluster owner is kept", [CLUSTER_OWNER], [CLUSTER_OWNER]),
    ("controller refs of other objects are dropped", [MD_OWNER, CLUSTER_OWNER], [CLUSTER_OWNER]),
    ("only a controller ref: none", [MD_OWNER], None),
    ("the controller flag of the cluster ref is dropped", [dict(CLUSTER_OWNER, controller=True, blockOwnerDeletion=True)],
     [dict(CLUSTER_OWNER, blockOwnerDeletion=True)]),
    ("v1beta2 cluster ref", [dict(CLUSTER_OWNER, apiVersion="cluster.x-k8s.io/v1beta2")],
     [dict(CLUSTER_OWNER, apiVersion="cluster.x-k8s.io/v1beta2")]),
    ("a Cluster kind of another group is not CAPI's", [dict(CLUSTER_OWNER, apiVersion="example.com/v1")], None),
    ("duplicates collapse", [CLUSTER_OWNER, dict(CLUSTER_OWNER)], [CLUSTER_OWNER]),
    ("no owners", [], None),
]


@pytest.mark.parametrize("what, owners, expected", OWNER_CASES, ids=[c[0] for c in OWNER_CASES])
def test_owner_reference_filtering(what, owners, expected):
    meta = tc.plan_clone(aws_template(owners=owners), {})["object"]["metadata"]
    assert meta.get("ownerReferences") == expected, what


# ---------------------------------------------------------------------------------------------
# an existing target: same content -> unchanged, different content -> error


def test_existing_target_with_same_spec_is_unchanged():
    plan = tc.plan_clone(aws_template(), {"instanceType": "m6i.2xlarge"})
    existing = created_from(plan)
    outcome = plan["compare"](existing)
    assert outcome == {"changed": False, "warnings": [],
                       "message": f"{plan['ref']} already exists with the same spec; nothing to do"}


def test_existing_target_created_by_someone_else_with_same_spec_is_unchanged():
    plan = tc.plan_clone(aws_template(), {"instanceType": "m6i.2xlarge"}, name="hand-made")
    existing = created_from(plan, annotations={}, labels={})
    assert plan["compare"](existing)["changed"] is False


def test_server_defaults_or_pruning_of_a_clone_made_here_count_as_same():
    plan = tc.plan_clone(aws_template(), {"instanceType": "m6i.2xlarge", "instanceTyp": "typo"})
    existing = created_from(plan)
    existing["spec"]["template"]["spec"].pop("instanceTyp")  # pruned: not in the schema
    existing["spec"]["template"]["spec"]["imageLookupBaseOS"] = "ubuntu-24.04"  # defaulted
    assert plan["compare"](existing)["changed"] is False
    assert tc.dropped_fields(plan["object"], existing) == ["spec.template.spec.instanceTyp"]


def test_dropped_fields_ignores_added_defaults():
    plan = tc.plan_clone(aws_template(), {})
    existing = created_from(plan)
    existing["spec"]["template"]["spec"]["added"] = 1
    assert tc.dropped_fields(plan["object"], existing) == []


def test_missing_requested_labels_on_an_existing_target_warn():
    plan = tc.plan_clone(aws_template(), {}, labels={"hw": "2026"}, annotations={"note": "x"})
    existing = created_from(plan)
    existing["metadata"]["labels"] = {}
    existing["metadata"]["annotations"].pop("note")
    outcome = plan["compare"](existing)
    assert outcome["changed"] is False
    assert outcome["warnings"] == [f"{plan['ref']} already exists with this spec but without the requested label hw, "
                                   "annotation note; its metadata was not changed"]


CONFLICT_CASES = [
    # (what, explicit name, mutate the existing object, name suggested in the hint)
    ("explicit name, other spec", "pool-2026",
     lambda obj: obj["spec"]["template"]["spec"].update(instanceType="t3.small"), "default"),
    ("default name, other spec (hand-made)", None,
     lambda obj: (obj["spec"]["template"]["spec"].pop("sshKeyName"), obj["metadata"].pop("annotations")), "-2"),
    ("hash annotation of another spec", None,
     lambda obj: (obj["spec"]["template"]["spec"].update(ami={"id": "ami-x"}),
                  obj["metadata"]["annotations"].update({"rollout.capi-rollout.dev/spec-hash": "00000000"})), "-2"),
    ("template metadata differs", "pool-2026",
     lambda obj: obj["spec"]["template"].update(metadata={"labels": {"pool": "gpu"}}), "default"),
]


@pytest.mark.parametrize("what, name, mutate, suggestion", CONFLICT_CASES, ids=[c[0] for c in CONFLICT_CASES])
def test_existing_target_with_different_content_is_an_error(what, name, mutate, suggestion):
    plan = tc.plan_clone(aws_template(), {"instanceType": "m6i.2xlarge"}, name=name)
    existing = created_from(plan)
    mutate(existing)
    with pytest.raises(RolloutError) as exc:
        plan["compare"](existing)
    err = exc.value
    assert err.reason == "template_conflict", what
    assert err.ref == plan["ref"]
    text = str(err)
    assert text.startswith(f"awsmachinetemplate/fleet-a/{plan['name']}: already exists with a different spec (spec.")
    assert "immutable" in text and "nothing was changed" in text
    assert "set name to a new template name" in text
    if suggestion == "default":
        assert plan["default_name"] in err.hint
    else:
        assert f"{plan['name']}-2" in err.hint


def test_conflict_message_names_the_differing_paths():
    plan = tc.plan_clone(aws_template(), {"instanceType": "m6i.2xlarge"}, name="pool-2026")
    existing = created_from(plan)
    existing["spec"]["template"]["spec"]["instanceType"] = "t3.small"
    existing["spec"]["template"]["spec"].pop("sshKeyName")
    with pytest.raises(RolloutError) as exc:
        plan["compare"](existing)
    assert "(spec.template.spec.instanceType, spec.template.spec.sshKeyName differ)" in str(exc.value)


def test_target_equal_to_source_without_overrides_is_unchanged():
    source = aws_template()
    plan = tc.plan_clone(source, {}, name=source["metadata"]["name"])
    assert plan["compare"](source)["changed"] is False
    changed = tc.plan_clone(source, {"instanceType": "m6i.2xlarge"}, name=source["metadata"]["name"])
    with pytest.raises(RolloutError) as exc:
        changed["compare"](source)
    assert exc.value.reason == "template_conflict"


# ---------------------------------------------------------------------------------------------
# topology-owned sources


TOPOLOGY = {"cluster.x-k8s.io/cluster-name": "c1", "topology.cluster.x-k8s.io/owned": "",
            "topology.cluster.x-k8s.io/deployment-name": "md-0"}
OWNED_MD = {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
            "metadata": {"name": "c1-md-0-x7k2p", "namespace": "fleet-a", "labels": TOPOLOGY}}
PLAIN_MD = {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
            "metadata": {"name": "c1-md-0", "namespace": "fleet-a", "labels": {"cluster.x-k8s.io/cluster-name": "c1"}}}

TOPOLOGY_CASES = [
    ("owned template", TOPOLOGY, None, "awsmachinetemplate/fleet-a/prod-eu-1-md-0"),
    ("owned MachineDeployment", None, OWNED_MD, "machinedeployment/fleet-a/c1-md-0-x7k2p"),
]


@pytest.mark.parametrize("what, labels, referenced_by, named", TOPOLOGY_CASES, ids=[c[0] for c in TOPOLOGY_CASES])
def test_topology_owned_is_refused_without_force(what, labels, referenced_by, named):
    source = aws_template(labels=labels)
    with pytest.raises(RolloutError) as exc:
        tc.plan_clone(source, {"instanceType": "m6i.2xlarge"}, referenced_by=referenced_by)
    err = exc.value
    assert err.reason == "topology_owned", what
    assert str(err).startswith("awsmachinetemplate/fleet-a/prod-eu-1-md-0: ")
    assert named in str(err) and "nothing was changed" in str(err)
    assert "ClusterClass" in err.hint and "spec.topology" in err.hint and "force" in err.hint


@pytest.mark.parametrize("what, labels, referenced_by, named", TOPOLOGY_CASES, ids=[c[0] for c in TOPOLOGY_CASES])
def test_topology_owned_is_cloned_with_force_and_a_warning(what, labels, referenced_by, named):
    plan = tc.plan_clone(aws_template(labels=labels), {"instanceType": "m6i.2xlarge"}, force=True,
                         referenced_by=referenced_by)
    assert named in plan["warnings"][0] and "force" in plan["warnings"][0], what
    labels = plan["object"]["metadata"].get("labels", {})
    assert "topology.cluster.x-k8s.io/owned" not in labels
    assert not any(key.startswith("topology.cluster.x-k8s.io/") for key in labels)


def test_not_topology_owned_has_no_warning():
    assert tc.plan_clone(aws_template(), {}, referenced_by=PLAIN_MD)["warnings"] == []


# ---------------------------------------------------------------------------------------------
# diff and returned object


def test_diff_shows_the_new_object():
    plan = tc.plan_clone(aws_template(), {"instanceType": "m6i.2xlarge"})
    diff = plan["diff"]
    assert diff["before"] == ""
    assert diff["before_header"] == f"{plan['ref']} (absent)" and diff["after_header"] == f"{plan['ref']} (new)"
    text = diff["after"].replace('"', "")
    assert text.startswith("apiVersion: infrastructure.cluster.x-k8s.io/v1beta2\nkind: AWSMachineTemplate\n")
    assert f"  name: {plan['name']}\n" in text
    assert "      instanceType: m6i.2xlarge\n" in text
    yaml = pytest.importorskip("yaml")
    assert yaml.safe_load(diff["after"]) == plan["object"]


def test_trimmed_drops_managed_fields_and_status():
    out = tc.trimmed(aws_template())
    assert "status" not in out and "managedFields" not in out["metadata"]
    assert out["metadata"]["uid"]


def test_v1beta1_style_source():
    source = aws_template()
    source["apiVersion"] = "infrastructure.cluster.x-k8s.io/v1beta1"
    source["kind"] = "DockerMachineTemplate"
    source["spec"]["template"]["spec"] = {"customImage": "kindest/node:v1.30.4"}
    plan = tc.plan_clone(source, {"customImage": "kindest/node:v1.31.0"})
    assert plan["object"]["apiVersion"] == "infrastructure.cluster.x-k8s.io/v1beta1"
    assert plan["ref"].startswith("dockermachinetemplate/fleet-a/prod-eu-1-md-0-")
    assert plan["infrastructure_ref"]["api_group"] == "infrastructure.cluster.x-k8s.io"


@pytest.mark.parametrize("overrides, expected", [
    ({"instanceType": ""}, "spec.template.spec.instanceType is empty, but the current template has 'm5.xlarge'"),
    ({"ami": {"id": ""}}, "spec.template.spec.ami.id is empty, but the current template has 'ami-0aaaaaaaaaaaaaaa0'"),
    ({"instanceType": "x" * 200 * 1024}, "spec.template.spec.instanceType is 204800 characters long ('xxxx"),
    ({"instanceType": "m7i\x00.large"}, "spec.template.spec.instanceType contains the control character '\\x00' at position 3"),
    ({"additionalTags": {"a\x1b": "b"}}, "spec.template.spec.additionalTags has the key 'a\\x1b': keys must be non-empty"),
    ({"additionalSecurityGroups": [{"id": "sg\x00"}]}, "spec.template.spec.additionalSecurityGroups.[0].id contains the control"),
    ({"tags": {f"k{index}": "v" * 1000 for index in range(80)}}, "the overrides are 8"),
])
def test_override_values_the_schema_would_take_but_that_are_no_new_hardware_are_refused(overrides, expected):
    with pytest.raises(RolloutError) as err:
        tc.plan_clone(aws_template(), overrides)
    assert err.value.reason == "invalid_override"
    assert err.value.message.startswith(f"awsmachinetemplate/fleet-a/prod-eu-1-md-0: overrides: {expected}"), err.value.message
    assert "nothing was changed" in err.value.message and "16384 characters" in err.value.message


def test_empty_or_long_values_where_they_are_new_and_null_to_remove_a_field_pass():
    plan = tc.plan_clone(aws_template(), {"sshKeyName": None, "subnet": "", "userDataNote": "x" * tc.OVERRIDE_VALUE_MAX_CHARS,
                                          "note": "line one\nline two\ttab"})
    assert "sshKeyName" not in plan["object"]["spec"]["template"]["spec"]
