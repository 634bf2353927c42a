#!/usr/bin/python
# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: capi_rollout_info
short_description: Show the rollout state of Cluster API MachineDeployments and KubeadmControlPlanes
version_added: 0.1.0
description:
  - Reads MachineDeployments or KubeadmControlPlanes of a Cluster API management cluster and returns, for each,
    its replicas, whether its rollout is complete (and if not, what it waits for), a scheduled rollout trigger,
    its machine template, revision and conditions.
  - Optionally returns the MachineSets (revisions) and Machines each object owns.
  - With O(history=true), returns each object's rollout history, newest revision first, like
    C(kubectl rollout history) - merged from the MachineSets still in the cluster and the history record
    this collection writes on the object with every template change. O(revision) shows one revision in full.
  - Works with Cluster API v1beta1 (CAPI up to v1.10) and v1beta2 (CAPI v1.11 and later) objects; the served
    version is found with one discovery request, v1beta2 is used when served.
  - Without O(name), O(names), O(cluster_name) and O(label_selectors) every object of O(kind) in O(namespace)
    is returned. However many objects are selected, the module makes a constant number of API requests (one
    discovery request, one list per kind read, one for the Clusters).
  - Never changes anything (always C(changed=false)).
author:
  - capi.rollout contributors (@capi-rollout)
options:
  history:
    description:
      - Also return the rollout history of each object (RV(resources[].history)), newest revision first.
      - A revision is known from a MachineSet that still has it (also through its
        C(machinedeployment.clusters.x-k8s.io/revision-history)) and from the history record
        (annotation C(rollout.capi-rollout.dev/history)) that C(capi_rollout_restart) and C(capi_rollout_undo) write
        with every template change. When both know a revision, the MachineSet wins.
      - Cluster API v1.11 and later delete old MachineSets once a rollout completes, so there older revisions
        are known only from the record. A KubeadmControlPlane has only the record.
      - Each revision says what changed from the revision before it (RV(resources[].history[].changes)) - the
        template identity and, when a template reference changed, the specs of both templates, field by field.
      - Each revision of a MachineDeployment says how its Machines changed (RV(resources[].history[].machine_counts)),
        counted from the Machines while its MachineSet exists, else as recorded when it was left.
      - Costs two more list requests (the MachineSets and, for MachineDeployments, the Machines of the namespace) and one list request per template kind the
        revisions reference (the infrastructure and the bootstrap config templates), whatever the number of objects.
        When the templates cannot be read (for example C(list) is not allowed), the history is returned without
        their spec changes and a warning says so.
    type: bool
    default: false
  revision:
    description:
      - Show only this revision, in full (RV(resources[].history) then has one element), like
        C(kubectl rollout history --revision). Implies O(history=true).
      - A revision that is not known fails the task; the message lists the revisions that exist.
    type: int
  machine_sets:
    description:
      - Also return the MachineSets each MachineDeployment owns (RV(resources[].machine_sets)), newest revision first.
      - Ignored for KubeadmControlPlanes, which own Machines directly.
    type: bool
    default: false
  machines:
    description:
      - Also return the Machines each object owns (RV(resources[].machines)).
    type: bool
    default: false
extends_documentation_fragment:
  - capi.rollout.connection
  - capi.rollout.objects
  - capi.rollout.objects.wait
  - capi.rollout.objects.attributes
attributes:
  check_mode:
    description: Read-only; runs normally in check mode.
    support: full
  diff_mode:
    description: Read-only; nothing to show.
    support: N/A
seealso:
  - module: capi.rollout.capi_rollout_restart
  - module: capi.rollout.capi_rollout_pause
  - module: capi.rollout.capi_rollout_undo
  - name: Cluster API book, MachineDeployment rollouts
    description: How rollouts, rolloutAfter and paused work.
    link: https://cluster-api.sigs.k8s.io/tasks/upgrading-clusters
'''

EXAMPLES = r'''
- name: Rollout state of every MachineDeployment in a namespace
  capi.rollout.capi_rollout_info:
    kubeconfig: ~/.kube/mgmt.yaml
    namespace: fleet-a
  register: mds

- name: Names of MachineDeployments whose rollout is not complete
  ansible.builtin.debug:
    msg: "{{ mds.resources | rejectattr('rollout.complete') | map(attribute='name') | list }}"

- name: One control plane with its Machines
  capi.rollout.capi_rollout_info:
    kind: KubeadmControlPlane
    namespace: fleet-a
    name: prod-eu-1-control-plane
    machines: true

