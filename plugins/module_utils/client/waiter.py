# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Wait for MD/KCP rollouts to complete with ONE watch stream (not a poll loop).

The stream starts at a known resourceVersion and covers every selected object of the kind in the
namespace; it is re-opened from the last seen resourceVersion when the server ends it, and after a
410 Gone (resourceVersion expired) the collection is listed again. Two limits end a wait with a
failure that says what is stuck:

- ``wait_timeout``: overall seconds;
- ``stall_timeout``: seconds without any change of replica counts or conditions (CAPI has no
  progress deadline of its own).

Each change of an object's state adds a timestamped line to ``progress`` (modules cannot stream
output, so the lines are returned in the result).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime
import time

from ansible_collections.capi.rollout.plugins.module_utils.client.errors import ApiError, TransportError
from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import conditions as conds
from ansible_collections.capi.rollout.plugins.module_utils.core import status as statuses
from ansible_collections.capi.rollout.plugins.module_utils.core import timeutil
from ansible_collections.capi.rollout.plugins.module_utils.core import view as views
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError, ref as make_ref

# Consecutive failures to (re)open the stream before giving up (each open already retries).
MAX_STREAM_FAILURES = 5


class WaitFailed(RolloutError):
    """A wait ended without every rollout complete; ``objects`` holds the last state seen."""

    def __init__(self, msg, ref=None, hint=None, reason=None, objects=None):
        super(WaitFailed, self).__init__(msg, ref=ref, hint=hint, reason=reason)
        self.objects = objects or []


def _utcnow():
    return datetime.datetime.now(datetime.timezone.utc)


def _name(obj):
    return (obj.get("metadata") or {}).get("name")


def _rv(obj):
    return (obj.get("metadata") or {}).get("resourceVersion")


def signature(obj, kind, version):
    """What counts as progress: generation seen, replica counters and conditions."""
    fields = apiversion.status_fields(kind, version)
    counters = tuple(apiversion.get_path(obj, path) for key, path in sorted(fields.items())
                     if path and key not in ("conditions", "v1beta1_conditions"))
    cond_list = conds.metav1_conditions(obj, kind, version) + conds.v1beta1_conditions(obj, kind, version)
    cond_sig = tuple(sorted((c["type"], c["status"], c["reason"], c["message"]) for c in cond_list))
    return (apiversion.get_path(obj, "status.observedGeneration"), apiversion.get_path(obj, "spec.replicas"),
            counters, cond_sig)


def progress_line(status):
    replicas = status.get("replicas") or {}
    counts = ", ".join(f"{key.replace('_', '-')} {replicas.get(key)}"
                       for key in ("desired", "current", "up_to_date", "ready", "available")
                       if replicas.get(key) is not None)
    return f"{status['message']}" + (f" [{counts}]" if counts else "")


