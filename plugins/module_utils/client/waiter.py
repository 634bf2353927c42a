# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one waiting engine: watch events in, core.waitstate decisions out.

Every wait of the collection runs here: capi_rollout_wait (several kinds and namespaces, soak,
drift, in slices for the action plugin) and the ``wait`` of restart, undo and info. The objects are
grouped by kind and namespace (a *group*: one list path); each group has ONE watch stream, opened at
a known resourceVersion, re-opened from the last one seen when the server ends it, and listed again
after 410 Gone. A single group is watched in the calling thread; several are watched in one thread
each, feeding one queue. Each event updates the object and is fed to core.waitstate, which alone
decides done / stalled / timed out / soak failed / deleted / drift and words the progress lines and
the failure. ``poll_interval`` is only the pause before a stream that could not be opened is tried
again.

A MachineDeployment is decided with its namespace's MachineSets (core.status): they are listed again
whenever its counters look settled or it waits for a MachineSet (about once per replaced Machine), and
once more before a quiet wait is called a stall (upstream bug #13182 settles without an event of the
MachineDeployment), so a finished-looking MD is never reported complete from counters alone.

With a ``templates_lister``, the observations that may end the wait (core.waitstate.deciding: the first one, every
rollout done, the end of the soak, a stall or timeout due) first read whether the infrastructure templates the
objects are on still exist (one LIST per template kind and namespace): a wait never ends well on a template that
is gone, and a rollout stuck on one is named for it.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import contextlib
import queue
import threading
import time

from ansible_collections.capi.rollout.plugins.module_utils.client import reading
from ansible_collections.capi.rollout.plugins.module_utils.client import templates
from ansible_collections.capi.rollout.plugins.module_utils.client.errors import ApiError, TransportError
from ansible_collections.capi.rollout.plugins.module_utils.client.requests import DEADLINE_GRACE_SECONDS
from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import owners
from ansible_collections.capi.rollout.plugins.module_utils.core import labels_annotations as keys
from ansible_collections.capi.rollout.plugins.module_utils.core import outcomes
from ansible_collections.capi.rollout.plugins.module_utils.core import paths
from ansible_collections.capi.rollout.plugins.module_utils.core import status as statuses
from ansible_collections.capi.rollout.plugins.module_utils.core import timeutil
from ansible_collections.capi.rollout.plugins.module_utils.core import topology as topologies
from ansible_collections.capi.rollout.plugins.module_utils.core import view as views
from ansible_collections.capi.rollout.plugins.module_utils.core import waitstate as ws
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError, ref as make_ref

# The longest single watch request (the server ends it; it is re-opened from the last resourceVersion).
MAX_STREAM_SECONDS = 300
# Refusals (401/403) in a row of a watch that was allowed before, taken for an API server still starting up.
TRANSIENT_DENIALS = 5
# Pseudo event of a stream: the group was listed again after 410 Gone (the object is the list body).
RELISTED = "RELISTED"


class WaitFailed(RolloutError):
    """A wait ended without every rollout complete; ``objects`` holds the last state seen."""

    def __init__(self, msg, ref=None, hint=None, reason=None, objects=None):
        super(WaitFailed, self).__init__(msg, ref=ref, hint=hint, reason=reason)
        self.objects = objects or []


def _name(obj):
    return (obj.get("metadata") or {}).get("name")


def _rv(obj):
    return (obj.get("metadata") or {}).get("resourceVersion")


def _newer_or_equal(listed, seen):
    """Whether a list at resourceVersion ``listed`` reflects an object seen at ``seen`` (resourceVersions are
    etcd revisions on every kube-apiserver; where one is not a number, nothing is assumed)."""
    return bool(listed and seen and str(listed).isdigit() and str(seen).isdigit() and int(listed) >= int(seen))


