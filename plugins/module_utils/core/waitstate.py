# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Waiting for a group of rollouts, then a soak, as a state that survives between calls: the one
place that decides "done", "stalled", "timed out", "soak failed", "deleted" or "drift", and words it.

Every wait of the collection (capi_rollout_wait, and the ``wait`` of restart, undo and info) is fed by
client.waiter from watch events: each time an object changes it builds one *snapshot* per object
(``snapshot``: done or not, a one-line message and a signature of its counters and conditions) and
calls ``observe``. The state is plain JSON, so the action plugin can carry it from one module call to
the next and print the progress lines in between (a module cannot stream output).

Phases: ``rollout`` until every object is done, then ``soak`` for ``soak_seconds`` during which
every object must stay done (the health gate), then ``succeeded``. It ends ``failed`` with a
reason: ``wait_timeout`` (not done in time), ``stalled`` (no signature changed for
``stall_timeout`` seconds), ``soak_failed`` (an object stopped being healthy while soaking) or
``deleted``, ``drift`` (an object is not on the template it must be on) or ``template_missing`` (the
infrastructure template an object is on no longer exists: its MachineSet cannot create Machines from it).
Whether templates exist is read only for the observations that may end the wait (``deciding``). Times are epoch seconds
(the caller's clock), printed in UTC; trigger times are the API server's (``snapshot``'s ``now``).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime
import hashlib
import json
from typing import Any, Dict, List, Mapping, Optional, TypedDict, cast

from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import conditions as conds
from ansible_collections.capi.rollout.plugins.module_utils.core import drains
from ansible_collections.capi.rollout.plugins.module_utils.core import owners
from ansible_collections.capi.rollout.plugins.module_utils.core import paths
from ansible_collections.capi.rollout.plugins.module_utils.core import status as statuses
from ansible_collections.capi.rollout.plugins.module_utils.core import timeutil
from ansible_collections.capi.rollout.plugins.module_utils.core import topology as topologies
from ansible_collections.capi.rollout.plugins.module_utils.core import view as views

ROLLOUT = "rollout"
SOAK = "soak"
SUCCEEDED = "succeeded"
FAILED = "failed"

# what a wait does when CAPI deleted a Machine whose drain timed out (``note_machine``)
UNDRAINABLE_CHOICES = ("fail", "continue")

FINISHED = (SUCCEEDED, FAILED)

# the failure reasons a wait decides (their words: core.outcomes)
STALLED = "stalled"
WAIT_TIMEOUT = "wait_timeout"
SOAK_FAILED = "soak_failed"
DELETED = "deleted"
DRIFT = "drift"
TEMPLATE_MISSING = "template_missing"
DRAIN_TIMED_OUT = "drain_timed_out"


class WaitState(TypedDict):
    """The state of a wait (``new_state``), plain JSON carried between calls: times in epoch seconds, None until
    reached; ``signatures`` / ``lines`` / ``done_at`` by ref; ``pending``: refs whose trigger is still ahead."""

    refs: List[str]
    started: float
    last_change: float
    phase: str
    reason: Optional[str]
    message: Optional[str]
    signatures: Dict[str, Optional[str]]
    lines: Dict[str, str]
    done_at: Dict[str, Optional[float]]
    pending: List[str]
    rollout_finished: Optional[float]
    soak_until: Optional[float]
    soak_finished: Optional[float]
    ended: Optional[float]
    failed_refs: List[str]
    # the drains followed (note_machine): Machines seen draining ("namespace/name" -> {ref, node}), and those whose
    # drain timed out ({ref, machine, node, at})
    draining: Dict[str, Dict[str, Any]]
    drain_timeouts: List[Dict[str, Any]]


class _SnapshotRequired(TypedDict):
    done: bool
    message: str


class Snapshot(_SnapshotRequired, total=False):
    """What ``observe`` needs of one object (``snapshot``); ``observe`` reads only ``done`` and ``message`` of
    every snapshot, the rest where given."""

    line: str
    signature: str
    pending: bool
    drift: Optional[str]
    warnings: List[str]
    waiting_for: Optional[str]
    template: Dict[str, Any]
    replicas: Dict[str, Any]
    template_missing: Optional[str]


def signature(obj, kind, version):
    """What counts as progress: generation seen, replica counters and conditions."""
    fields = apiversion.status_fields(kind, version)
    counters = tuple(paths.get_path(obj, path) for key, path in sorted(fields.items())
                     if path and key not in ("conditions", "v1beta1_conditions"))
    cond_list = conds.metav1_conditions(obj, kind, version) + conds.v1beta1_conditions(obj, kind, version)
    cond_sig = tuple(sorted((c["type"], c["status"], c["reason"], c["message"]) for c in cond_list))
    return (paths.get_path(obj, "status.observedGeneration"), paths.get_path(obj, "spec.replicas"),
            counters, cond_sig)


def _digest(value):
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode("utf-8")).hexdigest()[:16]


def progress_line(status):
    """A status message with its replica counts, as one progress line."""
    replicas = status.get("replicas") or {}
    counts = ", ".join(f"{key.replace('_', '-')} {replicas.get(key)}"
                       for key in ("desired", "current", "up_to_date", "ready", "available")
                       if replicas.get(key) is not None)
    return f"{status['message']}" + (f" [{counts}]" if counts else "")


def template_of(obj, version):
    """The object's template as read: {infrastructure_ref: {kind, name} or None, version}."""
    found = views.view(obj, api_version=version).get("template") or {}
    infra_ref = found.get("infrastructure_ref") or {}
    return {"infrastructure_ref": {"kind": infra_ref.get("kind"), "name": infra_ref.get("name")} if infra_ref else None,
            "version": found.get("version")}


def drift(ref, template, expected, changed_by=None):
    """Why the object is not on the infrastructure template ``expected`` ({kind optional, name}), or None;
    ``changed_by``: who wrote the reference last (core.owners.last_change), named when known."""
    current = template["infrastructure_ref"] or {}
    if not expected or (current.get("name") == expected.get("name")
                        and expected.get("kind") in (None, current.get("kind"))):
        return None
    who = f"{changed_by['manager']} at {changed_by['time']}" if changed_by else "someone else"
    return (f"{ref} is on {current.get('kind')} {current.get('name')}, not on the target {expected.get('name')}: "
            f"its template was changed by {who} during the rollout")


def _changed_by(obj, kind, version, expected):
    """Who else last wrote the template reference's name (managedFields), when a template is expected."""
    path = apiversion.spec_path(kind, version, "infrastructure_ref")
    return owners.last_change(obj, paths.split_path(path) + ("name",)) if expected and path else None


def _waits_for_topology(snap: Snapshot, message: str) -> None:
    snap["done"] = False
    snap["waiting_for"] = "topology"
    snap["message"] = snap["line"] = message


def hold_topology(snap: Snapshot, obj: Dict[str, Any], kind: str, ref: str, hold: Mapping[str, Any],
                  cluster: Optional[Dict[str, Any]] = None, template: Optional[Dict[str, Any]] = None, changed_by: Optional[Dict[str, Any]] = None) -> Snapshot:
    """Hold an object a Cluster topology manages to its change (``hold``: {overrides: {variable: value} its topology
    entry must keep, class: the worker class it must keep (path (b), optional), cluster_class: the ClusterClass its
    Cluster must stay on (path (c), optional), template: the spec.template.spec
    values its current template must carry, not_on: a template name it must have left - an undo's}), changing ``snap`` in
    place: its template names are generated, so not a name but the values decide (docs/clusterclass.md). Not done
    while its current ``template`` (as read; None: not read now) lacks them - the topology controller has not
    rotated it yet; drift when ``cluster`` (None: not read now) no longer holds the overrides, naming who last wrote
    the entry (``changed_by``, core.owners.last_change)."""
    # the name the object refers to, not the template read: the topology deletes a template it left, so the one being
    # reverted can be gone while the object, not reconciled yet, still names it
    on = (views.infrastructure_ref_of(obj, kind) or {}).get("name")
    if on is not None and on == hold.get("not_on") and snap["done"]:
        _waits_for_topology(snap, f"{ref} waits for the topology controller to move it off its template {on}, the "
                                  "one of the change being reverted")
    if template is not None:
        name = paths.get_path(template, "metadata.name")
        lacking = topologies.template_lacks(template, hold.get("template"))
        if lacking and snap["done"]:
            shown = ", ".join(f"{pointer.rpartition('/')[2]}={wanted} (has {found})" for pointer, wanted, found in lacking)
            _waits_for_topology(snap, f"{ref} waits for the topology controller to generate its template with {shown}: "
                                      f"its template {name} is from before the change")
    if cluster is not None:
        lacking = topologies.overrides_lacking(cluster, obj, kind, ref, hold.get("overrides"), hold.get("class"),
                                               hold.get("cluster_class"))
        if lacking:
            who = f"{changed_by['manager']} at {changed_by['time']}" if changed_by else "someone else"
            shown = ", ".join(f"{variable}={wanted} (now {found})" for variable, wanted, found in lacking)
            snap["drift"] = (f"{ref}: {topologies.cluster_ref(cluster)} no longer holds its topology change {shown}: "
                             f"the Cluster topology was changed by {who} during the rollout")
    return snap


def template_missing(ref: str, infra_ref: Mapping[str, Any], namespace: str) -> str:
    """Why ``ref`` cannot go on: its infrastructure template ``infra_ref`` ({kind, name}) is gone from ``namespace``."""
    return (f"{ref} is on {infra_ref.get('kind')} {namespace}/{infra_ref.get('name')}, which no longer exists: "
            "its MachineSet cannot create Machines from it (replacements and scale-ups fail)")


def deciding(state: WaitState, now: float, snapshots: Mapping[str, Snapshot], wait_timeout: float,
             stall_timeout: float) -> bool:
    """Whether the observation at epoch ``now`` of ``snapshots`` may end the wait or start its soak (the first
    observation, every object done, the end of the soak, a timeout or a stall due): the moments the wait
    reads whether the templates still exist, so that it never ends well on a template that is gone."""
    if state["phase"] in FINISHED:
        return False
    if not state["lines"]:  # nothing observed yet
        return True
    if state["phase"] == SOAK:
        return now >= cast(float, state["soak_until"])
    return (all(snap["done"] for snap in snapshots.values()) or now - state["started"] >= wait_timeout
            or now - state["last_change"] >= stall_timeout)


def snapshot(obj: Dict[str, Any], version: Optional[str], machine_sets: Optional[List[Dict[str, Any]]],
             now: datetime.datetime, expected: Optional[Dict[str, Any]] = None) -> Snapshot:
    """What ``observe`` needs of one object: its rollout status (core.status, decided with the
    namespace's MachineSets and the API server's time ``now``), progress line, signature, template, drift."""
    status = statuses.rollout_status(obj, api_version=version, machine_sets=machine_sets, now=now)
    kind = apiversion.rollout_kind(obj.get("kind"))
    template = template_of(obj, version)
    return {"done": bool(status["done"]), "message": status["message"], "line": progress_line(status),
            "warnings": status["warnings"], "waiting_for": status["waiting_for"],
            "pending": status["waiting_for"] == "pending", "template": template,
            "drift": drift(status["ref"], template, expected, _changed_by(obj, kind, version, expected)),
            "signature": _digest(signature(obj, kind, version)), "replicas": status.get("replicas") or {}}


def failure_message(state, stuck):
    """The failure of a finished ``state`` in one message: what happened, what is stuck per object
    (``stuck``: {ref: [lines]}), and the next step (without the hint: core.outcomes.hint)."""
    details = [f"{ref}: " + "; ".join(stuck[ref]) for ref in state["failed_refs"] if stuck.get(ref)]
    return state["message"].rstrip(". ") + (". Stuck: " + " | ".join(details) if details else "")


def stamp(epoch):
    """RFC 3339 (UTC, seconds) of epoch seconds; None stays None."""
    if epoch is None:
        return None
    return timeutil.format_time(datetime.datetime.fromtimestamp(float(epoch), tz=datetime.timezone.utc))


def new_state(refs: List[str], now: float) -> WaitState:
    """The state before the first observation of ``refs`` (``kind/namespace/name`` strings) at epoch ``now``."""
    return {"refs": list(refs), "started": now, "last_change": now, "phase": ROLLOUT, "reason": None, "message": None,
            "signatures": {}, "lines": {}, "done_at": {}, "pending": [], "rollout_finished": None, "soak_until": None,
            "soak_finished": None, "ended": None, "failed_refs": [], "draining": {}, "drain_timeouts": []}


def _emit(lines, now, text):
    lines.append(f"{stamp(now)} {text}")


def _fail(state, now, reason, message, refs, lines):
    state.update(phase=FAILED, reason=reason, message=message, ended=now, failed_refs=sorted(refs))
    _emit(lines, now, message)


def _drain_timed_out(state, now, entry, undrainable, lines):
    state.setdefault("drain_timeouts", []).append(entry)
    node = f" (Node {entry['node']})" if entry.get("node") else ""
    message = (f"{entry['ref']}: the drain of Machine {entry['machine']}{node} timed out: CAPI deleted the Machine "
               "without evicting its remaining Pods (node drain timeout)")
    if undrainable == "fail" and state["phase"] not in FINISHED:
        _fail(state, now, DRAIN_TIMED_OUT, message, [entry["ref"]], lines)
    else:
        _emit(lines, now, message + ("; the wave goes on (undrainable=continue)" if undrainable == "continue" else ""))


def note_machine(state: WaitState, now: float, owner_ref: str, machine: Dict[str, Any], gone: bool = False,
                 undrainable: str = "continue") -> List[str]:
    """Follow the drain of one Machine view of ``owner_ref`` (its MachineDeployment) at epoch ``now``
    (core.drains.drain_phase): a drain seen going on (``state["draining"]``) that ends with the Machine ``gone`` or
    past the drain without success timed out - recorded in ``state["drain_timeouts"]`` ({ref, machine, node, at}),
    never silently: a progress line, or with ``undrainable`` "fail" the wait fails (DRAIN_TIMED_OUT).
    Returns the new progress lines."""
    lines: List[str] = []
    key = f"{machine.get('namespace')}/{machine.get('name')}"
    draining = state.setdefault("draining", {})
    phase = None if gone else drains.drain_phase(machine)
    if phase == drains.DRAINING:
        draining[key] = {"ref": owner_ref, "node": machine.get("node")}
        return lines
    seen = draining.pop(key, None)
    if phase == drains.TIMED_OUT or (gone and seen is not None):
        recorded = {(e["ref"], e["machine"]) for e in state.setdefault("drain_timeouts", [])}
        if (owner_ref, machine.get("name")) not in recorded:
            _drain_timed_out(state, now, {"ref": owner_ref, "machine": machine.get("name"),
                                          "node": machine.get("node") or (seen or {}).get("node"), "at": stamp(now)},
                             undrainable, lines)
    return lines


def observe(state: WaitState, now: float, snapshots: Mapping[str, Snapshot], wait_timeout: float,
            stall_timeout: float, soak_seconds: float = 0) -> List[str]:
    """Feed one round of snapshots ({ref: {done, message, signature, pending, drift, template_missing}}; a missing ref
    was deleted) into ``state`` (changed in place) at epoch ``now``. Returns the new progress lines (timestamped).

    Nothing happens once the state is finished.
    """
    lines: List[str] = []
    if state["phase"] in FINISHED:
        return lines
    missing = [ref for ref in state["refs"] if ref not in snapshots]
    if missing:
        _fail(state, now, DELETED, f"{', '.join(missing)} deleted while waiting for its rollout", missing, lines)
        return lines
    drifted = [ref for ref in state["refs"] if snapshots[ref].get("drift")]
    if drifted:
        _fail(state, now, DRIFT, "; ".join(str(snapshots[ref]["drift"]) for ref in drifted), drifted, lines)
        return lines
    gone = [ref for ref in state["refs"] if snapshots[ref].get("template_missing")]
    if gone:
        _fail(state, now, TEMPLATE_MISSING, "; ".join(str(snapshots[ref].get("template_missing")) for ref in gone), gone,
              lines)
        return lines
    for ref in state["refs"]:
        snap = snapshots[ref]
        signature = snap.get("signature")
        if state["signatures"].get(ref) != signature:
            if ref in state["signatures"]:
                state["last_change"] = now
            state["signatures"][ref] = signature
        line = snap.get("line") or snap["message"]
        if state["lines"].get(ref) != line:
            state["lines"][ref] = line
            _emit(lines, now, line)
        if snap["done"] and state["done_at"].get(ref) is None:
            state["done_at"][ref] = now
        if snap.get("pending") or ref in state.setdefault("pending", []):
            # A scheduled trigger the server's clock has not reached is not a stall, and its firing is
            # a change: the quiet time counts from then.
            state["last_change"] = now
    state["pending"] = [ref for ref in state["refs"] if snapshots[ref].get("pending")]
    not_done = [ref for ref in state["refs"] if not snapshots[ref]["done"]]

    if state["phase"] == SOAK:
        if not_done:
            detail = "; ".join(snapshots[ref]["message"] for ref in not_done)
            soaked = int(now - cast(float, state["rollout_finished"]))  # set when the soak began
            _fail(state, now, SOAK_FAILED, f"health gate failed after {soaked}s of soak: {detail}", not_done, lines)
        elif now >= cast(float, state["soak_until"]):
            state.update({"phase": SUCCEEDED, "soak_finished": now, "ended": now})
            _emit(lines, now, f"soak passed: {len(state['refs'])} object(s) stayed healthy for {int(soak_seconds)}s")
        return lines

    if not not_done:
        state["rollout_finished"] = now
        if soak_seconds and soak_seconds > 0:
            state.update({"phase": SOAK, "soak_until": now + soak_seconds})
            _emit(lines, now, f"every rollout complete; soaking {int(soak_seconds)}s (until {stamp(now + soak_seconds)}): "
                              "each object must stay healthy")
        else:
            state.update({"phase": SUCCEEDED, "ended": now})
        return lines
    waited = now - state["started"]
    quiet = now - state["last_change"]
    if waited >= wait_timeout:
        detail = "; ".join(snapshots[ref]["message"] for ref in not_done)
        _fail(state, now, WAIT_TIMEOUT, f"rollout not complete after {int(waited)}s (wait_timeout={int(wait_timeout)}s): "
                                        f"{detail}", not_done, lines)
    elif quiet >= stall_timeout:
        detail = "; ".join(snapshots[ref]["message"] for ref in not_done)
        _fail(state, now, STALLED, f"rollout stalled: no replica count or condition changed for {int(quiet)}s "
                                   f"(stall_timeout={int(stall_timeout)}s): {detail}", not_done, lines)
    return lines


def next_check(state: WaitState, now: float, wait_timeout: float, stall_timeout: float, poll_interval: float) -> float:
    """Seconds to sleep before the next observation: the poll interval, cut so that no deadline
    (wait_timeout, stall_timeout, the end of the soak) is overslept by more than a moment."""
    deadlines = [state["started"] + wait_timeout, state["last_change"] + stall_timeout]
    if state["phase"] == SOAK:
        deadlines = [cast(float, state["soak_until"])]
    until = min(deadlines) - now
    return max(0.0, min(float(poll_interval), until))


def summary(state: WaitState) -> Dict[str, Any]:
    """Times and results of the state for the module result (RFC 3339 strings)."""
    return {
        "phase": state["phase"],
        "reason": state["reason"],
        "started": stamp(state["started"]),
        "rollout_finished": stamp(state["rollout_finished"]),
        "soak_finished": stamp(state["soak_finished"]),
        "ended": stamp(state["ended"]),
        "done_at": {ref: stamp(value) for ref, value in state["done_at"].items() if value is not None},
        "failed_refs": list(state["failed_refs"]),
    }