class Waiter(object):
    """Waits for the rollouts of ``names`` (objects of ``kind`` in ``namespace``).

    MDs are decided with the namespace's MachineSets (core.status): ``machine_sets_lister`` lists
    them again whenever an object's counters look settled (about once per replaced Machine), so a
    finished-looking MD is never reported complete from counters alone. ``now`` is the API server's
    time: a trigger it has not reached yet is pending, and the wait wakes up when it is.
    """

    def __init__(self, api, kind, version, namespace, path, wait_timeout, stall_timeout, label_selector=None,
                 clock=time.monotonic, now=_utcnow, machines_lister=None, machine_sets_lister=None):
        self.api = api
        self.kind = kind
        self.version = version
        self.namespace = namespace
        self.path = path
        self.wait_timeout = wait_timeout
        self.stall_timeout = stall_timeout
        self.label_selector = label_selector
        self.clock = clock
        self.now = now
        self.machines_lister = machines_lister
        self.machine_sets_lister = machine_sets_lister
        self.machine_sets = None
        self.machine_set_lists = 0
        self.progress = []
        self.watches = 0
        self.relists = 0
        self._last_line = {}
        self._list_rv = None  # resourceVersion of the last MachineSet list
        self._listed_rvs = set()

    def _note(self, obj, status):
        line = progress_line(status)
        name = _name(obj)
        if self._last_line.get(name) != line:
            self._last_line[name] = line
            self.progress.append(f"{timeutil.format_time(self.now())} {line}")

    def _decide(self, obj):
        return statuses.rollout_status(obj, api_version=self.version, machine_sets=self.machine_sets, now=self.now())

    def _status(self, obj):
        """The object's status, decided with MachineSets listed after it was seen whenever they can
        decide it. A list whose resourceVersion is at least the object's reflects it already, so a
        burst of events is decided with one list (resourceVersions are etcd revisions on every
        kube-apiserver; where one is not a number, each new version of the object is listed again)."""
        status = self._decide(obj)
        if self.machine_sets_lister is None or self._listed_after(_rv(obj)) or not (
                status["done"] or status["waiting_for"] in ("new_machine_set", "machine_sets")
                or self._bug_13182_candidate(obj, status)):
            return status
        self.refresh_machine_sets(_rv(obj))
        return self._decide(obj)

    def _listed_after(self, rv):
        if self._list_rv is None or rv is None:
            return False
        if str(rv).isdigit() and str(self._list_rv).isdigit():
            return int(self._list_rv) >= int(rv)
        return rv in self._listed_rvs

    def _bug_13182_candidate(self, obj, status):
        """Counters that only upstream bug #13182 leaves so: every replica exists and is available, the
        new MachineSet holds them all (v1beta1 updatedReplicas), but fewer are up to date."""
        replicas = status.get("replicas") or {}
        desired = replicas.get("desired")
        legacy_updated = apiversion.get_path(obj, apiversion.status_fields(self.kind, self.version)["v1beta1_updated"])
        return desired is not None and replicas.get("current") == desired == replicas.get("available") == legacy_updated

    def refresh_machine_sets(self, seen_rv=None):
        """List the MachineSets again; ``seen_rv``: the object version that asked for it."""
        self.machine_set_lists += 1
        self.machine_sets, self._list_rv = self.machine_sets_lister()
        self._listed_rvs = {seen_rv} if seen_rv else set()

    def _wake_in(self, state, pending):
        """Seconds until the earliest pending trigger fires by the server's clock (None when none)."""
        now = self.now()
        soonest = None
        for name in pending:
            after = views.view(state[name], api_version=self.version)["rollout"]["after"]
            when = timeutil.parse_optional(after)
            if when is not None and when > now:
                wait = timeutil.seconds_between(now, when)
                soonest = wait if soonest is None else min(soonest, wait)
        return soonest

    def wait(self, objects, resource_version):
        """Block until every object's rollout is complete; returns the final objects (same order).

        ``objects``: the current state of the objects to wait for; ``resource_version``: where the
        watch starts (a list's resourceVersion or the newest write of this run).
        """
        order = [_name(obj) for obj in objects]
        state = {_name(obj): obj for obj in objects}
        sigs = {}
        pending = set()
        scheduled = set()

        def observe(name):
            """Decide one object; True when its signature changed (progress) or it waits for a trigger."""
            status = self._status(state[name])
            self._note(state[name], status)
            sig = signature(state[name], self.kind, self.version)
            changed = sig != sigs.get(name)
            sigs[name] = sig
            (pending.discard if status["done"] else pending.add)(name)
            (scheduled.add if status["waiting_for"] == "pending" else scheduled.discard)(name)
            return changed

        for name in order:
            observe(name)
        start = self.clock()
        last_change = start
        rv = resource_version
        failures = 0
        field_selector = f"metadata.name={order[0]}" if len(order) == 1 else None
        while pending:
            now = self.clock()
            if scheduled & pending:
                # A trigger that has not fired is not a stall: the quiet time counts from when it fires.
                last_change = now
            if now - start >= self.wait_timeout:
                raise self._failure(state, pending, "wait_timeout", now - start, now - last_change)
            if now - last_change >= self.stall_timeout:
                if self.machine_sets_lister is not None:
                    # A state such as upstream bug #13182 settles without an event of the MD: list the
                    # MachineSets once more and decide again before calling it a stall.
                    self.refresh_machine_sets()
                    for name in order:
                        observe(name)
                    if not pending:
                        break
                raise self._failure(state, pending, "stalled", now - start, now - last_change)
            budget = min(self.wait_timeout - (now - start), self.stall_timeout - (now - last_change))
            wake = self._wake_in(state, scheduled & pending)
            if wake is not None:
                budget = min(budget, wake + 1.0)
            try:
                self.watches += 1
                events = self.api.watch(self.path, rv, budget, label_selector=self.label_selector,
                                        field_selector=field_selector)
                failures = 0
                for event_type, obj in events:
                    rv = _rv(obj) or rv
                    name = _name(obj)
                    if event_type == "BOOKMARK" or name not in state:
                        continue
                    if event_type == "DELETED":
                        raise RolloutError("was deleted while waiting for its rollout",
                                           ref=make_ref(self.kind, self.namespace, name), reason="deleted",
                                           hint="check who deleted it (the Cluster being deleted?)")
                    state[name] = obj
                    if observe(name):
                        last_change = self.clock()
                    if not pending or self._expired(start, last_change):
                        break
                if wake is not None and scheduled & pending:
                    # The stream ended at (or after) a trigger time: decide again by the server's clock.
                    # every object is observed (no short-circuit): each keeps its own state
                    changed = [observe(name) for name in order]
                    if any(changed):
                        last_change = self.clock()
            except ApiError as err:
                if err.status != 410:
                    raise
                rv = self._relist(state)
                for name in order:
                    if observe(name):
                        last_change = self.clock()
            except TransportError:
                failures += 1
                if failures >= MAX_STREAM_FAILURES:
                    raise
                time.sleep(min(2 ** failures, 10))
        return [state[name] for name in order]

    def _expired(self, start, last_change):
        now = self.clock()
        return now - start >= self.wait_timeout or now - last_change >= self.stall_timeout

    def _relist(self, state):
        """After 410 Gone: list the collection again; returns the list's resourceVersion."""
        self.relists += 1
        field_selector = f"metadata.name={next(iter(state))}" if len(state) == 1 else None
        body = self.api.list(self.path, label_selector=self.label_selector, field_selector=field_selector)
        seen = set()
        for obj in body.get("items") or []:
            name = _name(obj)
            if name in state:
                obj.setdefault("kind", self.kind)
                obj.setdefault("apiVersion", apiversion.api_version_string(self.kind, self.version))
                state[name] = obj
                seen.add(name)
        for name in state:
            if name not in seen:
                raise RolloutError("was deleted while waiting for its rollout",
                                   ref=make_ref(self.kind, self.namespace, name), reason="deleted",
                                   hint="check who deleted it (the Cluster being deleted?)")
        return (body.get("metadata") or {}).get("resourceVersion")

    def _failure(self, state, pending, reason, waited, quiet):
        lines = []
        for name in sorted(pending):
            obj = state[name]
            status = self._status(obj)
            machines = None
            if self.machines_lister is not None:
                try:
                    machines = self.machines_lister(obj)
                except (ApiError, TransportError, RolloutError):
                    machines = None
            stuck = statuses.stuck_reasons(views.view(obj, api_version=self.version), machines=machines)
            detail = status["message"]
            if stuck:
                detail += " Stuck: " + "; ".join(stuck)
            lines.append(f"{make_ref(self.kind, self.namespace, name)}: {detail}")
        if reason == "stalled":
            what = (f"rollout stalled: no replica count or condition changed for {int(quiet)}s "
                    f"(stall_timeout={self.stall_timeout}s)")
            hint = ("look at the Machines and the infrastructure provider (a failing machine template?); "
                    "raise stall_timeout if the machines are just slow to provision")
        else:
            what = f"rollout not complete after {int(waited)}s (wait_timeout={self.wait_timeout}s)"
            hint = "raise wait_timeout, or check the progress lines for what is slow"
        refs = ", ".join(make_ref(self.kind, self.namespace, name) for name in sorted(pending))
        msg = f"{what}: " + " | ".join(lines) if lines else what
        err = WaitFailed(msg, ref=None, hint=hint, reason=reason, objects=[state[name] for name in state])
        err.pending = refs
        return err
