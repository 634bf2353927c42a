"""The history of every change (issue 28 §2) on the modules fleets (v1.10, v1.14): kubectl edits of in-place fields
and a scale appear in capi_rollout_info's history with their actor, time and cause, are stored with the next change
this collection records and outlive CAPI's MachineSet clean-up; an undo names what it does not restore. Its own
workload cluster in a namespace of its own (history_support.py)."""

from history_support import outside_changes_are_kept


def test_outside_changes_appear_in_history_and_are_kept(capi):
    outside_changes_are_kept(capi, "team-hist")