class Group(object):
    """Objects of one kind in one namespace, watched with one stream from ``resource_version``.

    ``names`` are the objects waited for (default: those of ``objects``); one that is not among
    ``objects`` is gone (core.waitstate fails the wait with ``deleted``)."""

    def __init__(self, kind, version, namespace, path, objects, resource_version, label_selector=None, names=None):
        self.kind = kind
        self.version = version
        self.namespace = namespace
        self.path = path
        self.names = list(names) if names is not None else [_name(obj) for obj in objects]
        self.objects = {_name(obj): obj for obj in objects}
        self.resource_version = resource_version
        self.label_selector = label_selector
        self.field_selector = f"metadata.name={self.names[0]}" if len(self.names) == 1 else None

    @classmethod
    def of(cls, selected, objects=None, resource_version=None, names=None):
        """The group of a client.reading selection (its objects as listed, or as written since)."""
        return cls(selected.kind, selected.version, selected.namespace, selected.path,
                   selected.objects if objects is None else objects,
                   resource_version or selected.list_resource_version, selected.sel["label_selector"], names=names)

    def ref(self, name):
        return make_ref(self.kind, self.namespace, name)

    def apply(self, event_type, obj):
        """Take one event; returns False for objects of the collection that are not waited for."""
        if event_type == RELISTED:
            listed = {_name(item): item for item in obj.get("items") or []}
            for name in self.names:
                if name in listed:
                    listed[name].setdefault("kind", self.kind)
                    listed[name].setdefault("apiVersion", apiversion.api_version_string(self.kind, self.version))
                    self.objects[name] = listed[name]
                else:
                    self.objects.pop(name, None)
            return True
        name = _name(obj)
        if name not in self.names or event_type == "BOOKMARK":
            return False
        if event_type == "DELETED":
            self.objects.pop(name, None)
        else:
            self.objects[name] = obj
        return True


class Stream(object):
    """The watch of one group: ``events(seconds)`` opens one request of at most ``seconds``."""

    def __init__(self, api, group, sleep=time.sleep):
        self.api = api
        self.group = group
        self.rv = group.resource_version
        self.sleep = sleep
        self.failures = 0
        self.opened = 0
        self.authorized = False  # a watch of this group was allowed once

    def events(self, seconds, retry_pause):
        """(event_type, object) of one watch request; 410 Gone yields one RELISTED event. A broken
        connection ends the request quietly after ``retry_pause`` (the caller opens the next one)."""
        group = self.group
        try:
            self.opened += 1
            stream = self.api.watch(group.path, self.rv, min(max(seconds, 1), MAX_STREAM_SECONDS),
                                    label_selector=group.label_selector, field_selector=group.field_selector)
            self.authorized = True
            for event_type, obj in stream:
                self.failures = 0
                self.rv = _rv(obj) or self.rv
                yield event_type, obj
        except ApiError as err:
            if err.status in (401, 403) and self.authorized and self.failures < TRANSIENT_DENIALS:
                # A restarted API server refuses for a moment until its authorizer has synced: the same
                # credentials were allowed to watch this a moment ago.
                self.failures += 1
                self.sleep(min(retry_pause * self.failures, max(seconds, 1)))
                return
            if err.status != 410:
                raise
            body = self.api.list(group.path, label_selector=group.label_selector, field_selector=group.field_selector)
            self.rv = (body.get("metadata") or {}).get("resourceVersion")
            yield RELISTED, body
        except TransportError:
            # Reads are retried (client.requests); a stream that still cannot be opened is tried again
            # for as long as the wait may last.
            self.failures += 1
            self.sleep(min(retry_pause * self.failures, max(seconds, 1)))


# How often the events of several streams are looked for while none is there (Feed._next)
QUEUE_POLL_SECONDS = 0.05
# A call of capi_rollout_wait (Waiter.run with call_seconds) that has new progress lines goes on for at most this long
# gathering the lines that follow: a busy rollout then costs one module start (a process, a connection, the lists)
# per few seconds instead of one per change, and its lines still reach the job output within seconds.
PROGRESS_GATHER_SECONDS = 5.0


