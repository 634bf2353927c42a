#!/usr/bin/python
# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: capi_rollout_restart
short_description: Restart (roll) the Machines of Cluster API MachineDeployments and KubeadmControlPlanes
version_added: 0.1.0
description:
  - Triggers a rollout now, or schedules one, by setting C(spec.rolloutAfter) (v1beta1) or C(spec.rollout.after)
    (v1beta2), like C(clusterctl alpha rollout restart). Cluster API then replaces every Machine created before
    that time, following the object's rollout strategy. Times are written in UTC.
  - Optionally switches the infrastructure machine template in the same change (O(infrastructure_ref)), for
    example to roll a pool onto new hardware or a new image. The template must exist.
  - O(switches) switches several objects in one task, each to a template of its own (for example the clones
    M(capi.rollout.capi_machine_template) made for each MachineDeployment), with a constant number of API requests
    besides one patch per object.
  - Refuses, with nothing written, when the rollout would not happen or would surprise - a paused
    MachineDeployment (C(spec.paused)), the C(cluster.x-k8s.io/paused) annotation, a paused Cluster, a rollout
    already scheduled for the future (unless O(force=true)), or a switch to a named template (O(infrastructure_ref))
    of an object managed by a Cluster topology (ClusterClass).
  - Objects a Cluster topology (ClusterClass) manages are changed through their Cluster (docs/clusterclass.md). A
    restart writes C(spec.topology.controlPlane.rollout.after) / C(spec.topology.workers.machineDeployments[].rollout.after)
    on Cluster API v1.13+ (told by a server-side dry run of the Cluster, whose answer keeps the field only there), and
    the object's own field before v1.13, where the topology has no such field and does not own the object's (the
    message says so). O(switches[].template) of such a MachineDeployment sets a per-MachineDeployment
    C(variables.overrides) entry of the variable its ClusterClass patches onto each overridden field; the topology
    controller generates the new template and rolls that MachineDeployment alone. For a KubeadmControlPlane it sets
    the Cluster-level C(spec.topology.variables) value of a variable the class patches onto the control plane's
    machine template only (one also patched onto worker templates fails with RV(reason)=V(topology_shared_variable),
    naming their worker classes). When the class maps not every field of a MachineDeployment's overrides, its
    worker C(class) (C(spec.topology.workers.machineDeployments[].class)) is switched to another worker class of the
    same ClusterClass whose infrastructure template carries every value and onto which no class variable patches
    those fields (its own class when it does already; else the first by name, the others named in the message);
    this reads the worker classes' templates (one GET each). When no worker class carries the values, a clone of
    the ClusterClass is created (same namespace and spec, named C(<class>-<hash of its spec>)) whose worker class of
    the MachineDeployment takes a clone of its infrastructure template with the values (C(<template>-<hash>)), and
    the Cluster is rebased onto it (C(spec.topology.class) / C(spec.topology.classRef.name)) - every
    MachineDeployment of that worker class of the Cluster rolls with it, and the message names them (select them
    together - one Cluster write for all). The creates are sent as server-side dry runs before any write. Only when
    the MachineDeployment's own class's template is missing does it fail with RV(reason)=V(topology_no_variable),
    naming each worker class and why it does not fit. A KubeadmControlPlane no control-plane variable covers is
    rebased the same way onto a clone whose control plane takes a clone of its machine infrastructure template
    (only the control plane rolls). The
    Cluster write is in RV(objects[].owner); the object's own patch only records it (history entry C(topology)).
  - When several objects are selected, all are checked first; one refusal fails the task before any change.
  - Without O(rollout_id) every run restarts (like C(kubectl rollout restart)); with O(rollout_id) the restart is
    recorded on the object (annotation C(rollout.capi-rollout.dev/last), outside C(spec.template)) and a later
    run with the same id changes nothing.
  - Every restart and template switch is also recorded in the object's rollout history (annotation
    C(rollout.capi-rollout.dev/history), outside C(spec.template)) in the same patch - the revision it produces,
    the time, the template it replaced and the one it wrote, O(rollout_id), O(reason) and who made it. The
    history is shown by M(capi.rollout.capi_rollout_info) with O(capi.rollout.capi_rollout_info#module:history=true)
    and lets M(capi.rollout.capi_rollout_undo) go back to a template after Cluster API deleted its MachineSet.
  - A change of a MachineDeployment also keeps, in the history entry of the revision it leaves, how that revision's
    Machines changed (replaced / updated in place, counted from its MachineSet's Machines), so the history still says
    it after Cluster API deleted the MachineSet; this lists the namespace's MachineSets and Machines once per task,
    only when something is written and that entry has no counts yet.
  - The recorded C(actor) is the Kubernetes user when the credential names it (O(impersonate_user), a client
    certificate, a service account token), else the AWX/AAP job (C(JOB_ID), C(AWX_HOST)), else C(user@host).
author:
  - capi.rollout contributors (@capi-rollout)
options:
  after:
    description:
      - When the rollout should happen. Omitted or V(now) rolls now.
      - Every time is the management cluster's (the C(Date) header of the API server's responses), never the
        Ansible host's clock. V(now) writes one whole second before the server's current second, so that the new
        MachineSet is always created after it (Cluster API v1.10.0-v1.12.3 never finish a rollout whose MachineSet
        was created in the trigger's second, upstream bug kubernetes-sigs/cluster-api#13182).
      - Cluster API keeps a MachineSet (or control plane Machine) created at or after the trigger, so V(now) first
        lists the MachineSets (MachineDeployments) or control plane Machines (KubeadmControlPlanes) of the namespace,
        once per task and only when it writes, and when the newest one the object owns was created less than 2 s
        before, waits (by the server's clock, at most 3 s, in check mode too) until the trigger is later than it. A
        trigger that would still replace nothing is not written and the task reports V(unchanged) with a warning.
      - An RFC 3339 time, for example V(2026-03-01T22:00:00Z) or V(2026-03-01T23:00:00+01:00), schedules the
        rollout; Cluster API starts it at its first reconcile after that time (the next event or its periodic resync,
        up to 10 minutes later by default).
      - A time in the past replaces the Machines created before it. When none was (the current MachineSet or every
        control plane Machine is newer), nothing is written and the task reports V(unchanged) with a warning.
      - A scheduled time only triggers, it never delays; any template change rolls immediately.
    type: str
  force:
    description:
      - Replace a rollout that is already scheduled for the future. Without it such an object fails the task.
    type: bool
    default: false
  infrastructure_ref:
    description:
      - Switch the infrastructure machine template (C(spec.template.spec.infrastructureRef) of a MachineDeployment,
        C(spec.machineTemplate.infrastructureRef) / C(spec.machineTemplate.spec.infrastructureRef) of a
        KubeadmControlPlane) in the same change. The template change alone triggers the rollout; O(after) is
        only written when given.
      - The template is checked to exist in O(namespace) before anything is changed.
      - Refused for objects managed by a Cluster topology; change the template in the Cluster topology or
        ClusterClass instead.
      - The same template for every selected object; O(switches) gives each object its own.
      - Mutually exclusive with O(switches).
    type: dict
    suboptions:
      name:
        description: Name of the template.
        type: str
        required: true
      kind:
        description: Kind of the template; defaults to the kind of the current template.
        type: str
      api_group:
        description: API group of the template; defaults to the group of the current template.
        type: str
      api_version:
        description:
          - Full C(group/version) to write into a v1beta1 reference. Only needed when the API group changes on a
            v1beta1 object; the current version is kept otherwise. Ignored for v1beta2 objects.
        type: str
  history_limit:
    description:
      - How many entries the object's rollout history keeps; the oldest are dropped when a new one is written.
      - The history never exceeds 16 KiB, whatever this says (Kubernetes allows 256 KiB for all annotations
        of an object together, and Cluster API copies them to MachineSets). From V(1) to V(100).
    type: int
    default: 10
  switches:
    description:
      - Select objects by name and switch each to its own infrastructure machine template, in one task. Each entry
        works like O(name) with O(infrastructure_ref) does for one object; everything else (O(after), O(force),
        O(rollout_id), O(reason), O(wait), check mode, the history record) applies to every object, as with O(names).
      - Every named object must exist in O(namespace) (of O(kind)); a missing one fails the task before anything is
        changed. An object named twice fails the task before any request. An empty list selects nothing and fails.
      - All objects are planned and every template is checked to exist before the first write; one refusal (a
        missing template, a topology-managed or paused object, ...) fails the task with nothing written. Several
        templates are checked with one list request per template kind.
      - With O(rollout_id), a re-run changes only the objects that do not record it yet.
      - An entry may give, instead of the template, the O(switches[].template) to make for the object (a clone of
        its current template with new settings, made as M(capi.rollout.capi_machine_template) with C(objects) makes
        it). Every clone is read, planned and sent as a server-side dry run while the objects are planned; the
        templates are created only after every check of every object passed, just before the first patch, and the
        objects are switched to them. A template that cannot be made fails the task with nothing written
        (RV(reason)=V(clone_refused)); a create that fails switches no object (V(create_failed); a re-run reuses
        the templates already made). The clones' results are in RV(clones).
      - Counts as the selection; mutually exclusive with O(name), O(names), O(cluster_name), O(label_selectors)
        and O(infrastructure_ref).
    type: list
    elements: dict
    suboptions:
      name:
        description: Name of the MachineDeployment or KubeadmControlPlane (O(kind)) in O(namespace).
        type: str
        required: true
      template:
        description:
          - The template to make for this object and switch it to, as one entry of the C(objects) of
            M(capi.rollout.capi_machine_template) (without its C(kind), C(namespace) and C(name), which are this
            object's). Its name is the object's current template's with a hash of the content, so a re-run finds it.
          - Exactly one of O(switches[].template) and O(switches[].infrastructure_ref).
        type: dict
        suboptions:
          overrides:
            description:
              - Merged into C(spec.template.spec) of the clone (the new image or hardware).
              - For a MachineDeployment a Cluster topology manages, no clone is made; each field becomes a
                per-MachineDeployment variable override in the Cluster topology, or the MachineDeployment is switched
                to a worker class whose template has the values (see the description).
            type: dict
          labels:
            description: Labels added to the clone (a null value removes a copied one).
            type: dict
          annotations:
            description: Annotations added to the clone (a null value removes a copied one).
            type: dict
      infrastructure_ref:
        description:
          - The template this object is switched to, as in O(infrastructure_ref).
          - Exactly one of O(switches[].template) and O(switches[].infrastructure_ref).
        type: dict
        suboptions:
          name:
            description: Name of the template.
            type: str
            required: true
          kind:
            description: Kind of the template; defaults to the kind of the object's current template.
            type: str
          api_group:
            description: API group of the template; defaults to the group of the object's current template.
            type: str
          api_version:
            description:
              - Full C(group/version) to write into a v1beta1 reference. Only needed when the API group changes on
                a v1beta1 object; the current version is kept otherwise. Ignored for v1beta2 objects.
            type: str
  in_place:
    description:
      - What a template switch (O(infrastructure_ref), O(switches)) may do on a management cluster where CAPI can
        update Machines in place (CAPI v1.12+ with the C(InPlaceUpdates) feature gate and an update extension, that
        is an ExtensionConfig listing an C(UpdateMachine) handler, found with one LIST of extensionconfigs on v1beta2
        clusters; elsewhere nothing changes).
      - V(replace) writes the rollout trigger (C(spec.rollout.after), now unless O(after) says otherwise) in the same
        patch as the switch, so every Machine is replaced (new hardware), because CAPI never updates in place a
        MachineSet created before an expired trigger.
      - For an object a Cluster topology manages (O(switches[].template) through the Cluster), V(replace) writes the
        trigger with the topology change, in the same Cluster write (its topology C(rollout.after)) on CAPI v1.13+, on
        the object's own C(spec.rollout.after) before, which the topology does not own there.
      - V(allow) lets CAPI move Machines to the new template and update them in place; RV(objects[].in_place) says
        so, and the wait counts the updates in place until they end.
    type: str
    choices: [replace, allow]
    default: replace
  drain_timeout:
    description:
      - Seconds set as the node drain timeout of each MachineDeployment this task changes (1-86400; v1beta1
        C(spec.template.spec.nodeDrainTimeout), v1beta2 C(spec.template.spec.deletion.nodeDrainTimeoutSeconds)), in
        the same patch as the switch or restart. After it, CAPI deletes a Machine whose drain is not done (a
        PodDisruptionBudget that never allows the eviction). An in-place field, so it reaches the Machines without a
        rollout. A MachineDeployment passes it to its newest MachineSet only on CAPI v1.10/v1.11 (to every one from
        v1.12), so M(capi.rollout.capi_rollout_wait) with
        O(capi.rollout.capi_rollout_wait#module:restore_drain_timeout=true) gives it to the older MachineSets that
        still have Machines.
      - The value the field had is recorded on the object (annotation C(rollout.capi-rollout.dev/drain-timeout)), kept
        by later writes of the same kind, and put back by M(capi.rollout.capi_rollout_wait) with
        O(capi.rollout.capi_rollout_wait#module:restore_drain_timeout=true).
      - Not set on a MachineDeployment a Cluster topology manages (a warning says so), nor on control planes.
      - Unset (the default) leaves the field as it is.
    type: int
  rollout_id:
    description:
      - Identifier of this rollout, for example a change ticket (1-128 letters, digits, C(.), C(_), C(:), C(/) or C(-),
        starting with a letter or digit). Recorded on the object with the time and
        O(reason); when the object already records this id, nothing is changed (the task is idempotent).
    type: str
  reason:
    description:
      - Why the rollout is done, recorded on the object together with O(rollout_id).
    type: str
notes:
  - In check mode nothing is written and O(wait) is skipped.
extends_documentation_fragment:
  - capi.rollout.connection
  - capi.rollout.objects
  - capi.rollout.objects.wait
  - capi.rollout.objects.attributes
  - capi.rollout.field_owners
  - capi.rollout.lease
attributes:
  check_mode:
    description: Every patch is sent as a server-side dry run (C(dryRun=All)), so RBAC, admission and validation
      answer as in a real run and nothing is stored; RV(objects) says what would happen, including the patch.
    support: full
  diff_mode:
    description:
      - Shows before and after of exactly the fields that would change, as YAML.
      - For an object a Cluster topology manages, the Cluster topology change, then the fields of the infrastructure
        template the topology will generate from it (a variable override or a worker class switch; one GET of the
        object's current template with C(--diff) only), or the new template of a ClusterClass clone.
    support: full
seealso:
  - module: capi.rollout.capi_rollout_info
  - module: capi.rollout.capi_rollout_pause
  - module: capi.rollout.capi_rollout_undo
  - name: clusterctl alpha rollout
    description: The command this module follows.
    link: https://cluster-api.sigs.k8s.io/clusterctl/commands/alpha-rollout
'''

EXAMPLES = r'''
- name: Restart one MachineDeployment now and wait for the new Machines
  capi.rollout.capi_rollout_restart:
    kubeconfig: ~/.kube/mgmt.yaml
    namespace: fleet-a
    name: prod-eu-1-md-0
    wait: true
    wait_timeout: 3600
    stall_timeout: 900

- name: Restart the control plane of a cluster
  capi.rollout.capi_rollout_restart:
    kind: KubeadmControlPlane
    namespace: fleet-a
    name: prod-eu-1-control-plane

- name: Schedule a rollout for the maintenance window (UTC is written)
  capi.rollout.capi_rollout_restart:
    namespace: fleet-a
    names:
      - prod-eu-1-md-0
      - prod-eu-1-md-1
    after: "2026-03-01T22:00:00Z"

- name: Move a scheduled rollout to another time
  capi.rollout.capi_rollout_restart:
    namespace: fleet-a
    name: prod-eu-1-md-0
    after: "2026-03-02T22:00:00Z"
    force: true

- name: Roll a pool onto a new machine template (image / hardware) and wait
  capi.rollout.capi_rollout_restart:
    namespace: fleet-a
    name: prod-eu-1-md-0
    infrastructure_ref:
      name: prod-eu-1-md-0-2026-03
    wait: true

- name: Roll two pools onto new hardware, each onto its own template, in one task (re-runs change nothing)
  capi.rollout.capi_rollout_restart:
    namespace: fleet-a
    switches:
      - name: prod-eu-1-md-0
        infrastructure_ref:
          name: prod-eu-1-md-0-gen2
      - name: prod-eu-1-md-1
        infrastructure_ref:
          name: prod-eu-1-md-1-gen2
    rollout_id: CHG-4712
    reason: hardware refresh
    wait: true

- name: Make a new template for each pool (its current one with a new image) and roll the pools onto them, in one task
  capi.rollout.capi_rollout_restart:
    namespace: fleet-a
    switches:
      - name: prod-eu-1-md-0
        template:
          overrides:
            ami:
              id: ami-0a1b2c3d4e5f
      - name: prod-eu-1-md-1
        template:
          overrides:
            ami:
              id: ami-0a1b2c3d4e5f
            instanceType: m7i.2xlarge
    rollout_id: CHG-4713
    reason: hardware refresh
  register: refresh

- name: Show the templates it made
  ansible.builtin.debug:
    msg: "{{ refresh.clones | map(attribute='infrastructure_ref.name') | list }}"

- name: Restart every MachineDeployment of one cluster once per change ticket (re-runs change nothing)
  capi.rollout.capi_rollout_restart:
    namespace: fleet-a
    cluster_name: prod-eu-1
    rollout_id: CHG-4711
    reason: kernel CVE-2026-0001

- name: Restart all GPU pools of the namespace, in one task
  capi.rollout.capi_rollout_restart:
    namespace: fleet-a
    label_selectors:
      - pool=gpu

- name: Dry run - what would change, with the diff
  capi.rollout.capi_rollout_restart:
    namespace: fleet-a
    name: prod-eu-1-md-0
    infrastructure_ref:
      name: prod-eu-1-md-0-2026-03
  check_mode: true
  diff: true
  register: plan

- name: Show the patch that would be sent
  ansible.builtin.debug:
    var: plan.objects[0].patch
'''

RETURN = r'''
changed:
  description: Whether any object was (in check mode, would be) changed, or a template made for O(switches[].template).
  returned: always
  type: bool
  sample: true
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
      description: Object kind.
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
      description: V(restarted) (rollout triggered now, or template switched), V(scheduled) (a future trigger
        was set) or V(unchanged).
      type: str
      sample: restarted
    changed:
      description: Whether this object was (would be) changed.
      type: bool
      sample: true
    message:
      description: What was done, or why nothing was done.
      type: str
      sample: "machinedeployment/fleet-a/prod-eu-1-md-0: rollout triggered (spec.rollout.after=2026-03-01T12:00:00Z)"
    patch:
      description:
        - The JSON patch (RFC 6902, C(application/json-patch+json)) sent, exactly (in check mode, that would be sent
          as a server-side dry run); null when nothing changes.
        - C(test) operations come first, one per field the plan relied on, with the value that was read (the
          trigger, the infrastructure template reference, the version, whether it is paused, the last-rollout and
          history annotations); an absent field is tested with value null at its first missing member (the API
          server passes such a test when the member is absent). When one fails (someone changed that field
          meanwhile), the object is read again, planned again and the new patch sent, up to 5 times. Other changes
          of the object (its status, other annotations, the resourceVersion) do not fail it.
        - Then the C(add), C(replace) and C(remove) operations of the change. C(changes) and the diff show the same
          change readably.
      type: list
      elements: dict
      sample: [{op: test, path: /metadata/annotations/cluster.x-k8s.io~1paused, value: null},
               {op: test, path: /spec/rollout, value: null},
               {op: test, path: /spec/template/spec/version, value: v1.30.4},
               {op: add, path: /spec/rollout, value: {after: "2026-03-01T12:00:00Z"}},
               {op: add, path: /metadata/annotations/rollout.capi-rollout.dev~1last,
                value: '{"action":"restarted","at":"2026-03-01T12:00:00Z"}'}]
    patch_type:
      description: Always V(json) (C(application/json-patch+json)).
      type: str
      sample: json
    changes:
      description: Each changed field with its value before and after.
      type: list
      elements: dict
      sample: [{path: spec.rollout.after, before: null, after: "2026-03-01T12:00:00Z"}]
    revision_before:
      description: The MachineDeployment's revision before the change (null for control planes).
      type: int
      sample: 3
    history_revision:
      description:
        - The revision recorded in the history for this change (the revision the rollout produces); null when
          nothing changed.
      type: int
      sample: 4
    rollout_after:
      description: The rollout trigger time after the change (unchanged value when nothing changed).
      type: str
      sample: "2026-03-01T12:00:00Z"
    in_place:
      description:
        - For a template switch on a management cluster where CAPI can update Machines in place, O(in_place) as
          applied (V(replace) wrote the trigger with the switch, V(allow) did not); null elsewhere.
      type: str
      sample: replace
    machines:
      description:
        - For such a switch, after O(wait), how many of the object's Machines were replaced (created after the task
          planned the switch) and how many were updated in place (kept), read from the Machines with one list of the
          namespace.
      returned: when O(wait=true) and RV(objects[].in_place) is set and the object changed
      type: dict
      sample: {replaced: 0, updated_in_place: 3}
    warnings:
      description: Warnings about this object (also shown as task warnings).
      type: list
      elements: str
      sample: []
    owner:
      description:
        - The write of the Cluster whose topology decides this object's template (the object's own RV(objects[].patch)
          then only records it, or is null without a record). C(ref) the Cluster, C(patch) the JSON patch sent
          (a C(test) that the topology entry at that index is still this object's, then the field's), C(changes)
          (paths such as C(spec.topology.workers.machineDeployments[md-0].rollout.after)) and C(message).
        - The Cluster writes of several objects of one Cluster in one call are sent as one JSON patch (each object's
          C(patch) here is its part).
        - C(check_mode_note), only in check mode for a rebase onto a ClusterClass clone that does not exist yet - why
          that Cluster write was not sent as a dry run (CAPI's Cluster webhook refuses a class it cannot read; the
          creates of the clone and its template were dry runs).
      returned: when a Cluster topology was (would be) written for this object
      type: dict
      sample: {ref: cluster/fleet-a/prod-eu-1, message: "cluster/fleet-a/prod-eu-1 spec.topology.controlPlane.rollout.after=2026-03-01T12:00:00Z"}
    hold:
      description:
        - What a wait holds this object to after new hardware through its Cluster topology (the template the topology
          generates gets a name only then) - C(overrides) (the per-MD variable overrides written), C(class) (the
          worker class switched to, only for a class switch), C(cluster_class) (the ClusterClass clone the Cluster
          was rebased onto, only for a rebase) and C(template) (the template values asked for). It is
          the O(capi.rollout.capi_rollout_wait#module:objects[].topology) of that object; O(wait) holds it to them too
          (done only on a template carrying the values, drift when the Cluster topology no longer holds the overrides
          or the class).
      returned: when the object was (would be) switched through its Cluster topology
      type: dict
      sample: {overrides: {workerImage: "kindest/node:v1.31.0"}, template: {customImage: "kindest/node:v1.31.0"}}
    status:
      description: The final state after O(wait), as in RV(capi.rollout.capi_rollout_info#module:resources).
      returned: when O(wait=true)
      type: dict
      sample: {name: prod-eu-1-md-0, rollout: {complete: true}, replicas: {desired: 3, up_to_date: 3}}
reason:
  description:
    - Why the task failed, machine-readable - for example V(paused), V(topology_owned), V(topology_no_variable),
      V(topology_shared_variable), V(topology_entry_missing), V(template_not_found),
      V(not_found), V(invalid_selection), V(lock_lost), V(forbidden), V(invalid_after),
      V(invalid_infrastructure_ref) and V(not_a_template) (refused before any request, with RV(api_requests=0), when
      the option alone is wrong),
      and for O(switches[].template) V(clone_refused)
      (a template could not be made; nothing was written) or V(create_failed) (no object was switched).
  returned: on failure
  type: str
  sample: clone_refused
clones:
  description:
    - The templates made for O(switches[].template) entries, one entry per such object in the given order, as the
      C(results) of M(capi.rollout.capi_machine_template) with C(objects). Also returned when the task fails on them.
  returned: when O(switches) has a O(switches[].template) and its clones were checked
  type: list
  elements: dict
  sample:
    - ref: machinedeployment/fleet-a/prod-eu-1-md-0
      failed: false
      changed: true
      created: true
      message: awsmachinetemplate/fleet-a/prod-eu-1-md-0-3f9a61c2 created from awsmachinetemplate/fleet-a/prod-eu-1-md-0
      infrastructure_ref: {api_group: infrastructure.cluster.x-k8s.io, kind: AWSMachineTemplate, name: prod-eu-1-md-0-3f9a61c2}
diff:
  description:
    - Before and after of the changed fields of each changed object, as YAML text; first each template made for
      O(switches[].template).
  returned: when diff mode is on
  type: list
  elements: dict
  sample:
    - before: "spec:\n  rollout:\n    after: \"2026-02-01T10:00:00Z\"\n"
      after: "spec:\n  rollout:\n    after: \"2026-03-01T12:00:00Z\"\n"
      before_header: machinedeployment/fleet-a/prod-eu-1-md-0 (before)
      after_header: machinedeployment/fleet-a/prod-eu-1-md-0 (after)
progress:
  description: Timestamped lines, one per change of an object's rollout state seen while waiting.
  returned: always
  type: list
  elements: str
  sample:
    - "2026-03-01T12:00:05Z Waiting for machinedeployment/fleet-a/md-0 rollout to finish: 1 out of 3 new replicas
      have been updated... [desired 3, current 4, up-to-date 1, ready 3, available 3]"
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
  sample: 4
problems:
  description: The options refused before any request, one entry each (C(option), C(value), C(reason), C(msg)); the first one's reason is the task's C(reason).
  returned: when an option is refused before any request (the input gate)
  type: list
  elements: dict
'''

from ansible_collections.capi.rollout.plugins.module_utils.flows import args
from ansible_collections.capi.rollout.plugins.module_utils.flows.run import RolloutModule
from ansible_collections.capi.rollout.plugins.module_utils.flows import restart
from ansible_collections.capi.rollout.plugins.module_utils.flows.change import run_change


def main():
    module = RolloutModule(
        argument_spec=args.argument_spec(
            args.AUTH_ARG_SPEC, args.TARGET_ARG_SPEC, args.WAIT_ARG_SPEC, args.FIELD_OWNERS_ARG_SPEC,
            after={"type": "str"},
            force={"type": "bool", "default": False},
            infrastructure_ref={"type": "dict", "options": args.INFRASTRUCTURE_REF_OPTIONS},
            switches=args.SWITCHES_ARG_SPEC,
            in_place={"type": "str", "choices": ["replace", "allow"], "default": "replace"},
            drain_timeout={"type": "int"},
            rollout_id={"type": "str"},
            reason={"type": "str"},
            history_limit={"type": "int", "default": 10},
            lease={"type": "dict", "options": args.LEASE_ARG_SPEC},
        ),
        mutually_exclusive=args.RESTART_MUTUALLY_EXCLUSIVE,
        required_one_of=args.RESTART_REQUIRED_ONE_OF,
        supports_check_mode=True,
    )
    run_change(module, restart)


if __name__ == "__main__":
    main()