- name: Everything of one workload cluster, with MachineSets and Machines
  capi.rollout.capi_rollout_info:
    namespace: fleet-a
    cluster_name: prod-eu-1
    machine_sets: true
    machines: true

- name: Rollout history of one MachineDeployment, newest revision first
  capi.rollout.capi_rollout_info:
    namespace: fleet-a
    name: prod-eu-1-md-0
    history: true
  register: info

- name: Revisions with their template and reason
  ansible.builtin.debug:
    msg: "{{ info.resources[0].history | map(attribute='revision') | list }}"

- name: One revision in full (the MachineSet template when the MachineSet still exists)
  capi.rollout.capi_rollout_info:
    namespace: fleet-a
    name: prod-eu-1-md-0
    revision: 3

- name: Wait until the rollouts of all GPU pools have finished
  capi.rollout.capi_rollout_info:
    namespace: fleet-a
    label_selectors:
      - pool=gpu
    wait: true
    wait_timeout: 3600
    stall_timeout: 900

- name: Connection from K8S_AUTH_* environment variables (as AWX/AAP Kubernetes credentials set them)
  capi.rollout.capi_rollout_info:
    namespace: fleet-a
  environment:
    K8S_AUTH_HOST: https://mgmt.example.com:6443
    K8S_AUTH_API_KEY: "{{ mgmt_token }}"
    K8S_AUTH_SSL_CA_CERT: /etc/ssl/mgmt-ca.crt

- name: Read as another user (impersonation), from a kubeconfig context
  capi.rollout.capi_rollout_info:
    kubeconfig: ~/.kube/config
    context: mgmt-admin
    impersonate_user: rollout-operator
    namespace: fleet-a

- name: Connection settings once for every capi.rollout module
  module_defaults:
    group/capi.rollout.rollout:
      host: https://mgmt.example.com:6443
      api_key: "{{ mgmt_token }}"
      ca_cert: /etc/ssl/mgmt-ca.crt
  block:
    - name: Read through the defaults
      capi.rollout.capi_rollout_info:
        namespace: fleet-a
