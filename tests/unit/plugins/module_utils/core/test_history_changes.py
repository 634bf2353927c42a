# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What changed from one revision to the next (core.history.revision_changes): the template identity and,
when the templates still exist, their specs, with dotted paths; templates that are gone are said so."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.core import history
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core import capi_objects as objs

KEY = "rollout.capi-rollout.dev/history"
INFRA = ("infrastructure.cluster.x-k8s.io", "DockerMachineTemplate")
BOOTSTRAP = ("bootstrap.cluster.x-k8s.io", "KubeadmConfigTemplate")


def _template(name, image, extra=None):
    spec = {"template": {"spec": dict({"customImage": image}, **(extra or {}))}}
    return {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachineTemplate",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def _history():
    """v1.14-like: A (rev 1, only as the record's "from") -> B (rev 2) -> restart (rev 3), MachineSet of rev 3 only."""
    md = objs.machine_deployment("v1beta2", revision="3", infra="md-0-infra-b")
    ms = objs.machine_set("v1beta2", suffix="ccccc", revision="3", infra="md-0-infra-b", created="2026-02-03T00:00:00Z")
    ident_a = history.identity_of(objs.machine_set("v1beta2", infra="md-0-infra-a"))
    ident_a["version"] = "v1.30.1"
    ident_b = history.identity_of(ms)
    record = [history.make_entry(2, "2026-02-01T00:00:00Z", "restarted", ident_a, ident_b, reason="new hardware", actor="alice"),
              history.make_entry(3, "2026-02-03T00:00:00Z", "restarted", ident_b, ident_b, reason="CVE", actor="bob")]
    return objs.annotate(md, KEY, history.serialize(record)), [ms]


BOOTSTRAP_TEMPLATE = {"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1", "kind": "KubeadmConfigTemplate",
                      "metadata": {"name": "md-0-bootstrap", "namespace": "default"}, "spec": {"template": {"spec": {}}}}


def _existing(*templates, bootstrap=True):
    return {INFRA: list(templates), BOOTSTRAP: [BOOTSTRAP_TEMPLATE] if bootstrap else []}


def test_changes_from_the_previous_revision_with_template_specs():
    md, sets = _history()
    templates = _existing(_template("md-0-infra-a", "kindest/node:v1.30.1", {"cpus": 2}),
                          _template("md-0-infra-b", "kindest/node:v1.30.2"))
    rows = history.merged_history(md, sets, templates=templates)
    assert [(r["revision"], r["previous_revision"]) for r in rows] == [(3, 2), (2, 1), (1, None)]
    assert rows[0]["changes"] == [] and rows[0]["change_notes"][-1] == "same template as revision 2 (a restart)"
    assert rows[0]["reason"] == "CVE" and rows[0]["actor"] == "bob" and rows[0]["time"] == "2026-02-03T00:00:00Z"
    assert rows[1]["changes"] == [
        {"path": "version", "before": "v1.30.1", "after": objs.machine_set("v1beta2")["spec"]["template"]["spec"]["version"]},
        {"path": "infrastructure_ref.name", "before": "md-0-infra-a", "after": "md-0-infra-b"},
        {"path": "infrastructure_template.spec.template.spec.customImage", "before": "kindest/node:v1.30.1",
         "after": "kindest/node:v1.30.2"},
        {"path": "infrastructure_template.spec.template.spec.cpus", "before": 2, "after": None},
    ]
    assert rows[1]["change_notes"] == []
    assert rows[2]["changes"] == [] and rows[2]["change_notes"] == ["oldest revision known: nothing to compare with"]


def test_a_template_that_no_longer_exists_is_said_not_compared():
    md, sets = _history()
    rows = history.merged_history(md, sets, templates=_existing(_template("md-0-infra-b", "x")))
    assert [c["path"] for c in rows[1]["changes"]] == ["version", "infrastructure_ref.name"]
    assert rows[1]["change_notes"] == [
        "infrastructure_template specs not compared: DockerMachineTemplate md-0-infra-a no longer exists"]
    assert rows[2]["change_notes"][0] == "DockerMachineTemplate md-0-infra-a no longer exists"
    unread = history.merged_history(md, sets)  # templates not read: identity changes only, and a note
    assert [c["path"] for c in unread[1]["changes"]] == ["version", "infrastructure_ref.name"]
    assert unread[1]["change_notes"] == ["infrastructure_template specs not compared: the templates were not read"]


def test_one_revision_in_detail_compares_with_the_next_older_one():
    md, sets = _history()
    templates = _existing(_template("md-0-infra-b", "kindest/node:v1.30.2"), bootstrap=False)
    (row,) = history.history_info(md, sets, revision=2, templates=templates)["history"]
    assert row["previous_revision"] == 1 and row["record"]["reason"] == "new hardware"
    assert row["template_specs"]["infrastructure_template"] == {
        "kind": "DockerMachineTemplate", "name": "md-0-infra-b", "exists": True,
        "spec": {"template": {"spec": {"customImage": "kindest/node:v1.30.2"}}}}
    bootstrap = row["template_specs"]["bootstrap_template"]
    assert bootstrap["exists"] is False and bootstrap["spec"] is None
    (oldest,) = history.history_info(md, sets, revision=1)["history"]
    assert oldest["previous_revision"] is None and oldest["template_specs"]["infrastructure_template"]["exists"] is None


def test_history_template_refs_lists_every_template_once():
    md, sets = _history()
    refs = history.history_template_refs(md, sets)
    assert [(r["role"], r["kind"], r["name"]) for r in refs] == [
        ("infrastructure", "DockerMachineTemplate", "md-0-infra-a"),
        ("bootstrap", "KubeadmConfigTemplate", refs[1]["name"]),
        ("infrastructure", "DockerMachineTemplate", "md-0-infra-b")]
    assert all(r["namespace"] == "default" for r in refs)


def test_find_template_states():
    ref = {"api_group": INFRA[0], "kind": INFRA[1], "name": "a"}
    assert history.find_template(None, ref) == ("unread", None)
    assert history.find_template({BOOTSTRAP: []}, ref) == ("unread", None)
    assert history.find_template({INFRA: []}, ref) == ("missing", None)
    found = _template("a", "x")
    assert history.find_template({INFRA: [found]}, ref) == ("found", found)
