# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the Machines of a revision changed (core.history machine counts): counted from the Machines while the
revision's MachineSet exists, kept in the record by the next recorded write so they outlive the MachineSet."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json

from ansible_collections.capi.rollout.plugins.module_utils.core import diff as diffs
from ansible_collections.capi.rollout.plugins.module_utils.core import history
from ansible_collections.capi.rollout.plugins.module_utils.core import restart
from ansible_collections.capi.rollout.plugins.module_utils.core import undo
from ansible_collections.capi.rollout.plugins.module_utils.core.plan import Observed
from ansible_collections.capi.rollout.plugins.module_utils.core.record import Recording
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core import capi_objects as objs

KEY = "rollout.capi-rollout.dev/history"
MS_CREATED = "2026-02-01T00:00:00Z"
COUNTS = {"replaced": 1, "updated_in_place": 2}


def _machine(name, ms_name="md-0-bbbbb", created=MS_CREATED, annotations=None, deleting=False):
    machine = objs.machine(name=name, ms_name=ms_name)
    machine["metadata"]["creationTimestamp"] = created
    if annotations:
        machine["metadata"]["annotations"] = annotations
    if deleting:
        machine["metadata"]["deletionTimestamp"] = "2026-02-02T00:00:00Z"
    return machine


MACHINES = [
    _machine("made", created="2026-02-01T00:00:05Z"),                       # made by the MachineSet: a replacement
    _machine("moved", created="2026-01-01T00:00:00Z"),                      # older than its MachineSet: moved in
    _machine("updating", annotations={"in-place-updates.internal.cluster.x-k8s.io/update-in-progress": ""}),
    _machine("going", created="2026-02-01T00:00:05Z", deleting=True),       # deleting: not counted
    _machine("other", ms_name="md-0-aaaaa", created="2026-02-01T00:00:05Z"),  # another MachineSet's
]


def _switched():
    """An MD switched by this collection from infra-a (revision 1) to infra-b (revision 2, MachineSet bbbbb)."""
    md = objs.machine_deployment(revision="2", infra="md-0-infra-b")
    ms_a = objs.machine_set(suffix="aaaaa", revision="1", infra="md-0-infra-a", replicas=0, created="2026-01-01T00:00:00Z")
    ms_b = objs.machine_set(suffix="bbbbb", revision="2", infra="md-0-infra-b", created=MS_CREATED)
    entry = history.make_entry(2, MS_CREATED, "restarted", history.identity_of(ms_a), history.identity_of(ms_b),
                               rollout_id="switch")
    return objs.annotate(md, KEY, history.serialize([entry])), [ms_a, ms_b]


def test_machines_made_by_the_machine_set_are_replaced_moved_or_marked_ones_updated_in_place():
    _md, (_ms_a, ms_b) = _switched()
    assert history.machine_counts(ms_b, MACHINES) == COUNTS
    assert history.machine_counts(ms_b, []) == {"replaced": 0, "updated_in_place": 0}
    assert [history.machines_words(counts) for counts in (COUNTS, {"replaced": 3, "updated_in_place": 0},
                                                          {"replaced": 0, "updated_in_place": 0}, None)] == [
        "1 replaced, 2 updated in place", "3 replaced", "none", "not known"]


def test_history_rows_count_from_the_machines_while_the_machine_set_exists():
    md, sets = _switched()
    rows = history.merged_history(md, sets, machines=MACHINES)
    assert [(r["revision"], r["machine_counts"], r["machines_source"], r["machines"]) for r in rows] == [
        (2, COUNTS, "machines", "1 replaced, 2 updated in place"),
        (1, {"replaced": 1, "updated_in_place": 0}, "machines", "1 replaced")]  # "other", not yet rolled
    # Machines not read: not known, never a guess
    assert [r["machines"] for r in history.merged_history(md, sets)] == ["not known", "not known"]
    detail = history.history_info(md, sets, revision=2, machines=MACHINES)["history"][0]
    assert detail["machine_counts"] == COUNTS and detail["machines_source"] == "machines"


def test_the_next_recorded_write_keeps_the_counts_of_the_revision_it_leaves_so_they_outlive_its_machine_set():
    md, sets = _switched()
    assert history.counts_wanted(md)
    plan = restart.plan_restart(md, objs.NOW, infrastructure_ref="md-0-infra-c", recording=Recording(rollout_id="next"),
                                observed=Observed(machine_sets=sets, machines=MACHINES))
    written = diffs.apply_merge_patch(md, plan["merge_patch"])
    record = json.loads(written["metadata"]["annotations"][KEY])
    assert [(entry["revision"], entry.get("machines")) for entry in record] == [(2, COUNTS), (3, None)]
    # v1.11+ deleted MachineSets aaaaa and bbbbb: revision 2's counts come from the record now
    rows = history.merged_history(written, [], machines=[])
    assert [(r["revision"], r["machines_source"], r["machines"]) for r in rows] == [
        (3, None, "not known"), (2, "record", "1 replaced, 2 updated in place"), (1, None, "not known")]
    # the newest entry is of the present template and has no counts yet: the next write reads them again
    assert history.counts_wanted(written)


def test_an_undo_keeps_the_counts_too_and_nothing_is_counted_without_the_machines():
    md, sets = _switched()
    plan = undo.plan_undo(md, objs.NOW, to_revision=1, recording=Recording(rollout_id="back"),
                          observed=Observed(machine_sets=sets, machines=MACHINES))
    record = json.loads(diffs.apply_merge_patch(md, plan["merge_patch"])["metadata"]["annotations"][KEY])
    assert [(entry["revision"], entry.get("machines")) for entry in record] == [(2, COUNTS), (3, None)]
    entries, _warnings = history.read_record(md)
    assert history.with_machine_counts(md, entries, sets, None) is entries
    assert history.with_machine_counts(md, entries, None, MACHINES) is entries


def test_counts_are_kept_once_unreadable_ones_are_not_known_and_only_mds_are_counted():
    md, sets = _switched()
    entries, _warnings = history.read_record(md)
    counted = history.with_machine_counts(md, entries, sets, MACHINES)
    kept = objs.annotate(md, KEY, history.serialize(counted))
    assert not history.counts_wanted(kept)
    assert history.with_machine_counts(kept, counted, sets, MACHINES[:1]) is counted  # never overwritten
    bad = objs.annotate(md, KEY, history.serialize([dict(counted[0], machines={"replaced": -1, "updated_in_place": 0})]))
    assert [r["machines"] for r in history.merged_history(bad, [])] == ["not known", "not known"]
    assert history.counts_wanted(bad)
    assert not history.counts_wanted(objs.kubeadm_control_plane())
    assert not history.counts_wanted(objs.machine_deployment())  # no record: nothing to keep counts in