'''

RETURN = r'''
resources:
  description: One entry per selected object, sorted by name. After O(wait), the final state.
  returned: success
  type: list
  elements: dict
  contains:
    kind:
      description: V(MachineDeployment) or V(KubeadmControlPlane).
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
    ref:
      description: The reference used in messages, C(kind/namespace/name) with a lower-case kind.
      type: str
      sample: machinedeployment/fleet-a/prod-eu-1-md-0
    api_version:
      description: API version the object was read with.
      type: str
      sample: cluster.x-k8s.io/v1beta2
    cluster:
      description: Name of the CAPI Cluster the object belongs to.
      type: str
      sample: prod-eu-1
    paused:
      description:
        - Whether rollouts are paused, by C(spec.paused) (MachineDeployment), the C(cluster.x-k8s.io/paused)
          annotation or the Cluster's C(spec.paused).
      type: bool
      sample: false
    paused_reasons:
      description: Why the object is paused, one line per reason.
      type: list
      elements: str
      sample: ["spec.paused is true"]
    topology_owned:
      description: Whether the object is managed by a Cluster topology (ClusterClass).
      type: bool
      sample: false
    field_owners:
      description:
        - Who else owns the rollout-relevant fields (C(infrastructure_ref), C(bootstrap), C(version), C(paused),
          C(rollout_after)), by field; fields nobody else owns are left out. The rule per field is the one the writing
          modules' O(capi.rollout.capi_rollout_restart#module:field_owners) applies (docs/gitops.md).
        - Each owner - C(manager) (for example C(kustomize-controller), C(argocd), C(helm), C(capi-topology)),
          C(field) (its path), C(source) (C(managedFields (Apply)), or the label or annotation that names it),
          C(time) (of its managedFields entry, else null) and C(next_step) (where to change the field instead).
      type: dict
      sample: {infrastructure_ref: [{manager: kustomize-controller, field: spec.template.spec.infrastructureRef,
               source: managedFields (Apply), time: "2026-12-04T07:00:00Z", next_step: change it in Git}]}
    replicas:
      description: Replica counters.
      type: dict
      contains:
        desired:
          description: C(spec.replicas).
          type: int
        current:
          description: Machines that exist.
          type: int
        ready:
          description: Machines that are ready.
          type: int
        available:
          description: Machines that are available.
          type: int
        up_to_date:
          description: Machines that match the current template (v1beta1 objects of CAPI before v1.9 report updated replicas).
          type: int
      sample: {desired: 3, current: 3, ready: 3, available: 3, up_to_date: 3}
    rollout:
      description: Rollout state.
      type: dict
      contains:
        complete:
          description:
            - Whether the rollout is complete (observed, no trigger pending, all replicas up to date and available,
              a MachineSet with the current template holds them and no old MachineSet keeps replicas).
            - See the collection's C(docs/rollout-completion.md) for the rules per Cluster API release.
          type: bool
        message:
          description: What the rollout waits for, or that it finished (the wording of C(kubectl rollout status)).
          type: str
        waiting_for:
          description:
            - Machine-readable form of C(message), for example V(pending) (a scheduled trigger the API server's clock
              has not reached), V(updated_replicas), V(new_machine_set), V(old_replicas); null when complete.
          type: str
        warnings:
          description:
            - What to know although the state is decided, for example that the object is in the state of
              upstream bug kubernetes-sigs/cluster-api#13182 (complete, but CAPI v1.10-v1.12.3 never settle its counters).
            - Each is also shown as an Ansible warning.
          type: list
          elements: str
        after:
          description: The scheduled rollout trigger (C(spec.rolloutAfter) / C(spec.rollout.after)) in UTC, if any.
          type: str
        pending:
          description: Whether C(after) is in the future by the API server's clock, that is a scheduled rollout that has not fired yet.
          type: bool
        strategy:
          description: Rollout strategy (C(type), C(max_surge), C(max_unavailable)).
          type: dict
      sample:
        complete: false
        message: "Waiting for machinedeployment/fleet-a/prod-eu-1-md-0 rollout to finish: 1 out of 3 new replicas have been updated..."
        waiting_for: updated_replicas
        warnings: []
        after: "2026-03-01T12:00:00Z"
        pending: false
        strategy: {type: RollingUpdate, max_surge: 1, max_unavailable: 0}
    template:
      description: The machine template identity (the fields whose change rolls Machines).
      type: dict
      contains:
        version:
          description: Kubernetes version.
          type: str
        infrastructure_ref:
          description: Infrastructure machine template (C(api_group), C(kind), C(name)).
          type: dict
        bootstrap_ref:
          description: Bootstrap config template (C(api_group), C(kind), C(name)); null for control planes.
          type: dict
        failure_domain:
          description: Failure domain of the template, if any.
          type: str
      sample:
        version: v1.31.2
        infrastructure_ref: {api_group: infrastructure.cluster.x-k8s.io, kind: DockerMachineTemplate, name: md-0-v2}
        bootstrap_ref: {api_group: bootstrap.cluster.x-k8s.io, kind: KubeadmConfigTemplate, name: md-0}
        failure_domain: null
    revision:
      description: The MachineDeployment's revision annotation (null for control planes).
      type: int
      sample: 4
    generation:
      description: C(metadata.generation).
      type: int
      sample: 7
    observed_generation:
      description: C(status.observedGeneration).
      type: int
      sample: 7
    phase:
      description: C(status.phase), if the controller sets one.
      type: str
      sample: Running
    conditions:
      description: Conditions (the v1beta2 kind when the controller reports them, else the v1beta1 kind).
      type: list
      elements: dict
      sample: [{type: RollingOut, status: "False", reason: NotRollingOut, message: ""}]
    last_rollout:
      description: The last action of this collection recorded on the object (C(id), C(at), C(action), C(reason)).
      type: dict
      sample: {id: "change-4711", at: "2026-03-01T12:00:00Z", action: restarted, reason: "CVE-2026-0001"}
    machine_sets:
      description: MachineSets owned by the MachineDeployment, newest revision first.
      returned: when O(machine_sets=true)
      type: list
      elements: dict
      sample:
        - name: prod-eu-1-md-0-x7k2p
          revision: 4
          revision_history: []
          created: "2026-03-01T12:00:03Z"
          replicas: {desired: 3, current: 3, ready: 3, available: 3, up_to_date: 3}
          template: {version: v1.31.2, infrastructure_ref: {api_group: infrastructure.cluster.x-k8s.io,
                     kind: DockerMachineTemplate, name: md-0-v2}, bootstrap_ref: null, data_secret_name: null,
                     failure_domain: null}
    history:
      description:
        - The object's revisions, newest first (with O(revision), only that revision).
        - C(template) is the rollout identity of the revision (C(version), C(infrastructure_ref), C(bootstrap_ref),
          C(data_secret_name), C(failure_domain)).
        - C(source) is V(machineset) (known from a MachineSet only), V(record) (from the history record only) or
          V(both); C(current) marks the highest revision whose template equals the object's.
        - C(time) is the recorded time of the change, or the MachineSet's creation time. C(action), C(reason),
          C(rollout_id) and C(actor) come from the record; C(machine_set) and C(replicas) from the MachineSet.
        - C(reused_as) is set when the revision is only known through a MachineSet's revision history (the MachineSet
          now has that revision number). C(note) says when the record and the MachineSet disagree.
        - With O(revision), also C(record) (the raw record entry), C(replaced) (the template the change replaced)
          and, when a MachineSet has the revision, C(machine_set_template) (its complete C(spec.template) without
          the C(machine-template-hash) label), C(machine_set_created), C(machine_set_replicas) and
          C(revision_history).
        - C(previous_revision) is the next older revision known (null for the oldest), C(changes) what changed from it
          and C(change_notes) what could not be compared; see the keys below.
        - With O(revision), also C(template_specs) - the specs of the revision's templates as they are now.
        - C(cause) says what made the row (like C(kubectl rollout history)'s CHANGE-CAUSE) - V(template) (the template
          identity changed), V(trigger) (C(rollout.after) / C(rolloutAfter), a restart), V(in-place update) (a switch
          written with C(in_place=allow)), V(in-place field) (template labels, annotations, drain / volume detach /
          deletion timeouts, C(readinessGates), C(minReadySeconds), C(taints) - propagated to the Machines without a
          rollout), V(scale) (C(replicas)) or V(md-setting) (strategy, deletion order, remediation, C(paused), ...).
        - Rows with C(revision) null are changes that made no revision of this collection's record - made with
          C(kubectl), by another controller, or by this collection's pause - found by comparing the object with the
          snapshot kept with the newest record entry. They carry C(since_revision) (the record entry they came
          after), C(time) and C(actor) (the managedFields manager and time of the field's writer), C(cause),
          C(changes) (each field's C(path), C(before), C(after)), C(machine_set) (the MachineSet a template or trigger
          change made, while it exists), C(machines) (the effect on the Machines, in words) and C(note). C(source) is
          V(object) until the next change this collection records stores them with it (then V(record)), so they
          outlive the MachineSets CAPI v1.11+ deletes. See docs/history-and-undo.md.
        - With O(revision), also C(changed_since) - those rows made after the revision.
        - C(machine_counts) (C(replaced), C(updated_in_place); null when not known), C(machines_source) and C(machines)
          (in words) say how the revision's Machines changed; see RV(resources[].history[].machine_counts).
      returned: when O(history=true) or O(revision) is given
      type: list
      elements: dict
      sample:
        - revision: null
          since_revision: 4
          current: false
          source: object
          time: "2026-03-02T08:15:00Z"
          action: changed
          cause: in-place field
          actor: alice
          changes:
            - {path: spec.template.spec.deletion.nodeDrainTimeoutSeconds, before: 60, after: 300}
          machine_set: null
          machines: "none replaced: propagated to the Machines in place (CAPI v1.4+)"
          note: "changed outside since entry 4 (stored with the next recorded change)"
        - revision: 4
          current: true
          source: both
          template: {version: v1.30.4, infrastructure_ref: {api_group: infrastructure.cluster.x-k8s.io,
                     kind: DockerMachineTemplate, name: md-0-v1}, bootstrap_ref: {api_group: bootstrap.cluster.x-k8s.io,
                     kind: KubeadmConfigTemplate, name: md-0}, data_secret_name: null, failure_domain: null}
          time: "2026-03-01T12:00:00Z"
          action: rolled_back
          cause: template
          reason: bad image
          rollout_id: chg-981
          actor: "awx-job/4711 (awx.example.com)"
          machine_set: prod-eu-1-md-0-x7k2p
          replicas: 3
          machine_counts: {replaced: 3, updated_in_place: 0}
          machines_source: machines
          machines: 3 replaced
          previous_revision: 3
          changes:
            - {path: infrastructure_ref.name, before: md-0-v2, after: md-0-v1}
            - {path: infrastructure_template.spec.template.spec.customImage, before: "kindest/node:v1.30.4-gpu",
               after: "kindest/node:v1.30.4"}
          change_notes: []
        - revision: 3
          current: false
          source: record
          template: {version: v1.30.4, infrastructure_ref: {api_group: infrastructure.cluster.x-k8s.io,
                     kind: DockerMachineTemplate, name: md-0-v2}, bootstrap_ref: {api_group: bootstrap.cluster.x-k8s.io,
                     kind: KubeadmConfigTemplate, name: md-0}, data_secret_name: null, failure_domain: null}
          time: "2026-02-28T09:30:00Z"
          action: restarted
          cause: trigger
          reason: new image
          rollout_id: chg-977
          actor: "awx-job/4702 (awx.example.com)"
          machine_set: null
          replicas: null
          machine_counts: {replaced: 2, updated_in_place: 1}
          machines_source: record
          machines: 2 replaced, 1 updated in place
          previous_revision: 2
          changes: []
          change_notes: ["same template as revision 2 (a restart)"]
      contains:
        machine_counts:
          description:
            - How the Machines of the revision changed, C(replaced) and C(updated_in_place), MachineDeployments only.
            - While the revision's MachineSet exists, counted from the Machines it controls now (not deleting) - one
              created at or after the MachineSet is replaced, one created before it (moved in by CAPI v1.12+ in-place
              updates) or carrying CAPI's in-place markers is updated in place.
            - After that, the counts C(capi_rollout_restart) or C(capi_rollout_undo) kept in the record when they left
              the revision.
            - Null when not known (MachineSet gone and nothing kept, or a KubeadmControlPlane). See
              docs/history-and-undo.md "How the Machines changed".
          type: dict
        machines_source:
          description: Where RV(resources[].history[].machine_counts) come from, V(machines) (counted now) or V(record); null when not known.
          type: str
        machines:
          description:
            - How the Machines changed, in words - C(2 replaced, 1 updated in place), C(none), C(not known); for a change
              row (C(revision) null) the effect of the change.
          type: str
        previous_revision:
          description: The next older revision known, which RV(resources[].history[].changes) compares with; null for the oldest.
          type: int
        changes:
          description:
            - What differs from the previous revision, only the fields that changed, each C(path) (dotted), C(before) and
              C(after) (null when absent).
            - Paths of the template identity are C(version), C(infrastructure_ref.name) (C(.kind), C(.api_group)),
              C(bootstrap_ref.name), C(data_secret_name) and C(failure_domain).
            - When a template reference changed and both templates still exist, the difference of their specs follows,
              with paths under C(infrastructure_template.spec) and C(bootstrap_template.spec). Templates are compared as
              they are now; a template edited in place after the rollout is not seen as a change.
            - Empty for a restart that kept the template, and for the oldest revision.
          type: list
          elements: dict
        change_notes:
          description:
            - "What the changes could not say, one line each, for example V(DockerMachineTemplate md-0-v1 no longer exists),
              V(infrastructure_template specs not compared: DockerMachineTemplate md-0-v1 no longer exists),
              V(same template as revision 2 (a restart)) or V(oldest revision known: nothing to compare with)."
          type: list
          elements: str
        template_specs:
          description:
            - Only with O(revision). C(infrastructure_template) and C(bootstrap_template) of the revision, each with
              C(kind), C(name), C(exists) (null when not read) and C(spec) (the template's spec as it is now, null when
              it does not exist); null when the revision has no such reference.
          returned: when O(revision) is given
          type: dict
    machines:
      description: Machines owned by the object.
      returned: when O(machines=true)
      type: list
      elements: dict
      sample:
        - name: prod-eu-1-md-0-x7k2p-abcde
          phase: Running
          node: prod-eu-1-md-0-x7k2p-abcde
          version: v1.31.2
          machine_set: prod-eu-1-md-0-x7k2p
          up_to_date: true
          ready: true
          available: true
          deleting: false
          infrastructure_ref: {api_group: infrastructure.cluster.x-k8s.io, kind: DockerMachineTemplate, name: md-0-v2}
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
  sample: 3
problems:
  description: The options refused before any request, one entry each (C(option), C(value), C(reason), C(msg)); the first one's reason is the task's C(reason).
  returned: when an option is refused before any request (the input gate)
  type: list
  elements: dict
'''

from ansible_collections.capi.rollout.plugins.module_utils.flows import args
from ansible_collections.capi.rollout.plugins.module_utils.flows.run import RolloutModule
from ansible_collections.capi.rollout.plugins.module_utils.flows.info import run_info


def main():
    module = RolloutModule(
        argument_spec=args.argument_spec(
            args.AUTH_ARG_SPEC, args.TARGET_ARG_SPEC, args.WAIT_ARG_SPEC,
            machine_sets={"type": "bool", "default": False},
            machines={"type": "bool", "default": False},
            history={"type": "bool", "default": False},
            revision={"type": "int"},
        ),
        mutually_exclusive=args.TARGET_MUTUALLY_EXCLUSIVE,
        supports_check_mode=True,
    )
    run_info(module)


if __name__ == "__main__":
    main()
