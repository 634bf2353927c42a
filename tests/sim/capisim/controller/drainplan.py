"""The drain of a deleted Machine's Node, as CAPI's Machine controller reports it (issue 29 §1).

Upstream (v1.14.0 core/reconcilers/machine/machine_controller.go reconcileDelete, isNodeDrainAllowed,
nodeDrainTimeoutExceeded, drainNode; v1.10.10 internal/controllers/machine/machine_controller.go, same logic with the
v1beta1 field ``spec.nodeDrainTimeout``): a Machine with a Node first waits for its pre-drain hooks
(``pre-drain.delete.hook.machine.cluster.x-k8s.io/*`` annotations: Deleting reason WaitingForPreDrainHook), then
records ``status.deletion.nodeDrainStartTime`` and drains (reason DrainingNode, v1beta1 DrainingSucceeded False
reason Draining) until no Pod is left, or until the node drain timeout has passed since that start time (unset or 0:
never) -- then the drain is skipped, DrainingSucceeded stays as it was, and deletion goes on. A Machine without a Node
is not drained (isDeleteNodeAllowed: errNilNodeRef).

No Pods run in a simulated workload cluster; the template of the Machine says what its drain meets:
- ``sim.capi-rollout.dev/drain-blocked-by-pdb: "true"``: the eviction of Pod default/web-<node> fails because
  PodDisruptionBudget default/web needs 1 healthy pod and has 1 (the API server's 429 and its cause, which
  drain.go EvictPods appends and EvictionResult.ConditionMessage lower-cases: v1.14.0
  core/reconcilers/machine/drain/drain.go, v1.10.10 internal/controllers/machine/drain/drain.go);
- ``sim.capi-rollout.dev/drain-seconds: N``: the evicted Pod takes N seconds to go ("deletionTimestamp set, but
  still not removed from the Node").
Upstream polls a drain every 20 s (drainRetryInterval); the simulator wakes up exactly when the state changes instead.
"""

import collections
import datetime
import re

from . import conditions as c
from . import model as m

PRE_DRAIN_HOOK = "pre-drain.delete.hook.machine.cluster.x-k8s.io"
PDB_NAMESPACE, PDB_NAME = "default", "web"
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(h|ms|m|s)")
_UNIT_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}

Drain = collections.namedtuple("Drain", "reason message legacy started done_at wake_at")
Drain.__doc__ = """reason/message: the Deleting condition, or None once the drain is over (or never ran);
legacy: the v1beta1 conditions to set (DrainingSucceeded, PreDrainDeleteHookSucceeded); started: nodeDrainStartTime
to record; done_at: when the drain ended (None while it goes on); wake_at: when to look again (None: on a change)."""


def _seconds(value):
    """A Go duration ("1m30s") or an integer number of seconds; None or 0 when unset."""
    if value in (None, ""):
        return 0.0
    if isinstance(value, (int, float)):
        return float(value)
    return sum(float(num) * _UNIT_SECONDS[unit] for num, unit in _DURATION.findall(str(value)))


def drain_timeout(machine):
    """The Machine's node drain timeout in seconds (v1beta2 spec.deletion.nodeDrainTimeoutSeconds, v1beta1
    spec.nodeDrainTimeout); 0: none, the drain may take forever."""
    if m.is_v1beta2(machine):
        return _seconds(m.dig(machine, "spec", "deletion", "nodeDrainTimeoutSeconds"))
    return _seconds(m.dig(machine, "spec", "nodeDrainTimeout"))


def pod_name(node):
    return f"web-{node}"[:63]


def blocked_message(started, node):
    return (f"Drain not completed yet (started at {m.format_time(started)}):\n"
            f"* Pod {PDB_NAMESPACE}/{pod_name(node)}: cannot evict pod as it would violate the pod's disruption budget. "
            f"The disruption budget {PDB_NAME} needs 1 healthy pods and has 1 currently")


def evicting_message(started, node):
    return (f"Drain not completed yet (started at {m.format_time(started)}):\n"
            f"* Pod {PDB_NAMESPACE}/{pod_name(node)}: deletionTimestamp set, but still not removed from the Node")


def plan(machine, node, blocked_by_pdb, drain_seconds, now):
    """The drain of ``machine`` (being deleted; ``node``: its Node's name or None) at ``now``."""
    hooks = sorted(k for k in m.annotations(machine) if k.startswith(PRE_DRAIN_HOOK))
    if node is None:
        return Drain(None, None, [], None, m.parse_time(m.meta(machine)["deletionTimestamp"]), None)
    if hooks:
        return Drain("WaitingForPreDrainHook", f"Waiting for pre-drain hooks to succeed (hooks: {','.join(hooks)})",
                     [c.cond("PreDrainDeleteHookSucceeded", False, "WaitingExternalHook", "", "Info")], None, None, None)
    hook_ok = [c.cond("PreDrainDeleteHookSucceeded", True, "")]
    started = m.parse_time(m.dig(machine, "status", "deletion", "nodeDrainStartTime")) or now
    timeout = drain_timeout(machine)
    deadline = started + datetime.timedelta(seconds=timeout) if timeout > 0 else None
    if deadline is not None and now >= deadline:
        # nodeDrainTimeoutExceeded: drain skipped; DrainingSucceeded keeps what the last drain attempt wrote
        return Drain(None, None, hook_ok, started, deadline, None)
    if blocked_by_pdb:
        message = blocked_message(started, node)
        return Drain("DrainingNode", message, hook_ok + [c.cond("DrainingSucceeded", False, "Draining", message, "Info")],
                     started, None, deadline)
    finished = started + datetime.timedelta(seconds=drain_seconds)
    if now < finished:
        message = evicting_message(started, node)
        return Drain("DrainingNode", message, hook_ok + [c.cond("DrainingSucceeded", False, "Draining", message, "Info")],
                     started, None, min(x for x in (finished, deadline) if x is not None))
    return Drain(None, None, hook_ok + [c.cond("DrainingSucceeded", True, "")], started, finished, None)
