#!/usr/bin/python
# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: capi_rollout_pause
short_description: Pause or resume rollouts of Cluster API MachineDeployments and KubeadmControlPlanes
version_added: 0.1.0
description:
  - Pauses (O(paused=true)) or resumes (O(paused=false)) rollouts, like C(clusterctl alpha rollout pause) and
    C(resume).
  - MachineDeployment - sets C(spec.paused). A paused MachineDeployment still scales, but a template change or
    a restart does not roll its Machines until it is resumed.
  - KubeadmControlPlane - which has no C(spec.paused) - adds the C(cluster.x-k8s.io/paused) annotation, and
    removes it on resume. The annotation stops the control plane's reconciliation completely.
  - Idempotent, unlike clusterctl - pausing a paused object (or resuming one that is not paused) changes
    nothing and reports C(changed=false).
author:
  - capi.rollout contributors (@capi-rollout)
options:
  paused:
    description:
      - V(true) to pause, V(false) to resume.
    type: bool
    required: true
  rollout_id:
    description:
      - Identifier recorded on the object (annotation C(rollout.capi-rollout.dev/last)) with the time and
        O(reason) when the state changes.
    type: str
  reason:
    description:
      - Why the object is paused or resumed, recorded on the object when the state changes.
    type: str
notes:
  - In check mode nothing is written and O(wait) is skipped.
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
    description: Shows before and after of exactly the fields that would change, as YAML.
    support: full
seealso:
  - module: capi.rollout.capi_rollout_restart
  - module: capi.rollout.capi_rollout_info
'''

EXAMPLES = r'''
- name: Pause the rollouts of a MachineDeployment during a maintenance freeze
  capi.rollout.capi_rollout_pause:
    kubeconfig: ~/.kube/mgmt.yaml
    namespace: fleet-a
    name: prod-eu-1-md-0
    paused: true
    reason: change freeze until 2026-03-02

- name: Pause every MachineDeployment of a cluster
  capi.rollout.capi_rollout_pause:
    namespace: fleet-a
    cluster_name: prod-eu-1
    paused: true

- name: Pause a control plane (adds the cluster.x-k8s.io/paused annotation)
  capi.rollout.capi_rollout_pause:
    kind: KubeadmControlPlane
    namespace: fleet-a
    name: prod-eu-1-control-plane
    paused: true

- name: Resume and wait until the rollouts that were held back are complete
  capi.rollout.capi_rollout_pause:
    namespace: fleet-a
    names:
      - prod-eu-1-md-0
      - prod-eu-1-md-1
    paused: false
    wait: true

- name: What would a resume change?
  capi.rollout.capi_rollout_pause:
    namespace: fleet-a
    label_selectors:
      - pool=gpu
    paused: false
  check_mode: true
  diff: true
'''

RETURN = r'''
changed:
  description: Whether any object was (in check mode, would be) changed.
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
      sample: cluster.x-k8s.io/v1beta1
    action:
      description: V(paused), V(resumed) or V(unchanged).
      type: str
      sample: paused
    changed:
      description: Whether this object was (would be) changed.
      type: bool
      sample: true
    message:
      description: What was done, or why nothing was done.
      type: str
      sample: "machinedeployment/fleet-a/prod-eu-1-md-0: MachineDeployment paused (spec.paused)"
    patch:
      description:
        - The JSON patch (RFC 6902, C(application/json-patch+json)) sent, exactly (in check mode, that would be sent
          as a server-side dry run); null when nothing changes.
        - C(test) operations come first, one per field the plan relied on, with the value that was read (whether
          it is paused, that is C(spec.paused) and the C(cluster.x-k8s.io/paused) annotation, and the last-rollout
          annotation when it is written); an absent field is tested with value null at its first missing member
          (the API server passes such a test when the member is absent). When one fails (someone changed that
          field meanwhile), the object is read again, planned again and the new patch sent, up to 5 times. Other
          changes of the object (its status, other annotations, the resourceVersion) do not fail it.
        - Then the C(add), C(replace) and C(remove) operations of the change. C(changes) and the diff show the same
          change readably.
      type: list
      elements: dict
      sample: [{op: test, path: /spec/paused, value: null},
               {op: test, path: /metadata/annotations/cluster.x-k8s.io~1paused, value: null},
               {op: add, path: /spec/paused, value: true}]
    patch_type:
      description: Always V(json) (C(application/json-patch+json)).
      type: str
      sample: json
    changes:
      description: Each changed field with its value before and after.
      type: list
      elements: dict
      sample: [{path: spec.paused, before: null, after: true}]
    warnings:
      description: Warnings about this object (also shown as task warnings).
      type: list
      elements: str
      sample: []
    status:
      description: The final state after O(wait), as in RV(capi.rollout.capi_rollout_info#module:resources).
      returned: when O(wait=true)
      type: dict
      sample: {name: prod-eu-1-md-0, paused: false, rollout: {complete: true}}
diff:
  description: Before and after of the changed fields of each changed object, as YAML text.
  returned: when diff mode is on
  type: list
  elements: dict
  sample:
    - before: ""
      after: "spec:\n  paused: true\n"
      before_header: machinedeployment/fleet-a/prod-eu-1-md-0 (before)
      after_header: machinedeployment/fleet-a/prod-eu-1-md-0 (after)
progress:
  description: Timestamped lines, one per change of an object's rollout state seen while waiting.
  returned: always
  type: list
  elements: str
  sample: []
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
from ansible_collections.capi.rollout.plugins.module_utils.flows import pause
from ansible_collections.capi.rollout.plugins.module_utils.flows.change import run_change


def main():
    module = RolloutModule(
        argument_spec=args.argument_spec(
            args.AUTH_ARG_SPEC, args.TARGET_ARG_SPEC, args.WAIT_ARG_SPEC, args.FIELD_OWNERS_ARG_SPEC,
            paused={"type": "bool", "required": True},
            rollout_id={"type": "str"},
            reason={"type": "str"},
        ),
        mutually_exclusive=args.TARGET_MUTUALLY_EXCLUSIVE,
        required_one_of=args.TARGET_REQUIRED_ONE_OF,
        supports_check_mode=True,
    )
    run_change(module, pause)


if __name__ == "__main__":
    main()
