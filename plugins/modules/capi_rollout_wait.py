#!/usr/bin/python
# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: capi_rollout_wait
short_description: Wait for Cluster API rollouts, soak them, and show progress while waiting
version_added: 0.1.0
description:
  - Waits until the rollouts of a group of MachineDeployments and KubeadmControlPlanes, in any namespaces, are
    complete, then optionally watches them for O(soak_seconds) more (the soak); every object must stay healthy
    during the soak (all replicas up to date and available), or the task fails.
  - Prints one line per change of an object's rollout state B(while it waits), so a long job (for example in
    AWX) shows that it is alive and what it waits for. The action plugin of this module calls the module
    repeatedly, at most O(progress_interval) seconds each time, and prints the new lines in between; the lines
    are also returned in RV(progress).
  - Fails when the rollouts are not complete after O(wait_timeout) seconds, or when no replica count or
    condition of any waited-for object changed for O(stall_timeout) seconds (Cluster API has no progress
    deadline of its own). The failure says which object is stuck, which Machines hold it back and why
    (RV(stuck)).
  - With O(lease), renews the lock of M(capi.rollout.capi_rollout_lock) as it starts and while it waits (every third of
    the lease duration), so a wait may take longer than the lease duration; the task fails if another run took the lock
    meanwhile (C(reason=lock_lost)).
  - Reads the objects with one list request per kind and namespace, then follows them with one watch stream per
    kind and namespace (re-opened from the last resourceVersion, listed again after 410 Gone), so a change is
    seen when it happens, not at the next poll. The same engine and the same rules decide the C(wait) of
    M(capi.rollout.capi_rollout_restart), M(capi.rollout.capi_rollout_undo) and M(capi.rollout.capi_rollout_info).
  - Never changes anything (C(changed=false)).
author:
  - capi.rollout contributors (@capi-rollout)
