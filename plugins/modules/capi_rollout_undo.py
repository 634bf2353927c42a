#!/usr/bin/python
# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: capi_rollout_undo
short_description: Roll Cluster API MachineDeployments back to an earlier revision
version_added: 0.1.0
description:
  - Restores the machine template of a MachineDeployment to the one of an earlier revision, like
    C(clusterctl alpha rollout undo) (deprecated in Cluster API v1.8, removed in v1.11), on every Cluster API
    version. The result is an ordinary rollout.
  - O(to_revision=0) (the default) picks the previous revision, chosen like clusterctl - the second-highest revision
    known. Any other number picks that revision.
  - The target template comes from a MachineSet that still has the revision, else from the history record
    (annotation C(rollout.capi-rollout.dev/history)) that this collection writes with every template change. On
    Cluster API v1.11 and later, which delete old MachineSets once a rollout completes, the record is the usual
    source. M(capi.rollout.capi_rollout_info) with O(capi.rollout.capi_rollout_info#module:history=true) lists the
    revisions there are.
  - Only the template identity is written - C(version), C(infrastructureRef), C(bootstrap) (C(configRef) or
    C(dataSecretName)) and C(failureDomain). Labels, annotations, timeouts and every other field that Cluster API
    propagates in place are left alone (clusterctl copied the whole MachineSet template).
  - The undo is recorded in the history in the same patch, with the revision it produces, so an undo can itself
    be undone. The history entry of the revision it leaves also keeps how that revision's Machines changed
    (one list of the namespace's Machines, only when that entry has no counts yet).
  - Refuses, with nothing written and a message that says why and what to do - a KubeadmControlPlane
    (control-plane and etcd downgrades are unsupported by kubeadm and Kubernetes, and a KubeadmControlPlane keeps
    no revisions), except the revert of its recorded topology change (below), a paused MachineDeployment,
    the C(cluster.x-k8s.io/paused) annotation or a paused Cluster, a revision that is not known (the message
    lists those that are), a MachineDeployment managed by a Cluster topology whose history records no topology
    change (C(no_history)), or labelled so without a Cluster topology (unless O(force=true)), a target
    C(version) that breaks the Kubernetes version skew policy against the control plane (unless O(force=true)),
    and a target whose infrastructure or bootstrap template no longer exists. The failure result carries a
    machine-readable RV(reason).
  - When several objects are selected, all are checked first; one refusal fails the task before any change.
  - A MachineDeployment a Cluster topology (ClusterClass) manages (the label C(topology.cluster.x-k8s.io/owned) and a
    Cluster with a C(spec.topology)) is undone through its Cluster, without O(force) and O(to_revision) - the newest
    topology change its history records (O(undo_rollout_id) - every change of that rollout) is reverted, its per-MD
    C(variables.overrides) put back as they were before (its worker C(class) switched back; a Cluster rebased onto a
    ClusterClass clone rebased back onto the class from before, the clone and its template kept, as Machines still
    reference the template during the rollout), as a JSON patch of the Cluster that tests what the change
    wrote. A Cluster topology someone changed since is left alone (C(reason=changed_since_rollout), naming who). The
    topology controller then generates the template and rolls the MachineDeployment (C(docs/clusterclass.md)).
  - A KubeadmControlPlane a Cluster topology manages is undone the same way when its history records a topology
    change - the new hardware M(capi.rollout.capi_rollout_restart) wrote as a Cluster variable (C(spec.topology.variables))
    that its ClusterClass patches onto the control plane's machine template only - which is put back as it was before,
    and the topology controller rolls the control plane onto a template with the values from before. Check mode
    sends that Cluster write as a server-side dry run.
author:
  - capi.rollout contributors (@capi-rollout)
options:
  kind:
    description:
      - Only V(MachineDeployment) (or V(md)) has revisions. V(KubeadmControlPlane) (or V(kcp)) is undone only when a
        Cluster topology manages it and its history records a topology change (a Cluster variable, written by
        M(capi.rollout.capi_rollout_restart)), without O(to_revision) and O(force); any other control plane is
        refused (C(reason=control_plane_undo)) before any write - roll it forward instead. Any other kind is refused
        before any request.
    type: str
    default: MachineDeployment
  to_revision:
    description:
      - The revision to go back to. V(0) is the previous revision (the second-highest known, as clusterctl chose).
      - After a plain restart the previous revision has the same template as the current one, so V(0) then
        changes nothing; give the revision number to go back further.
    type: int
    default: 0
  undo_rollout_id:
    description:
      - Undo the change made with this rollout id (a hardware refresh's refresh id) instead of picking a revision -
        each object goes back to what it was before that rollout (the C(from) of the rollout's first recorded
        history entry), never onto another template. An object that rollout did not switch is left unchanged.
      - When the object's template is no longer what the rollout wrote (someone switched it since - a hand edit, a
        GitOps reconciler), the undo fails before any write, naming who changed it and when (from
        C(managedFields)), instead of fighting that change (C(reason=changed_since_rollout)).
      - Not together with a O(to_revision) other than V(0).
    type: str
  force:
    description:
      - Roll back a MachineDeployment managed by a Cluster topology (ClusterClass) anyway. The topology controller
        reverts the change on its next reconcile unless the Cluster topology is changed too; a warning says so.
      - Roll back to a C(version) that breaks the Kubernetes version skew policy against the control plane (newer
        minor than the control plane, too many minors older, or a kubeadm worker on another minor). Cluster API's
        MachineSet preflight checks will then hold the new Machines unless
        C(machineset.cluster.x-k8s.io/skip-preflight-checks) allows them.
      - Never overrides a missing template, a paused object or an unknown revision.
    type: bool
    default: false
  rollout_id:
    description:
      - Identifier of this undo, for example a change ticket (1-128 letters, digits, C(.), C(_), C(:), C(/) or C(-),
        starting with a letter or digit). Recorded in the history; when the object already
        records an undo with this id, nothing is changed (the task is idempotent, also after later changes).
      - Without it every run is a new undo, which goes back and forth between two templates.
    type: str
  reason:
    description:
      - Why the undo is done, recorded in the history and the last-action annotation.
    type: str
  history_limit:
    description:
      - How many entries the object's rollout history keeps; the oldest are dropped when a new one is written.
      - The history never exceeds 16 KiB, whatever this says. From V(1) to V(100).
    type: int
    default: 10
notes:
  - In check mode nothing is written and O(wait) is skipped.
  - The control plane version for the skew check is read from the Cluster's C(spec.controlPlaneRef)
    (C(spec.version) and C(status.version) of a KubeadmControlPlane, or of any control plane with
    C(spec.version)). When it is not known the check is skipped and a warning says so.
  - A task costs a constant number of API requests whatever the number of objects - discovery, the
    MachineDeployments, their Clusters, the MachineSets of the namespace, the control planes and one list per
    template kind of the targets, then one patch per object that changes.
extends_documentation_fragment:
  - capi.rollout.connection
  - capi.rollout.objects
  - capi.rollout.objects.wait
  - capi.rollout.objects.attributes
  - capi.rollout.field_owners
attributes:
  check_mode:
    description: Every patch is sent as a server-side dry run (C(dryRun=All)), so RBAC, admission and validation
      answer as in a real run and nothing is stored; RV(objects) says what would happen, including the patch.
    support: full
  diff_mode:
    description:
      - Shows before and after of exactly the template fields that would change, as YAML. The history record
        appears as a one-line summary with the new entry.
    support: full
seealso:
  - module: capi.rollout.capi_rollout_info
  - module: capi.rollout.capi_rollout_restart
  - module: capi.rollout.capi_rollout_pause
  - name: History and undo
    description: Where the history comes from, its limits, and every refusal of this module with what to do.
    link: https://github.com/capi-rollout/capi.rollout/blob/main/docs/history-and-undo.md
  - name: clusterctl alpha rollout
    description: The command this module follows (C(undo) was removed in Cluster API v1.11).
    link: https://cluster-api.sigs.k8s.io/clusterctl/commands/alpha-rollout
'''

EXAMPLES = r'''
- name: Roll a MachineDeployment back to the previous revision and wait for the Machines
  capi.rollout.capi_rollout_undo:
    kubeconfig: ~/.kube/mgmt.yaml
    namespace: fleet-a
    name: prod-eu-1-md-0
    rollout_id: CHG-4712
    reason: new image breaks the GPU driver
    wait: true
    wait_timeout: 3600
    stall_timeout: 900

- name: List the revisions first
  capi.rollout.capi_rollout_info:
    namespace: fleet-a
    name: prod-eu-1-md-0
    history: true
  register: info

- name: Go back to a given revision
  capi.rollout.capi_rollout_undo:
    namespace: fleet-a
    name: prod-eu-1-md-0
    to_revision: 3

- name: Dry run - which revision, which template fields change, the patch
  capi.rollout.capi_rollout_undo:
    namespace: fleet-a
    name: prod-eu-1-md-0
  check_mode: true
  diff: true
  register: plan

- name: Show what would be restored
  ansible.builtin.debug:
    msg: "revision {{ plan.objects[0].from_revision }} -> {{ plan.objects[0].to_revision }}:
      {{ plan.objects[0].target_template }}"

- name: Roll back every MachineDeployment of one cluster, once per change ticket
  capi.rollout.capi_rollout_undo:
    namespace: fleet-a
    cluster_name: prod-eu-1
    rollout_id: CHG-4713

- name: Undo, and say why when it is refused
  block:
    - name: Undo
      capi.rollout.capi_rollout_undo:
        namespace: fleet-a
        name: prod-eu-1-md-0
  rescue:
    - name: Report the reason code and the message (what to do)
      ansible.builtin.debug:
        msg: "{{ ansible_failed_result.reason }}: {{ ansible_failed_result.msg }}"

- name: Roll back a ClusterClass-managed MachineDeployment anyway (the topology controller will revert it)
  capi.rollout.capi_rollout_undo:
    namespace: fleet-a
    name: prod-eu-1-md-0-abcde
    force: true
'''

RETURN = r'''
changed:
  description: Whether any object was (in check mode, would be) changed.
  returned: always
  type: bool
  sample: true
reason:
  description:
    - Why the task failed, machine-readable - for example V(control_plane_undo), V(paused), V(cluster_paused),
      V(topology_owned), V(revision_not_found), V(no_history), V(invalid_revision), V(template_missing),
      V(version_skew), V(not_found), V(forbidden).
  returned: on failure
  type: str
  sample: revision_not_found
hint:
  description: What to do about the failure (also the last sentence of C(msg)).
  returned: on failure
  type: str
  sample: "revisions that exist: 4 (current), 3 (record only), 2, 1 (record only)"
objects:
  description: One entry per selected object, sorted by name.
  returned: always
  type: list
  elements: dict
  contains:
    ref:
      description: C(kind/namespace/name) with a lower-case kind.
      type: str
      sample: machinedeployment/fleet-a/prod-eu-1-md-0
    kind:
      description: Object kind, V(MachineDeployment) (or V(KubeadmControlPlane), undone through its Cluster topology).
      type: str
      sample: MachineDeployment
    name:
      description: Object name.
      type: str
      sample: prod-eu-1-md-0
    namespace:
      description: Object namespace.
      type: str
      sample: fleet-a
    api_version:
      description: API version the object was read and patched with.
      type: str
      sample: cluster.x-k8s.io/v1beta2
    action:
      description: V(rolled_back) or V(unchanged) (already at the target template, or O(rollout_id) already applied).
      type: str
      sample: rolled_back
    changed:
      description: Whether this object was (would be) changed.
      type: bool
      sample: true
    message:
      description: What was done, or why nothing was done.
      type: str
      sample: "machinedeployment/fleet-a/prod-eu-1-md-0: spec.template restored from revision 3 (the history record)"
    from_revision:
      description: The current revision before the undo.
      type: int
      sample: 4
    to_revision:
      description: The revision whose template is restored; null when O(rollout_id) was already applied.
      type: int
      sample: 3
    not_restored:
      description:
        - The fields changed after the target revision that the undo leaves as they are (it writes the template
          identity only) - in-place fields, replicas, settings - each with C(path), C(actor), C(at) and C(cause), from
          the changes the history knows (see RV(capi.rollout.capi_rollout_info#module:resources[].history)). The
          message names them too.
      type: list
      elements: dict
      sample: [{path: spec.template.spec.deletion.nodeDrainTimeoutSeconds, actor: alice, at: "2026-03-02T08:15:00Z",
                cause: in-place field}]
    history_revision:
      description: The revision the rollout produces, as recorded in the history; null when nothing changed.
      type: int
      sample: 5
    target_source:
      description: Where the target template came from, V(machineset) or V(record).
      type: str
      sample: record
    target_machine_set:
      description: The MachineSet that has the target revision, if one still exists.
      type: str
      sample: null
    target_template:
      description: The restored template identity (C(version), C(infrastructure_ref), C(bootstrap_ref),
        C(data_secret_name), C(failure_domain)).
      type: dict
      sample: {version: v1.30.4, infrastructure_ref: {api_group: infrastructure.cluster.x-k8s.io, kind: DockerMachineTemplate,
               name: md-0-v1}, bootstrap_ref: {api_group: bootstrap.cluster.x-k8s.io, kind: KubeadmConfigTemplate,
               name: md-0}, data_secret_name: null, failure_domain: null}
    revision_before:
      description: The MachineDeployment's revision annotation before the change.
      type: int
      sample: 4
    patch:
      description:
        - The JSON patch (RFC 6902, C(application/json-patch+json)) sent, exactly (in check mode, that would be sent
          as a server-side dry run); null when nothing changes.
        - C(test) operations come first, one per field the plan relied on, with the value that was read (the
          template fields (version, infrastructureRef, bootstrap, failureDomain), the trigger, whether it is
          paused, the last-rollout and history annotations); an absent field is tested with value null at its
          first missing member (the API server passes such a test when the member is absent). When one fails
          (someone changed that field meanwhile), the object is read again, planned again and the new patch sent,
          up to 5 times. Other changes of the object (its status, other annotations, the resourceVersion) do not
          fail it.
        - Then the C(add), C(replace) and C(remove) operations of the change. C(changes) and the diff show the same
          change readably.
      type: list
      elements: dict
      sample: [{op: test, path: /spec/template/spec/infrastructureRef,
                value: {apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerMachineTemplate, name: md-0-v2}},
               {op: replace, path: /spec/template/spec/infrastructureRef/name, value: md-0-v1},
               {op: replace, path: /metadata/annotations/rollout.capi-rollout.dev~1history, value: "[...]"}]
    patch_type:
      description: Always V(json) (C(application/json-patch+json)).
      type: str
      sample: json
    changes:
      description: Each changed field with its value before and after.
      type: list
      elements: dict
      sample: [{path: spec.template.spec.infrastructureRef.name, before: md-0-v2, after: md-0-v1}]
    warnings:
      description: Warnings about this object (also shown as task warnings), for example a check skipped or overridden
        with O(force).
      type: list
      elements: str
      sample: []
    owner:
      description:
        - For a MachineDeployment a Cluster topology (ClusterClass) manages, the write of the Cluster that reverts the
          topology change recorded in its history (its per-MD C(variables.overrides) put back as they were before;
          C(docs/clusterclass.md)) - C(ref), C(patch), C(changes), C(message). The object's own patch only records it.
          The Cluster writes of several objects of one Cluster in one call are sent as one JSON patch.
      returned: when a Cluster topology was (would be) written for this object
      type: dict
    hold:
      description:
        - What a wait holds such an object to (O(capi.rollout.capi_rollout_wait#module:objects[].topology)) - the
          overrides from before and C(not_on), the template of the change it must leave. O(wait) holds it to them too.
      returned: when a Cluster topology was (would be) written for this object
      type: dict
    status:
      description: The final state after O(wait), as in RV(capi.rollout.capi_rollout_info#module:resources).
      returned: when O(wait=true)
      type: dict
      sample: {name: prod-eu-1-md-0, rollout: {complete: true}, replicas: {desired: 3, up_to_date: 3}}
diff:
  description: Before and after of the changed fields of each changed object, as YAML text.
  returned: when diff mode is on
  type: list
  elements: dict
  sample:
    - before: "spec:\n  template:\n    spec:\n      infrastructureRef:\n        name: md-0-v2\n"
      after: "spec:\n  template:\n    spec:\n      infrastructureRef:\n        name: md-0-v1\n"
      before_header: machinedeployment/fleet-a/prod-eu-1-md-0 (before)
      after_header: machinedeployment/fleet-a/prod-eu-1-md-0 (after)
progress:
  description: Timestamped lines, one per change of an object's rollout state seen while waiting.
  returned: always
  type: list
  elements: str
  sample:
    - "2026-03-01T12:04:41Z machinedeployment/fleet-a/md-0 successfully rolled out [desired 3, current 3,
      up-to-date 3, ready 3, available 3]"
server_time:
  description:
    - The API server's clock when the task ended (UTC), read from the C(Date) headers of its answers; null when
      no answer came. The C(capi.rollout.hardware_refresh) role judges the maintenance window by it, not by the
      Ansible host's clock.
  returned: always
  type: str
  sample: "2026-03-01T12:00:05Z"
api_requests:
  description: Number of HTTP requests this task sent to the API server (watches count once per stream).
  returned: always
  type: int
  sample: 8
problems:
  description: The options refused before any request, one entry each (C(option), C(value), C(reason), C(msg)); the first one's reason is the task's C(reason).
  returned: when an option is refused before any request (the input gate)
  type: list
  elements: dict
'''

from ansible_collections.capi.rollout.plugins.module_utils.flows import args
from ansible_collections.capi.rollout.plugins.module_utils.flows.run import RolloutModule
from ansible_collections.capi.rollout.plugins.module_utils.flows import undo
from ansible_collections.capi.rollout.plugins.module_utils.flows.change import run_change


def main():
    module = RolloutModule(
        argument_spec=args.argument_spec(
            args.AUTH_ARG_SPEC, args.TARGET_ARG_SPEC, args.WAIT_ARG_SPEC, args.FIELD_OWNERS_ARG_SPEC,
            to_revision={"type": "int", "default": 0},
            undo_rollout_id={"type": "str"},
            force={"type": "bool", "default": False},
            rollout_id={"type": "str"},
            reason={"type": "str"},
            history_limit={"type": "int", "default": 10},
        ),
        mutually_exclusive=args.TARGET_MUTUALLY_EXCLUSIVE,
        required_one_of=args.TARGET_REQUIRED_ONE_OF,
        supports_check_mode=True,
    )
    run_change(module, undo)


if __name__ == "__main__":
    main()