class Feed(object):
    """The events of every group's stream, one at a time: in the calling thread for one group, from
    one thread per stream for several (so that no stream waits for another)."""

    def __init__(self, streams, retry_pause):
        self.streams = streams
        self.retry_pause = retry_pause
        self._queue = None
        self._stop = threading.Event()
        self._threads = []

    def events(self, seconds):
        """(group, event_type, object) for at most ``seconds`` (a stream's end counts as the end)."""
        if len(self.streams) == 1:
            stream = self.streams[0]
            for event_type, obj in stream.events(seconds, self.retry_pause):
                yield stream.group, event_type, obj
            return
        if self._queue is None:
            self._start()
        deadline = time.monotonic() + max(seconds, 0)
        while True:
            item = self._next(deadline)
            if item is None:
                return
            if isinstance(item, Exception):
                raise item
            yield item
            if time.monotonic() >= deadline:
                return

    def _next(self, deadline):
        """The next item of the queue, or None once ``deadline`` (monotonic) passed. Polled with short sleeps rather than
        a timed wait on the queue: a timed lock wait is not moved by a faked clock (libfaketime, the skewed-clock tests)
        and then lasts the whole skew, while a sleep is."""
        while True:
            try:
                return self._queue.get_nowait()
            except queue.Empty:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                time.sleep(min(left, QUEUE_POLL_SECONDS))

    def _start(self):
        self._queue = queue.Queue()
        for stream in self.streams:
            thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
            thread.start()
            self._threads.append(thread)

    def _pump(self, stream):
        try:
            while not self._stop.is_set():
                for event_type, obj in stream.events(MAX_STREAM_SECONDS, self.retry_pause):
                    self._queue.put((stream.group, event_type, obj))
                    if self._stop.is_set():
                        return
        except (ApiError, TransportError, RolloutError) as err:
            self._queue.put(err)

    def close(self):
        self._stop.set()


