# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.filter.rollout_history_table import FilterModule

table = FilterModule().filters()["rollout_history_table"]


def _template(infra, version="v1.30.4"):
    return {"version": version, "bootstrap_ref": {"api_group": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfigTemplate", "name": "md-0"},
            "infrastructure_ref": {"api_group": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachineTemplate", "name": infra},
            "data_secret_name": None, "failure_domain": None}


ROWS = [
    {"revision": 3, "current": True, "template": _template("md-0-b"), "time": "2026-03-02T00:00:00Z", "action": "restarted",
     "reason": "CVE-2026-1", "actor": "alice", "rollout_id": None, "source": "both", "machine_set": "md-0-x",
     "machine_counts": {"replaced": 2, "updated_in_place": 0}, "machines_source": "machines", "machines": "2 replaced",
     "previous_revision": 2, "changes": [], "change_notes": ["same template as revision 2 (a restart)"]},
    {"revision": 2, "current": False, "template": _template("md-0-b"), "time": "2026-03-01T00:00:00Z", "action": "restarted",
     "reason": "new hardware", "actor": "bob", "source": "record", "previous_revision": 1,
     "machine_counts": {"replaced": 1, "updated_in_place": 1}, "machines_source": "record",
     "machines": "1 replaced, 1 updated in place",
     "changes": [{"path": "infrastructure_ref.name", "before": "md-0-a", "after": "md-0-b"},
                 {"path": "infrastructure_template.spec.template.spec.customImage", "before": "img:1", "after": "img:2"}],
     "change_notes": []},
    {"revision": 1, "current": False, "template": _template("md-0-a"), "time": None, "action": None, "source": "record",
     "machine_counts": None, "machines_source": None, "machines": "not known",
     "previous_revision": None, "changes": [], "change_notes": ["DockerMachineTemplate md-0-a no longer exists",
                                                                "oldest revision known: nothing to compare with"]},
]
RESOURCE = {"ref": "machinedeployment/default/md-0", "kind": "MachineDeployment", "history": ROWS}


def test_one_line_per_revision_newest_first():
    lines = table([RESOURCE])
    assert lines[0] == "machinedeployment/default/md-0"
    assert lines[1].split() == ["REVISION", "TIME", "ACTION", "CAUSE", "MACHINES", "VERSION", "INFRASTRUCTURE", "CHANGES",
                                "REASON", "ACTOR"]
    assert [line.split()[0] for line in lines[3:]] == ["3*", "2", "1"]
    assert "same template (restart)" in lines[3] and lines[3].endswith("alice")
    assert "infrastructure_ref.name md-0-a -> md-0-b; 1 template spec field" in lines[4]
    assert "DockerMachineTemplate/md-0-a" in lines[5] and lines[5].split()[1] == "-"


def test_the_machines_column_and_detail_say_how_the_machines_changed_and_from_where():
    lines = table([RESOURCE])
    at = lines[1].index("MACHINES")
    assert [line[at:].split("  ")[0] for line in lines[3:]] == ["2 replaced", "1 replaced, 1 updated in place", "not known"]
    detail = table(dict(RESOURCE, history=ROWS), detail=True)
    assert "  Machines:    2 replaced (counted from its Machines now)" in detail
    assert "  Machines:    1 replaced, 1 updated in place (recorded when the revision was left)" in detail
    assert "  Machines:    not known" in detail


CHANGE = {"revision": None, "since_revision": 3, "current": False, "source": "object", "time": "2026-03-03T00:00:00Z",
          "action": "changed", "cause": "in-place field", "actor": "alice", "machine_set": None,
          "machines": "none replaced: propagated to the Machines in place (CAPI v1.4+)",
          "changes": [{"path": "spec.template.spec.nodeDrainTimeout", "before": None, "after": "5m0s"}],
          "note": "changed outside since entry 3 (stored with the next recorded change)"}


def test_a_change_besides_revisions_has_its_cause_actor_and_diff():
    lines = table(dict(RESOURCE, history=[CHANGE, dict(ROWS[0], cause="trigger")]))
    assert lines[3].split()[:6] == ["(after", "3)", "2026-03-03T00:00:00Z", "changed", "in-place", "field"]
    assert "spec.template.spec.nodeDrainTimeout - -> 5m0s" in lines[3] and lines[3].endswith("alice")
    assert lines[3][lines[1].index("MACHINES"):].startswith("none replaced  ")  # the explanation is in the detail
    assert lines[4].split()[:4] == ["3*", "2026-03-02T00:00:00Z", "restarted", "trigger"]
    detail = table(dict(RESOURCE, history=[dict(ROWS[0], cause="trigger", changed_since=[CHANGE])]), detail=True)
    assert "  Cause:       trigger" in detail
    assert "  Then: change after revision 3" in detail
    assert "    Actor:       alice" in detail and "      spec.template.spec.nodeDrainTimeout: - -> 5m0s" in detail


def test_detail_shows_every_change_before_and_after_and_the_notes():
    lines = table(dict(RESOURCE, history=[ROWS[1]]), detail=True)
    assert lines[0] == "machinedeployment/default/md-0 revision 2"
    assert "  Reason:      new hardware" in lines
    assert "    Infrastructure:  DockerMachineTemplate/md-0-b" in lines
    assert "  Changes from revision 1:" in lines
    assert "    infrastructure_template.spec.template.spec.customImage: img:1 -> img:2" in lines
    oldest = table(dict(RESOURCE, history=[ROWS[0], ROWS[2]]), detail=True)
    assert "  Changes from revision 2: none" in oldest and "" in oldest
    assert "  Note: DockerMachineTemplate md-0-a no longer exists" in oldest


def test_objects_without_history_and_bad_input():
    assert table([]) == ["(no objects)"]
    assert table([{"ref": "x", "history": []}, {"ref": "y"}]) == [
        "x", "(no revisions known)", "", "y", "(no history read: run capi_rollout_info with history=true)"]
    with pytest.raises(AnsibleFilterError):
        table("nope")


def test_long_cells_are_cut():
    long = dict(ROWS[1], changes=[{"path": "version", "before": "v" * 80, "after": "w"}])
    line = table(dict(RESOURCE, history=[long]), width=20)[3]
    assert "~" in line and "v" * 80 not in line
