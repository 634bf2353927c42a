#!/usr/bin/python
# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: capi_refresh_plan
short_description: Plan a hardware refresh of one Cluster API management cluster, in one call
version_added: 0.1.0
description:
  - Reads the MachineDeployments and KubeadmControlPlanes of the given namespaces, picks the objects a hardware
    refresh covers, plans the new infrastructure template of each and makes the plan - per object the action, its
    blockers and its wave - in one module call, whatever the number of objects. The C(capi.rollout.hardware_refresh)
    role plans every management cluster with it; whether the run stops after the plan is then decided by the filter
    P(capi.rollout.rollout_refresh_stop#filter).
  - The plan is the one the filter P(capi.rollout.rollout_refresh_plan#filter) makes from
    M(capi.rollout.capi_rollout_info) and M(capi.rollout.capi_machine_template) results (the same code); only the plan
    is returned, not every object read, so that the result stays small.
  - O(label_selectors) narrows the MachineDeployments only; every control plane of the namespaces is read, for the
    Kubernetes version skew check.
  - The new template of every picked object that is not managed by a ClusterClass topology is planned as
    M(capi.rollout.capi_machine_template) with O(capi.rollout.capi_machine_template#module:objects) plans it in check
    mode - read, the clone planned, its create sent as a server-side dry run (what the API server would prune or
    refuse) - with O(templates) merged per object (global, then its workload cluster, then the object).
  - A MachineDeployment a ClusterClass topology manages gets its new hardware through its Cluster instead when its
    ClusterClass patches a variable onto each overridden field for its worker class (C(docs/clusterclass.md), path
    (a)) - its ClusterClass read (one GET per class), the per-MD C(variables.overrides) write of the Cluster sent as a
    server-side dry run; the object's notes name the path, the change and why. A control plane of a topology Cluster
    likewise through a Cluster-level C(spec.topology.variables) value of a variable its ClusterClass patches onto the
    control plane's machine template only. A MachineDeployment whose overrides no class variable maps is switched to
    another worker class of its ClusterClass whose template has the values (path (b) - the templates of its worker
    classes read, one GET each; the notes name the class and why). When no worker class has them, its Cluster is
    rebased onto a clone of the ClusterClass whose worker class takes a clone of its template with the values (path
    (c) - the creates of both sent as server-side dry runs); every MachineDeployment of that worker class of the
    Cluster rolls with it, so those go in one wave and count as one object there (O(max_in_flight), O(canary)).
  - "Never writes: the creates are always dry runs, in check mode or not (always C(changed=false)). Requests: per
    namespace one list per kind, the Clusters and the MachineSets; one list per template kind; one dry-run create
    per new template."
author:
  - capi.rollout contributors (@capi-rollout)
options:
  namespaces:
    description: The namespaces to read.
    type: list
    elements: str
    required: true
  label_selectors:
    description: Label selectors the MachineDeployments must match (for example V(pool=gpu)); all must match.
    type: list
    elements: str
    default: []
  clusters:
    description: Only the objects of these workload clusters (C(spec.clusterName)); empty for all.
    type: list
    elements: str
    default: []
  machine_deployments:
    description: Only these MachineDeployments, by name or C(namespace/name); empty for all.
    type: list
    elements: str
    default: []
  control_plane:
    description:
      - Also pick the KubeadmControlPlanes - of the workload clusters in O(clusters), else of the clusters of the
        picked MachineDeployments when O(machine_deployments) or O(label_selectors) narrowed them, else all.
    type: bool
    default: false
  workers:
    description: Pick the MachineDeployments.
    type: bool
    default: true
  templates:
    description: What the new templates change, as the C(capi.rollout.hardware_refresh) role's settings of the same names.
    type: dict
    default: {}
    suboptions:
      overrides:
        description: Deep-merged into C(spec.template.spec) of each current template (see M(capi.rollout.capi_machine_template)).
        type: dict
        default: {}
      labels:
        description: Labels to set on every new template.
        type: dict
        default: {}
      annotations:
        description: Annotations to set on every new template.
        type: dict
        default: {}
      objects:
        description:
          - Per workload cluster (key C(cluster:<name>)) or object (key C(name) or C(namespace/name)), C(overrides),
            C(labels) and C(annotations) merged over the global ones in that order.
        type: dict
        default: {}
  restart:
    description: Plan a restart on the current templates - no new template is planned.
    type: bool
    default: false
  on_delete:
    description:
      - What the plan does with a MachineDeployment whose strategy is C(OnDelete), where a template switch replaces no
        Machine until someone deletes it. V(skip) makes it a blocker of that object. V(replace) plans it like the
        others; the wave's M(capi.rollout.capi_rollout_wait) with O(capi.rollout.capi_rollout_wait#module:on_delete=replace)
        then deletes its old Machines at a controlled pace.
    type: str
    choices: [skip, replace]
    default: skip
  in_place:
    description:
      - The O(capi.rollout.capi_rollout_restart#module:in_place) the waves will switch with (the role passes
        C(hardware_refresh_in_place)), so that the plan says what each switch does with the Machines - a plain object
        and one a Cluster topology manages alike, by the rule of M(capi.rollout.capi_rollout_restart) (one LIST of
        extensionconfigs on a v1beta2 management cluster with something to switch).
      - Where CAPI can update Machines in place (v1.12+ with C(InPlaceUpdates) and an update extension), V(replace)
        plans the rollout trigger with each switch (every Machine replaced) and V(allow) lets CAPI update them in
        place; RV(plan.objects) C(in_place) and a note say which.
    type: str
    choices: [replace, allow]
    default: replace
  refresh_id:
    description:
      - The id of the refresh (its rollout id). An object this refresh already switched is V(unchanged) when its
        rollout is complete and resumed (waited for, not switched again) while it still runs; an object the refresh's
        undo switched back is skipped.
    type: str
    required: true
  max_in_flight:
    description:
      - The most objects per wave - a number or a percentage of the objects to switch, for example V(25%). Control
        planes come first, then MachineDeployments, spread over workload clusters. From V(1) to V(10000), or V(1%) to
        V(100%).
    type: raw
    default: 1
  canary:
    description: Start the MachineDeployments with a wave of one.
    type: bool
    default: false
  lock:
    description:
      - Also look at the lock of the management cluster, as M(capi.rollout.capi_rollout_lock) in check mode does
        (nothing is taken), and return what it says in RV(lock).
    type: dict
    suboptions:
      name:
        description: Name of the Lease.
        type: str
        default: capi-rollout-lock
      namespace:
        description: Namespace of the Lease.
        type: str
        default: default
      holder:
        description: Who would take the lock.
        type: str
        required: true
      lease_duration_seconds:
        description: Seconds the lock stays valid without renewal (V(1) to V(86400)); a Lease not renewed for that long is stale.
        type: int
        default: 300
extends_documentation_fragment:
  - capi.rollout.connection
  - capi.rollout.objects.attributes
  - capi.rollout.field_owners
attributes:
  check_mode:
    description: Writes nothing in either mode; the same reads and dry runs in check mode.
    support: full
  diff_mode:
    description: Shows each new template that would be created, as the API server answered its dry-run create, and each
      Cluster topology change of a topology MachineDeployment or control plane, followed by the fields of the template
      the topology will generate from it (one GET of the object's current template with C(--diff) only).
    support: full
seealso:
  - module: capi.rollout.capi_rollout_info
  - module: capi.rollout.capi_machine_template
'''

EXAMPLES = r'''
- name: What a refresh to a new image would do on this management cluster
  capi.rollout.capi_refresh_plan:
    namespaces: [fleet-a, fleet-b]
    control_plane: true
    refresh_id: hw-2026-11
    max_in_flight: 25%
    canary: true
    templates:
      overrides:
        customImage: registry.example.com/capi/node:v1.30.6
      objects:
        "cluster:prod-gpu":
          overrides:
            instanceType: g5.2xlarge
  register: refresh_plan

- name: The objects that cannot be refreshed, and why
  ansible.builtin.debug:
    msg: "{{ refresh_plan.plan.blocked | map(attribute='ref') | zip(refresh_plan.plan.blocked | map(attribute='blockers')) | list }}"
'''

RETURN = r'''
plan:
  description: The plan, as P(capi.rollout.rollout_refresh_plan#filter) makes it.
  returned: success
  type: dict
  contains:
    objects:
      description:
        - Per object the refresh covers - control planes first (with O(control_plane)), then MachineDeployments (with
          O(workers)) - the fields of the fleet report (C(kind), C(namespace), C(name), C(cluster), C(replicas),
          C(before), C(after), C(action) V(switch), V(unchanged) or V(skip), C(result) V(planned) in check mode or
          V(pending), C(blockers), C(notes), C(wave)), and C(ref), C(target_ref), C(resume), C(wait) and C(clone) (the
          O(templates) settings merged for the object), which the role's waves use.
        - C(in_place) - what its switch does with the Machines (core.inplace, as
          M(capi.rollout.capi_rollout_restart) decides it) - V(null) where CAPI cannot update them in place (replaced),
          else O(in_place) (V(replace) or V(allow)), with a note saying so on a V(switch); V(null) for a restart.
        - An object whose new template cannot be made (a typo the API server prunes, a refused create) is skipped with
          the reason among its C(blockers).
        - C(health) (MachineDeployments) - the MachineHealthChecks of its namespace that cover it (C(spec.clusterName) and
          the selector matching the labels of its Machine template) as C(health_checks) (C(name), C(limits) under
          upstream's field names - V(maxUnhealthy) / V(unhealthyRange) on v1beta1, V(unhealthyLessThanOrEqualTo) /
          V(unhealthyInRange) on v1beta2 - and C(paused), the C(cluster.x-k8s.io/paused) annotation), its Machines
          that skip remediation (C(skipped), the C(cluster.x-k8s.io/skip-remediation) or paused annotation) and those
          waiting for remediation (C(in_flight), C(OwnerRemediated) or C(ExternallyRemediated) False). A pool with a
          remediation in flight is skipped with a blocker naming the Machine; re-run once its owner has replaced it.
          Needs C(list) on C(machinehealthchecks) (docs/rbac.yml).
      type: list
      elements: dict
    waves:
      description: The waves, in order - C(index), C(name) (V(control-plane-N), V(canary), V(wave-N)), C(kind), C(objects) (refs).
      type: list
      elements: dict
    blocked:
      description: The objects with blockers.
      type: list
      elements: dict
lock:
  description:
    - With O(lock), what M(capi.rollout.capi_rollout_lock) in check mode returns - C(would_acquire), C(message),
      C(held_by), C(lease) - or C(failed) with C(msg), C(reason) and C(hint) when the lock could not be looked at
      (the rest of the result stands). Null without O(lock).
  returned: success
  type: dict
api_version:
  description: The API version the MachineDeployments were read with (null when none was read).
  returned: success
  type: str
  sample: cluster.x-k8s.io/v1beta2
server_time:
  description: The API server's clock when the task ended (UTC), from the C(Date) headers of its answers.
  returned: always
  type: str
  sample: "2026-03-01T12:00:05Z"
api_requests:
  description: Number of HTTP requests this task sent to the API server.
  returned: always
  type: int
  sample: 9
problems:
  description: The options refused before any request, one entry each (C(option), C(value), C(reason), C(msg)); the first one's reason is the task's C(reason).
  returned: when an option is refused before any request (the input gate)
  type: list
  elements: dict
'''

from ansible_collections.capi.rollout.plugins.module_utils.flows import args
from ansible_collections.capi.rollout.plugins.module_utils.flows.run import RolloutModule
from ansible_collections.capi.rollout.plugins.module_utils.flows.refresh_plan import run_refresh_plan

TEMPLATE_OPTIONS = {key: {"type": "dict", "default": {}} for key in ("overrides", "labels", "annotations", "objects")}


def main():
    module = RolloutModule(
        argument_spec=args.argument_spec(
            args.AUTH_ARG_SPEC, args.FIELD_OWNERS_ARG_SPEC,
            namespaces={"type": "list", "elements": "str", "required": True},
            label_selectors={"type": "list", "elements": "str", "default": []},
            clusters={"type": "list", "elements": "str", "default": []},
            machine_deployments={"type": "list", "elements": "str", "default": []},
            control_plane={"type": "bool", "default": False},
            workers={"type": "bool", "default": True},
            templates={"type": "dict", "default": {}, "options": TEMPLATE_OPTIONS},
            restart={"type": "bool", "default": False},
            on_delete={"type": "str", "choices": ["skip", "replace"], "default": "skip"},
            in_place={"type": "str", "choices": ["replace", "allow"], "default": "replace"},
            refresh_id={"type": "str", "required": True},
            max_in_flight={"type": "raw", "default": 1},
            canary={"type": "bool", "default": False},
            lock={"type": "dict", "options": args.LEASE_ARG_SPEC},
        ),
        supports_check_mode=True,
    )
    run_refresh_plan(module)


if __name__ == "__main__":
    main()