options:
  objects:
    description:
      - The objects to wait for.
    type: list
    elements: dict
    required: true
    suboptions:
      kind:
        description:
          - V(MachineDeployment) or V(KubeadmControlPlane); case-insensitive, V(md) and V(kcp) are accepted too.
        type: str
        default: MachineDeployment
      namespace:
        description: Namespace of the object.
        type: str
        default: default
      name:
        description: Name of the object.
        type: str
        required: true
      infrastructure_ref:
        description:
          - The infrastructure template the object must stay on (C(kind) optional, C(name)). When it is on
            another one (someone switched it during the wait, or back), the wait fails at once with
            RV(reason)=V(drift) instead of reporting that rollout as the one asked for.
        type: dict
        suboptions:
          kind:
            description: Template kind; any kind when omitted.
            type: str
          name:
            description: Template name.
            type: str
            required: true
      switched_at:
        description:
          - When the object was switched (RFC 3339, the switch call's server time). Once the wait succeeded, the
            Machines are read (one list per namespace) and RV(resources[].machines) says how many were replaced and how
            many updated in place (CAPI v1.12+ with InPlaceUpdates). The hardware_refresh role sets it.
        type: str
      topology:
        description:
          - For a MachineDeployment a Cluster topology (ClusterClass) manages, the topology change it must stay on,
            instead of O(objects[].infrastructure_ref) - its template names are generated, so values decide, not a
            name (C(docs/clusterclass.md)). C(objects[].hold) of the result of M(capi.rollout.capi_rollout_restart)
            or M(capi.rollout.capi_rollout_undo) for such an object is this entry. Not with
            O(objects[].infrastructure_ref) (RV(reason)=V(invalid_input)).
          - Its rollout is complete only when the template it is on carries O(objects[].topology.template) (and is
            not O(objects[].topology.not_on)) and the rollout on it is complete (every Machine made from it). When the
            Cluster's topology entry of the object no longer holds O(objects[].topology.overrides) (someone reverted
            it), the wait fails at once with RV(reason)=V(drift), naming who wrote the entry last (its
            C(managedFields)).
          - The template an object is on is read once per name (one GET), its Cluster when a new template shows up
            and at each moment that may end the wait; this needs C(get) on the template kind and on C(clusters).
        type: dict
        suboptions:
          overrides:
            description: The per-MD C(variables.overrides) entries (name to value; null for no entry) its topology entry must hold;
              for a KubeadmControlPlane the Cluster-level C(spec.topology.variables).
            type: dict
            required: true
          class:
            description:
              - The worker class (C(spec.topology.workers.machineDeployments[].class)) its topology entry must keep, for
                a change by a worker class switch (C(docs/clusterclass.md), path (b)); another class is V(drift).
            type: str
          cluster_class:
            description:
              - The ClusterClass its Cluster must stay on (C(spec.topology.class) / C(spec.topology.classRef.name)), for
                a change by a rebase onto a clone of the ClusterClass (C(docs/clusterclass.md), path (c)); another class
                is V(drift).
            type: str
          template:
            description:
              - The fields under C(spec.template.spec) of its infrastructure template that the template it is on must
                carry, as O(capi.rollout.capi_rollout_restart#module:switches[].template.overrides).
            type: dict
            default: {}
          not_on:
            description:
              - A template the object must have left before its rollout counts as complete - the one of the change an
                undo reverts (its template from before is gone, the topology generates a new one).
            type: str
  wait_timeout:
    description:
      - How many seconds the rollouts may take in total (the soak is not counted), from V(1) to V(604800) (a week).
      - It bounds every request of the task too, so that an API server that hangs (accepts connections, answers
        nothing) cannot hold the task longer. No request ends more than 5 seconds after the end of the wait
        (RV(started) + O(wait_timeout) + O(soak_seconds)), nor, in the first call of the module, 5 seconds after
        O(wait_timeout) + O(soak_seconds) from its start - the connection, the TLS handshake, the lock renewal, the
        reads and the watches included. Then the task fails with RV(reason)=V(wait_timeout), naming the objects and
        what was last seen of them, or V(unreachable) when the API server never answered in this task.
    type: int
    default: 1200
  stall_timeout:
    description:
      - Fail when no replica count or condition of the objects that are not done changed for this many seconds
        (V(1) to V(86400)).
    type: int
    default: 600
  soak_seconds:
    description:
      - After every rollout is complete, keep watching for this many seconds; the task fails if an object stops
        being complete (a Machine becomes unavailable, a new rollout starts). V(0) skips the soak; at most V(86400) (a day).
    type: int
    default: 0
  poll_interval:
    description:
      - Seconds to wait before a watch stream that could not be opened (the API server unreachable) is tried
        again; the wait itself follows watch events. From V(1) to V(3600).
    type: int
    default: 10
  progress_interval:
    description:
      - The most seconds one module call waits before the action plugin gets control back (to print progress and
        renew the lease). New progress lines are printed within 5 seconds, as a call that has new lines goes on for
        5 seconds gathering those that follow; so a busy rollout starts the module (a process, a connection, its
        lists) about once per 5 seconds instead of once per change. After a call without any, a heartbeat line says
        how many objects are complete and what the first other one waits for, so the output never sits silent
        for longer than this.
      - Cut to a third of O(lease.lease_duration_seconds) when O(lease) is given. From V(1) to V(3600).
    type: int
    default: 60
  on_delete:
    description:
      - What the wait does with a MachineDeployment among O(objects) whose strategy is C(OnDelete), where CAPI
        replaces a Machine only once someone deletes it.
      - V(wait) only waits (such a rollout stalls unless someone deletes the old Machines).
      - V(replace) deletes its Machines that are not on its template at the start of each call of the module, at
        most O(on_delete_max_unavailable) short of its replicas at a time, the ones that are not ready first, then the
        oldest; a Machine being deleted is never deleted again, so a wait started again after an interruption goes
        on where the other stopped. The pool is done when all its Machines are on its template and ready (its
        MachineSets and Machines are read, one list each per namespace). Each deletion is a progress line and an
        entry of RV(deleted). Needs C(delete) on C(machines) (C(docs/rbac.yml)).
    type: str
    choices: [wait, replace]
    default: wait
  on_delete_max_unavailable:
    description:
      - With O(on_delete=replace), the most Machines of a pool that may be unavailable (deleted and not yet replaced
        by a ready one) at a time. CAPI's OnDelete strategy has no C(maxUnavailable) of its own. From V(1) to V(10000).
    type: int
    default: 1
  undrainable:
    description:
      - Follow the drains of the Machines of the MachineDeployments among O(objects) (one more list and watch per
        namespace), and say what a drain that timed out does - CAPI deletes a Machine whose drain has not finished
        when its node drain timeout has passed (v1beta1 C(nodeDrainTimeout), v1beta2
        C(deletion.nodeDrainTimeoutSeconds)), with its remaining Pods not evicted. Such a drain leaves no lasting
        trace, so the wait notices it while watching - a Machine seen draining that is deleted, or goes on, without
        C(DrainingSucceeded) - and names it in RV(drain_timeouts) and a progress line.
      - V(fail) fails the wait (reason C(drain_timed_out)); V(continue) lets the rollout go on.
      - Unset (the default), the Machines are not watched. Between two calls of the module a drain is followed from
        the Machines listed again, so one that succeeded and was deleted in that moment is taken for one that timed
        out only if it was last seen draining.
    type: str
    choices: [fail, continue]
  restore_drain_timeout:
    description:
      - As each call starts, give the node drain timeout that M(capi.rollout.capi_rollout_restart) set to the older
        MachineSets of the MachineDeployment that still have Machines, which CAPI v1.10/v1.11 leave out (they pass
        in-place fields to the newest MachineSet only); one more list of MachineSets per namespace, only when an
        object carries the record.
      - When the wait has ended (succeeded or failed), put back the node drain timeout that
        M(capi.rollout.capi_rollout_restart) set with its O(capi.rollout.capi_rollout_restart#module:drain_timeout) on
        the MachineDeployments among O(objects), to the value recorded on each (annotation
        C(rollout.capi-rollout.dev/drain-timeout); unset when it was unset), and remove the record. One list per
        namespace and one patch per recorded object (C(fieldManager=capi-rollout); a server-side dry run in check
        mode). Each one is a progress line and an entry of RV(drain_timeouts_restored). A wait started again after a
        kill puts it back the same way.
    type: bool
    default: false
  progress_verbosity:
    description:
      - Print the progress lines while waiting when Ansible runs with at least this many C(-v). V(0) prints them
        always. At most V(6).
    type: int
    default: 0
  tracking:
    description:
      - Internal, set by the action plugin between two calls of the module - the state of the wait so far.
    type: dict
  time_left:
    description:
      - Internal, set by the action plugin on its later calls of the module - the seconds the wait has left (its
        RV(started) + O(wait_timeout) + O(soak_seconds), by the API server's clock). No request of the call ends
        more than 5 seconds after that.
    type: float
notes:
  - Needs C(list) on C(machinedeployments) / C(kubeadmcontrolplanes) and, when something is stuck, C(list) on
    C(machines); with O(on_delete=replace) C(list) on C(machinesets) and C(delete) on C(machines); with O(lease)
    the permissions of M(capi.rollout.capi_rollout_lock). See C(docs/rbac.yml).
extends_documentation_fragment:
  - capi.rollout.connection
  - capi.rollout.lease
  - capi.rollout.objects.attributes
attributes:
  action:
    description: An action plugin runs the module repeatedly and prints progress between the calls.
    support: full
  check_mode:
    description: Waits in check mode too; the deletions of O(on_delete=replace) are server-side dry runs.
    support: full
  diff_mode:
    description: Read-only; nothing to show.
    support: N/A
seealso:
  - module: capi.rollout.capi_rollout_restart
  - module: capi.rollout.capi_rollout_info
  - module: capi.rollout.capi_rollout_lock
'''

EXAMPLES = r'''
- name: Wait for a wave of two pools in two namespaces, then soak it for 10 minutes
  capi.rollout.capi_rollout_wait:
    objects:
      - {namespace: team-a, name: prod-1-md-0}
      - {namespace: team-b, name: prod-2-md-0}
    wait_timeout: 3600
    stall_timeout: 900
    soak_seconds: 600

- name: Wait for a control plane while renewing this run's lock
  capi.rollout.capi_rollout_wait:
    objects:
      - {kind: KubeadmControlPlane, namespace: team-a, name: prod-1-control-plane}
    lease:
      namespace: default
      holder: "awx-job-{{ awx_job_id }}"
      lease_duration_seconds: 300
  register: waited

- name: When did it finish?
  ansible.builtin.debug:
    msg: "{{ waited.rollout_finished }}"
'''

RETURN = r'''
changed:
  description: Whether Machines were deleted (O(on_delete=replace)).
  returned: always
  type: bool
  sample: false
deleted:
  description: The Machines deleted with O(on_delete=replace) - the pool's C(ref), the C(machine) and its C(node).
  returned: always
  type: list
  elements: dict
  sample: [{ref: machinedeployment/default/edge-md-0, machine: edge-md-0-x7k2p-abcde, node: edge-md-0-x7k2p-abcde}]
drain_timeouts:
  description:
    - With O(undrainable), each Machine whose drain timed out - C(ref) (its MachineDeployment), C(machine), C(node)
      and C(at) (when the wait noticed it).
  returned: when the objects were watched
  type: list
  elements: dict
  sample: [{ref: machinedeployment/team-drain/wdr-md-0, machine: wdr-md-0-x7k2p-abcde, node: wdr-md-0-x7k2p-abcde,
            at: "2026-03-01T12:10:00Z"}]
drain_timeouts_restored:
  description:
    - With O(restore_drain_timeout=true), the MachineDeployments whose node drain timeout was put back - C(ref) and
      C(drain_timeout), the field's value read back from the cluster (C(null) - unset; v1beta1 a duration such as
      C(300s), v1beta2 seconds).
  returned: when the wait ended and O(restore_drain_timeout=true)
  type: list
  elements: dict
  sample: [{ref: machinedeployment/default/md-0, drain_timeout: null}]
phase:
  description: V(succeeded), or V(failed) (with RV(reason)).
  returned: always
  type: str
  sample: succeeded
reason:
  description:
    - Why the wait failed - V(stalled), V(wait_timeout), V(soak_failed), V(deleted) (an object disappeared) or
      V(lock_lost) (another run took the lock), V(drift) (an object is not on the O(objects[].infrastructure_ref) it
      must be on, or its Cluster topology no longer holds its O(objects[].topology)), V(template_missing) (the
      infrastructure template an object is on was deleted, so its MachineSet
      cannot create Machines from it); null on success.
    - Whether the templates exist is read (one list per template kind and namespace) as the wait starts and at each
      moment that may end it (every rollout complete, the end of the soak, a stall or timeout due), so a wait
      never succeeds on a template that is gone.
  returned: always
  type: str
  sample: stalled
started:
  description: When the wait started (UTC, the API server's clock, as every time the wait returns).
  returned: always
  type: str
  sample: "2026-03-01T12:00:00Z"
rollout_finished:
  description: When the last rollout was complete; null if not all were.
  returned: always
  type: str
  sample: "2026-03-01T12:08:50Z"
soak_finished:
  description: When the soak passed; null without soak or when it did not pass.
  returned: always
  type: str
  sample: "2026-03-01T12:18:50Z"
ended:
  description: When the wait ended (UTC).
  returned: always
  type: str
  sample: "2026-03-01T12:18:50Z"
resources:
  description: The last state seen of each object, in the order of O(objects).
  returned: always
  type: list
  elements: dict
  contains:
    ref:
      description: C(kind/namespace/name) with a lower-case kind.
      type: str
    kind:
      description: V(MachineDeployment) or V(KubeadmControlPlane).
      type: str
    namespace:
      description: Namespace.
      type: str
    name:
      description: Name.
      type: str
    done:
      description: Whether the rollout was complete.
      type: bool
    done_at:
      description: When it was first seen complete during this wait (UTC); null if never.
      type: str
    message:
      description: The rollout state in the words of C(kubectl rollout status).
      type: str
    replicas:
      description: Replica counters (C(desired), C(current), C(ready), C(available), C(up_to_date)).
      type: dict
    warnings:
      description:
        - What to know about the final state, for example upstream bug kubernetes-sigs/cluster-api#13182 recognised
          (complete, but CAPI v1.10-v1.12.3 never settle the counters). Also shown as Ansible warnings.
      type: list
      elements: str
    template:
      description:
        - The object's template as last read from the cluster - C(infrastructure_ref) (C(kind), C(name)) and
          C(version) - so that a caller reports what is there, not what it asked for; null if it was never read.
      type: dict
    drift:
      description:
        - Why the object is not on its O(objects[].infrastructure_ref), or its Cluster topology no longer holds its
          O(objects[].topology) (RV(reason)=V(drift)); null otherwise.
      type: str
    template_missing:
      description: Which template of the object no longer exists (RV(reason)=V(template_missing)); null otherwise.
      type: str
    machines:
      description:
        - With O(objects[].switched_at), once the wait succeeded - C(replaced) (Machines created at or after the switch)
          and C(updated_in_place) (older Machines that belong to the object - CAPI v1.12+ updated them in place), read
          from the Machines.
      type: dict
      returned: when O(objects[].switched_at) is given and the wait succeeded
      sample: {replaced: 0, updated_in_place: 3}
  sample:
    - {ref: machinedeployment/team-a/prod-1-md-0, kind: MachineDeployment, namespace: team-a, name: prod-1-md-0,
       done: true, done_at: "2026-03-01T12:08:50Z", message: "machinedeployment/team-a/prod-1-md-0 successfully rolled out",
       replicas: {desired: 3, current: 3, ready: 3, available: 3, up_to_date: 3}, warnings: [],
       template: {infrastructure_ref: {kind: DockerMachineTemplate, name: prod-1-md-0-hw-2026}, version: v1.30.4},
       drift: null, template_missing: null}
failed_refs:
  description: The objects that made the wait fail.
  returned: always
  type: list
  elements: str
  sample: [machinedeployment/team-a/prod-1-md-0]
stuck:
  description:
    - For each object in RV(failed_refs), what holds it back - C(lines) (conditions and Machines in words) and
      C(machines) (the Machines that are not ready, each with C(name), C(node) and C(reason)).
  returned: when the wait failed
  type: dict
  sample:
    machinedeployment/team-a/prod-1-md-0:
      lines: ["Machine prod-1-md-0-7f9c-xk2lp is not ready: 0 of 1 completed"]
      machines: [{name: prod-1-md-0-7f9c-xk2lp, node: null, reason: "InfrastructureReady=False: BMC power-on timed out"}]
progress:
  description: Timestamped lines, one per change of an object's state, and the soak's start and end.
  returned: always
  type: list
  elements: str
  sample:
    - "2026-03-01T12:00:05Z Waiting for machinedeployment/team-a/prod-1-md-0 rollout to finish: 1 out of 3 new replicas
      have been updated..."
    - "2026-03-01T12:08:50Z machinedeployment/team-a/prod-1-md-0 successfully rolled out"
lease_renewals:
  description: How often the lease was renewed - as the wait started, then every third of its duration.
  returned: always
  type: int
  sample: 3
finished_call:
  description: Internal - whether the wait is over (false when the module returned to let the action plugin print).
  returned: always
  type: bool
  sample: true
tracking:
  description: Internal - the state of the wait, handed back by the action plugin on the next call.
  returned: always
  type: dict
  sample: {}
time_left:
  description: Internal - the seconds the wait had left when the call returned, handed on by the action plugin (less the time since) as O(time_left).
  returned: when the call did not fail
  type: float
  sample: 17.5
server_time:
  description:
    - The API server's clock when the task ended (UTC), read from the C(Date) headers of its answers; null when
      no answer came. The C(capi.rollout.hardware_refresh) role judges the maintenance window by it, not by the
      Ansible host's clock.
  returned: always
  type: str
  sample: "2026-03-01T12:00:05Z"
api_requests:
  description: Number of HTTP requests sent to the API server.
  returned: always
  type: int
  sample: 12
problems:
  description: The options refused before any request, one entry each (C(option), C(value), C(reason), C(msg)); the first one's reason is the task's C(reason).
  returned: when an option is refused before any request (the input gate)
  type: list
  elements: dict
'''

from ansible_collections.capi.rollout.plugins.module_utils.flows import args
from ansible_collections.capi.rollout.plugins.module_utils.flows.run import RolloutModule
from ansible_collections.capi.rollout.plugins.module_utils.flows.wait import run_wait


def main():
    module = RolloutModule(
        argument_spec=args.argument_spec(
            args.AUTH_ARG_SPEC,
            objects={"type": "list", "elements": "dict", "required": True, "options": {
                "kind": {"type": "str", "default": "MachineDeployment"},
                "namespace": {"type": "str", "default": "default"},
                "name": {"type": "str", "required": True},
                "infrastructure_ref": {"type": "dict", "options": {
                    "kind": {"type": "str"},
                    "name": {"type": "str", "required": True},
                }},
                "switched_at": {"type": "str"},
                "topology": {"type": "dict", "options": {
                    "overrides": {"type": "dict", "required": True},
                    "class": {"type": "str"},
                    "cluster_class": {"type": "str"},
                    "template": {"type": "dict", "default": {}},
                    "not_on": {"type": "str"},
                }},
            }},
            wait_timeout={"type": "int", "default": 1200},
            stall_timeout={"type": "int", "default": 600},
            soak_seconds={"type": "int", "default": 0},
            poll_interval={"type": "int", "default": 10},
            progress_interval={"type": "int", "default": 60},
            progress_verbosity={"type": "int", "default": 0},
            on_delete={"type": "str", "choices": ["wait", "replace"], "default": "wait"},
            on_delete_max_unavailable={"type": "int", "default": 1},
            undrainable={"type": "str", "choices": ["fail", "continue"]},
            restore_drain_timeout={"type": "bool", "default": False},
            lease={"type": "dict", "options": args.LEASE_ARG_SPEC},
            tracking={"type": "dict"},
            time_left={"type": "float"},
        ),
        supports_check_mode=True,
    )
    run_wait(module)


if __name__ == "__main__":
    main()