class Waiter(object):
    """Waits for the rollouts of ``groups`` (then soaks), deciding with core.waitstate.

    ``machine_sets_lister(namespace)`` returns (MachineSets, list resourceVersion);
    ``machines_lister(group, obj)`` the Machine views of an object (for what is stuck); ``templates_lister(required)``
    which of the infrastructure templates ``required`` ([{api_group, kind, name, namespace}]) exist, as
    {(namespace, kind, name)}; ``expected`` {ref: {kind, name}} the infrastructure templates objects must stay on;
    ``holds`` {ref: {overrides, template}} the topology changes objects a Cluster topology manages must stay on
    (core.waitstate.hold_topology), read with ``topology_reads`` (TopologyReads);
    ``drain_groups`` the Machines of the MachineDeployments waited for (one Group per namespace, watched alongside):
    their drains are followed with core.waitstate.note_machine, ``undrainable`` saying what a timed-out one does;
    ``state`` a waitstate
    carried over from an earlier call. ``clock`` is the caller's (epoch seconds: timeouts, soak);
    ``now`` the API server's (datetime: triggers).
    """

    def __init__(self, api, groups, wait_timeout, stall_timeout, soak_seconds=0, poll_interval=10,
                 machine_sets_lister=None, machines_lister=None, expected=None, state=None,
                 clock=time.time, now=None, sleep=time.sleep, templates_lister=None, holds=None, topology_reads=None,
                 drain_groups=None, undrainable="continue"):
        self.api = api
        self.groups = groups
        self.wait_timeout = wait_timeout
        self.stall_timeout = stall_timeout
        self.soak_seconds = soak_seconds
        self.machine_sets_lister = machine_sets_lister
        self.machines_lister = machines_lister
        self.templates_lister = templates_lister
        self.expected = expected or {}
        self.holds = holds or {}
        self.topology_reads = topology_reads
        self.clock = clock
        self.now = now or api.server_now
        self.refs = [group.ref(name) for group in groups for name in group.names]
        self.state = state or ws.new_state(self.refs, clock())
        self.drain_groups = list(drain_groups or [])
        self.undrainable = undrainable
        self.streams = [Stream(api, group, sleep=sleep) for group in groups + self.drain_groups]
        self.feed = Feed(self.streams, max(poll_interval, 1))
        self.progress = []
        self.snapshots = {}
        self.machine_sets = {}  # namespace -> [MachineSet]
        self.machine_set_lists = 0
        self._listed_rv = {}  # namespace -> resourceVersion of its last MachineSet list
        self.stuck = {}  # ref -> {lines, machines} of the objects a failed wait names
        self._held_templates = {}  # (namespace, kind, name) -> template, of the objects of ``holds``
        for group in self.drain_groups:
            self._note_listed(group, list(group.objects.values()))

    @property
    def finished(self):
        return self.state["phase"] in ws.FINISHED

    @property
    def watches(self):
        return sum(stream.opened for stream in self.streams)

    # ----- drains -----
    def _note(self, group, obj, gone=False):
        view = views.machine_view(obj, api_version=group.version)
        if not view.get("deployment_name"):
            return
        owner_ref = make_ref(apiversion.MACHINE_DEPLOYMENT, group.namespace, view["deployment_name"])
        self.progress.extend(ws.note_machine(self.state, self.clock(), owner_ref, view, gone=gone,
                                             undrainable=self.undrainable))

    def _note_listed(self, group, items):
        """The Machines of a list: each one noted, and a drain followed before that is not among them is gone."""
        listed = {_name(item) for item in items}
        for item in items:
            self._note(group, item)
        for key, entry in sorted((self.state.get("draining") or {}).items()):
            namespace, _sep, name = key.partition("/")
            if namespace == group.namespace and name not in listed:
                self._note(group, {"metadata": {"name": name, "namespace": namespace, "labels": {
                    keys.DEPLOYMENT_NAME_LABEL: entry["ref"].rpartition("/")[2]}}}, gone=True)

    def _note_drain_event(self, group, event_type, obj):
        if event_type == RELISTED:
            self._note_listed(group, obj.get("items") or [])
        elif event_type in ("ADDED", "MODIFIED", "DELETED"):
            self._note(group, obj, gone=event_type == "DELETED")

    # ----- deciding -----
    def _machine_sets_for(self, group, obj, status):
        """Whether the namespace's MachineSets must be listed (again) to decide ``obj``."""
        if self.machine_sets_lister is None or group.kind != apiversion.MACHINE_DEPLOYMENT:
            return False
        if group.namespace in self._listed_rv and (
                _newer_or_equal(self._listed_rv[group.namespace], _rv(obj)) or self._listed_rv[group.namespace] == _rv(obj)):
            return False
        return bool(status["done"] or status["waiting_for"] in ("new_machine_set", "machine_sets")
                    or self._bug_13182_candidate(group, obj, status))

    @staticmethod
    def _bug_13182_candidate(group, obj, status):
        """Counters that only upstream bug #13182 leaves so: every replica exists and is available, the
        new MachineSet holds them all (v1beta1 updatedReplicas), but fewer are up to date."""
        replicas = status.get("replicas") or {}
        desired = replicas.get("desired")
        legacy_updated = paths.get_path(obj, apiversion.status_fields(group.kind, group.version)["v1beta1_updated"])
        return desired is not None and replicas.get("current") == desired == replicas.get("available") == legacy_updated

    def refresh_machine_sets(self, namespace, seen_rv=None):
        self.machine_set_lists += 1
        items, list_rv = self.machine_sets_lister(namespace)
        self.machine_sets[namespace] = items
        # A list whose resourceVersion is not a number reflects exactly the object version that asked for it.
        self._listed_rv[namespace] = list_rv if str(list_rv or "").isdigit() else seen_rv

    def _snapshot(self, group, name, server_now):
        obj = group.objects[name]
        ref = group.ref(name)
        snap = ws.snapshot(obj, group.version, self.machine_sets.get(group.namespace), server_now, self.expected.get(ref))
        if self._machine_sets_for(group, obj, snap):
            self.refresh_machine_sets(group.namespace, _rv(obj))
            snap = ws.snapshot(obj, group.version, self.machine_sets.get(group.namespace), server_now,
                               self.expected.get(ref))
        return snap

    def observe(self):
        """Decide every object now; returns the new progress lines."""
        now = self.clock()
        if (self.state["phase"] == ws.ROLLOUT and self.machine_sets_lister is not None
                and now - self.state["last_change"] >= self.stall_timeout):
            # About to call it a stall (this observation decides it): a state such as #13182 settles
            # without an event of the MD, so the MachineSets are listed once more first.
            for namespace in sorted({g.namespace for g in self.groups if g.kind == apiversion.MACHINE_DEPLOYMENT}):
                self.refresh_machine_sets(namespace)
        server_now = self.now()
        self.snapshots = {group.ref(name): self._snapshot(group, name, server_now)
                          for group in self.groups for name in group.names if name in group.objects}
        deciding = None
        if self.holds:
            deciding = self._hold_topology(now)
        if self.templates_lister is not None and (deciding if deciding is not None else ws.deciding(
                self.state, now, self.snapshots, self.wait_timeout, self.stall_timeout)):
            self._note_missing_templates()
        lines = ws.observe(self.state, now, self.snapshots, self.wait_timeout, self.stall_timeout, self.soak_seconds)
        self.progress.extend(lines)
        return lines

    def _hold_topology(self, now):
        """Hold the objects of ``holds`` to their topology change (core.waitstate.hold_topology): the template each is
        on is read once per name (a generated template does not change, the topology makes a new one); their Clusters
        when a new template showed up (the topology rotated: for the change, or back) and when this observation may
        end the wait. Returns whether it may (core.waitstate.deciding, after the templates' values were held)."""
        rotated = False
        held = []
        for ref, hold in sorted(self.holds.items()):
            if ref not in self.snapshots:
                continue
            group, name = self.locate(ref)
            obj = group.objects[name]
            raw = views.infrastructure_ref_of(obj, group.kind, group.version) or {}
            key = (group.namespace, raw.get("kind"), raw.get("name"))
            if key not in self._held_templates:
                self._held_templates[key] = self.topology_reads.template(group.namespace, raw) or {}
                rotated = True
            ws.hold_topology(self.snapshots[ref], obj, group.kind, ref, hold, template=self._held_templates[key])
            held.append((group, obj, ref, hold))
        deciding = ws.deciding(self.state, now, self.snapshots, self.wait_timeout, self.stall_timeout)
        if held and (rotated or deciding):
            for namespace in sorted({group.namespace for group, _obj, _ref, _hold in held}):
                clusters = self.topology_reads.clusters(namespace, [obj for group, obj, _r, _h in held
                                                                    if group.namespace == namespace])
                for group, obj, ref, hold in held:
                    cluster = clusters.get(views.cluster_name_of(obj)) if group.namespace == namespace else None
                    if cluster is not None:
                        who = owners.last_change(cluster, topologies.entry_field(obj, group.kind))
                        ws.hold_topology(self.snapshots[ref], obj, group.kind, ref, hold, cluster=cluster, changed_by=who)
        return deciding

    def _note_missing_templates(self):
        """Mark the snapshots of the objects whose infrastructure template is gone (``template_missing``)."""
        on = {}
        for group in self.groups:
            for name in group.names:
                obj = group.objects.get(name)
                infra_ref = obj and apiversion.normalize_ref(views.infrastructure_ref_of(obj, group.kind, group.version))
                if infra_ref and infra_ref.get("kind") and infra_ref.get("name"):
                    on[group.ref(name)] = dict(infra_ref, namespace=group.namespace)
        if not on:
            return
        try:
            existing = self.templates_lister(list(on.values()))
        except (ApiError, TransportError, RolloutError):
            if all(snap["done"] for snap in self.snapshots.values()):
                raise  # never a success that could not check its templates
            return  # a timeout or stall (an API server that hangs) is told as such, not as a failed read
        for ref, infra_ref in on.items():
            if (infra_ref["namespace"], infra_ref["kind"], infra_ref["name"]) not in existing:
                self.snapshots[ref]["template_missing"] = ws.template_missing(ref, infra_ref, infra_ref["namespace"])

    def _seconds_to_next_decision(self, call_deadline):
        """How long the streams may stay quiet before the state must be decided again: the next
        deadline of the wait, a scheduled trigger firing by the server's clock, or the end of this call."""
        now = self.clock()
        pause = ws.next_check(self.state, now, self.wait_timeout, self.stall_timeout, MAX_STREAM_SECONDS)
        server_now = self.now()
        for ref, snap in self.snapshots.items():
            if snap.get("pending"):
                group, name = self.locate(ref)
                after = timeutil.parse_optional(views.view(group.objects[name], api_version=group.version)["rollout"]["after"])
                if after is not None and after > server_now:
                    pause = min(pause, timeutil.seconds_between(server_now, after) + 1.0)
        if call_deadline is not None:
            pause = min(pause, max(call_deadline - self.api.clock_seconds(), 0))
        return pause

    def locate(self, ref):
        for group in self.groups:
            for name in group.names:
                if group.ref(name) == ref:
                    return group, name
        raise KeyError(ref)

    # ----- running -----
    def seconds_left(self):
        """Seconds until the end of the wait: its start + wait_timeout + soak_seconds (the caller's clock)."""
        return self.state["started"] + self.wait_timeout + self.soak_seconds - self.clock()

    def run(self, call_seconds=None):
        """Wait until the state is finished; with ``call_seconds``, return early once new progress lines
        exist and PROGRESS_GATHER_SECONDS passed since the first of them, or that many seconds passed
        (capi_rollout_wait hands the state to its action plugin). Returns the progress lines of this call."""
        start = len(self.progress)
        call_deadline = None if call_seconds is None else self.api.clock_seconds() + call_seconds
        # No request of this call may outlast the wait (or this call): a hanging API server then ends it
        # with wait_timeout, not after a request's own timeout.
        with self._bounded(call_deadline):
            return self._run(start, call_deadline)

    @contextlib.contextmanager
    def _bounded(self, call_deadline=None):
        """Within: no request may pass the wait's end (or this call's), plus a grace (client.requests.Api.deadline). The
        task's deadline, set before its first request, is at most the pre-wait requests earlier than the wait's end."""
        ends = self.api.clock_seconds() + self.seconds_left()
        previous, self.api.deadline = self.api.deadline, min(ends, call_deadline or ends) + DEADLINE_GRACE_SECONDS
        try:
            yield
        finally:
            self.api.deadline = previous

    def _run(self, start, call_deadline):
        self.observe()
        gathering = False
        while not self.finished:
            if call_deadline is not None:
                if not gathering and len(self.progress) > start:
                    gathering = True
                    call_deadline = min(call_deadline, self.api.clock_seconds() + PROGRESS_GATHER_SECONDS)
                if self.api.clock_seconds() >= call_deadline:
                    break
            seconds = self._seconds_to_next_decision(call_deadline)
            if seconds <= 0:
                self.observe()  # a deadline has come: decide now
                continue
            events = self.feed.events(seconds)
            try:
                for group, event_type, obj in events:
                    if group.kind == apiversion.MACHINE:
                        self._note_drain_event(group, event_type, obj)
                    elif group.apply(event_type, obj):
                        self.observe()
                    if self.finished or (call_deadline is not None and not gathering and len(self.progress) > start):
                        break  # finished, or the first new lines: this call ends after gathering for a while
            finally:
                close = getattr(events, "close", None)
                if close is not None:
                    close()
            if not self.finished:
                self.observe()
        self.feed.close()
        return self.progress[start:]

    def objects(self):
        """The objects as last seen (deleted ones left out), in the order of the groups."""
        return [group.objects[name] for group in self.groups for name in group.names if name in group.objects]

    def failure(self):
        """WaitFailed for a failed state: the message of core.waitstate with what is stuck per object
        (also kept in ``stuck``: its lines and the Machine views, one Machine LIST per object)."""
        with self._bounded():
            return self._failure()

    def _failure(self):
        for ref in self.state["failed_refs"]:
            if ref in self.stuck:
                continue
            group, name = self.locate(ref)
            obj = group.objects.get(name)
            if obj is None:
                self.stuck[ref] = {"lines": [], "machines": []}
                continue
            machines = None
            if self.machines_lister is not None:
                try:
                    machines = self.machines_lister(group, obj)
                except (ApiError, TransportError, RolloutError):
                    machines = None
            self.stuck[ref] = {"lines": statuses.stuck_reasons(views.view(obj, api_version=group.version), machines=machines),
                               "machines": machines or []}
        lines = {ref: entry["lines"] for ref, entry in self.stuck.items()}
        return WaitFailed(ws.failure_message(self.state, lines), hint=outcomes.hint(self.state["reason"]),
                          reason=self.state["reason"], objects=self.objects())


def machines_lister(api, discovery):
    """``machines_lister`` of a Waiter: the Machine views of an MD or KCP (one LIST by its name label)."""
    def lister(group, obj):
        label = keys.DEPLOYMENT_NAME_LABEL if group.kind == apiversion.MACHINE_DEPLOYMENT else keys.CONTROL_PLANE_NAME_LABEL
        items, version = reading.list_kind(api, discovery, apiversion.MACHINE, group.namespace,
                                           label_selector=f"{label}={_name(obj)}")
        return [views.machine_view(item, api_version=version) for item in items]
    return lister


def templates_lister(api, discovery):
    """``templates_lister`` of a Waiter: {(namespace, kind, name)} of the templates of ``required`` that exist, one
    LIST per kind and namespace (client.templates.existing_templates)."""
    def lister(required):
        found = set()
        for namespace in sorted({item["namespace"] for item in required}):
            listed = templates.existing_templates(api, discovery, [item for item in required if item["namespace"] == namespace])
            found.update((namespace, kind, paths.get_path(obj, "metadata.name"))
                         for (_group, kind), objs in listed.items() for obj in objs)
        return found
    return lister


def machine_sets_lister(api, discovery):
    """``machine_sets_lister`` of a Waiter: (MachineSets of a namespace, the list's resourceVersion)."""
    def lister(namespace):
        items, _version, list_rv = reading.list_kind_at(api, discovery, apiversion.MACHINE_SET, namespace)
        return items, list_rv
    return lister


class TopologyReads(object):
    """``topology_reads`` of a Waiter: the template an object is on (one GET) and the Clusters of objects
    (client.reading.clusters_for: one GET, or one LIST for several)."""

    def __init__(self, api, discovery):
        self.api = api
        self.discovery = discovery

    def template(self, namespace, raw_ref):
        """The infrastructure template of reference ``raw_ref`` (as on the object), or None when it is gone."""
        infra = apiversion.normalize_ref(raw_ref) or {}
        if not infra.get("kind") or not infra.get("name"):
            return None
        source = {"api_group": infra.get("api_group"), "kind": infra["kind"], "ref_api_version": raw_ref.get("apiVersion")}
        tkind = templates.template_kind(self.discovery, source)
        return templates.get_template(self.api, tkind, namespace, infra["name"])

    def clusters(self, namespace, objects):
        return reading.clusters_for(self.api, self.discovery, objects, namespace)
