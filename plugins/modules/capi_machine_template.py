#!/usr/bin/python
# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: capi_machine_template
short_description: Clone a Cluster API infrastructure machine template with overrides
version_added: 0.1.0
description:
  - Infrastructure machine templates are immutable in Cluster API, so moving machines to new hardware or a new
    image means a new template. This module creates that template as a copy of an existing one of any provider
    kind (C(DockerMachineTemplate), C(AWSMachineTemplate), C(VSphereMachineTemplate), ...) with O(overrides)
    deep-merged into its C(spec.template.spec), and returns the reference to pass to
    M(capi.rollout.capi_rollout_restart)'s O(capi.rollout.capi_rollout_restart#module:infrastructure_ref).
  - The source is named directly (O(source)) or is the current infrastructure template of a MachineDeployment
    or KubeadmControlPlane (O(from_object)).
  - O(objects) clones the current templates of many MachineDeployments and KubeadmControlPlanes in one call, each
    with its own overrides. Every object is read, planned and its create sent as a server-side dry run first; when
    any of them fails a check, the task fails and nothing is created. Then the templates are created one by one;
    a create that fails does not stop the others, and the task fails. The reads do not grow with the number of
    objects (one list request per object kind and namespace, one per template kind and namespace); per object only
    the dry run and the create are sent.
  - C(spec.template.spec) is treated as opaque; the overrides are merged like a JSON merge patch
    (RFC 7386) - mappings merge recursively, lists and scalar values replace, and V(null) deletes a key.
  - The new name defaults to the source name followed by C(-) and 8 hex digits of the SHA-256 of the merged
    C(spec.template.spec) (canonical JSON), cut to 63 characters, so a rerun finds the same template. When the
    source is itself a clone made by this module, its hash suffix is replaced rather than extended, so cloning
    a clone with the same overrides names the same template and names never grow.
  - When the target exists with the same spec, nothing is changed. When it exists with a different spec, the
    task fails with nothing written (templates are immutable); give another O(name).
  - Before the template is created, the create is sent as a server-side dry run. When the API server would drop a
    field of the overrides (not in the kind's schema, typically a typo such as C(instanceTyp)), or when the
    overrides change nothing (the clone's C(spec.template.spec) would equal the source's, so a switch would only
    replace every Machine with an identical one), the task fails with nothing written and names the fields. The
    override fields are the provider's, for example C(instanceType) for an C(AWSMachineTemplate) and
    C(customImage) for a C(DockerMachineTemplate).
  - The source's labels (including C(cluster.x-k8s.io/cluster-name)) and annotations are copied, except those
    owned by controllers or GitOps tools (C(topology.cluster.x-k8s.io/*), C(machine-template-hash),
    C(cluster.x-k8s.io/set-name), C(app.kubernetes.io/managed-by), C(app.kubernetes.io/instance), Flux, Helm and
    Argo CD markers, C(kubectl.kubernetes.io/last-applied-configuration)). The annotations
    C(rollout.capi-rollout.dev/cloned-from) (C(<kind>/<source name>)) and C(rollout.capi-rollout.dev/spec-hash)
    are added. Only the Cluster owner reference is copied (without C(controller)); uid, resourceVersion,
    creationTimestamp, managedFields, generation, finalizers and status are not.
  - A template managed by a Cluster topology (label C(topology.cluster.x-k8s.io/owned), on the template or on
    the O(from_object)) is refused unless O(force=true) - the topology controller rotates its templates itself.
author:
  - capi.rollout contributors (@capi-rollout)
options:
  namespace:
    description:
      - Namespace of the source template, of O(from_object) and of the new template.
      - With O(objects), the namespace of the entries that give no O(objects[].namespace).
    type: str
    default: default
  source:
    description:
      - The template to clone. Mutually exclusive with O(from_object) and O(objects); one of them is required.
    type: dict
    suboptions:
      name:
        description: Name of the template.
        type: str
        required: true
      kind:
        description: Kind of the template, for example V(DockerMachineTemplate) or V(AWSMachineTemplate).
        type: str
        required: true
      api_group:
        description:
          - API group of the kind (as in a v1beta2 reference, C(apiGroup)). The served version is discovered.
          - Defaults to V(infrastructure.cluster.x-k8s.io) when neither O(source.api_group) nor
            O(source.api_version) is given.
        type: str
      api_version:
        description:
          - Full C(group/version) of the kind (as in a v1beta1 reference, C(apiVersion)); used as given.
          - Mutually exclusive with O(source.api_group).
        type: str
  from_object:
    description:
      - Clone the infrastructure template that a MachineDeployment (C(spec.template.spec.infrastructureRef)) or
        KubeadmControlPlane (C(spec.machineTemplate.infrastructureRef) or
        C(spec.machineTemplate.spec.infrastructureRef)) uses now.
      - Mutually exclusive with O(source) and O(objects); one of them is required.
    type: dict
    suboptions:
      kind:
        description:
          - V(MachineDeployment) or V(KubeadmControlPlane); case-insensitive, V(md) and V(kcp) are accepted too.
        type: str
        default: MachineDeployment
      name:
        description: Name of the MachineDeployment or KubeadmControlPlane.
        type: str
        required: true
  objects:
    description:
      - Clone the current infrastructure templates of these MachineDeployments and KubeadmControlPlanes in one
        call. Each entry means what O(from_object) with O(overrides), O(labels) and O(annotations) means for one
        object; O(force) applies to every entry.
      - All entries are checked first (read, planned, the create sent as a server-side dry run). When any entry
        fails a check (for example a field the API server would prune, overrides that change nothing, an existing
        target with another spec, a topology-owned object), the task fails and nothing is created.
      - Mutually exclusive with O(source), O(from_object) and O(name); O(overrides), O(labels) and O(annotations)
        are given per entry (giving them at the top level fails). An empty list fails (no object is selected).
      - The results are in RV(results), one entry per object in the given order.
    type: list
    elements: dict
    suboptions:
      kind:
        description:
          - V(MachineDeployment) or V(KubeadmControlPlane); case-insensitive, V(md) and V(kcp) are accepted too.
        type: str
        default: MachineDeployment
      name:
        description: Name of the MachineDeployment or KubeadmControlPlane.
        type: str
        required: true
      namespace:
        description: Namespace of the object and of its templates. Defaults to O(namespace).
        type: str
      overrides:
        description:
          - Fields deep-merged into the copy's C(spec.template.spec), like O(overrides).
        type: dict
        default: {}
      labels:
        description: Labels to set on the new template, like O(labels).
        type: dict
      annotations:
        description: Annotations to set on the new template, like O(annotations).
        type: dict
  overrides:
    description:
      - Fields deep-merged into the copy's C(spec.template.spec) - mappings merge, lists and values replace,
        V(null) removes a key.
      - Fields must exist in the kind's schema; a field the API server would drop fails the task with nothing
        written.
      - Refused too, naming the field, with nothing written - an empty string where the current template has a value
        (V(null) removes a field), a value of more than 16384 characters, control characters (a NUL byte), an empty
        key, or overrides of more than 65536 characters of JSON in all.
      - Not with O(objects) (give O(objects[].overrides)).
    type: dict
    default: {}
  name:
    description:
      - Name of the new template. Defaults to C(<source name>-<8 hex digits of the merged spec's hash>).
      - Needed when a template of the default name exists with a different spec (the task fails and says so).
      - Not with O(objects).
    type: str
  labels:
    description:
      - Labels to set on the new template, in addition to (or replacing) the copied ones. A V(null) value
        leaves out a label of the source.
      - Not applied to a template that already exists.
      - Not with O(objects) (give O(objects[].labels)).
    type: dict
  annotations:
    description:
      - Annotations to set on the new template, like O(labels).
      - Not with O(objects) (give O(objects[].annotations)).
    type: dict
  force:
    description:
      - Clone a template managed by a Cluster topology (ClusterClass) anyway. The clone is not topology-owned,
        and the topology controller reverts a MachineDeployment or control plane it manages to its own template.
      - With O(objects), applies to every entry.
    type: bool
    default: false
notes:
  - In check mode nothing is written; RV(template) is the object that would be created.
  - With O(objects), C(list) on C(machinedeployments) / C(kubeadmcontrolplanes) and on the template kind's resource
    replace the C(get) of one object.
  - Needs C(get) and C(create) on the template kind's resource (for example C(dockermachinetemplates),
    C(awsmachinetemplates)), and C(get) on C(machinedeployments) / C(kubeadmcontrolplanes) for O(from_object);
    see C(docs/rbac.yml).
extends_documentation_fragment:
  - capi.rollout.connection
  - capi.rollout.objects.attributes
  - capi.rollout.lease
attributes:
  check_mode:
    description: The create is sent as a server-side dry run (C(dryRun=All)) and nothing is stored; RV(template) is
      the API server's answer (the object a real run creates, with defaults applied and unknown fields pruned) and
      RV(changed) says whether it would be created. A real run sends the same dry run first.
    support: full
  diff_mode:
    description: Shows the whole new template (metadata and spec) as YAML when it is (would be) created; with
      O(objects), one diff per template that is (would be) created.
    support: full
seealso:
  - module: capi.rollout.capi_rollout_restart
    description: Roll a MachineDeployment or control plane onto the new template with RV(infrastructure_ref).
  - name: Cluster API - changing infrastructure machine templates
    description: Why templates are copied rather than changed.
    link: https://cluster-api.sigs.k8s.io/tasks/updating-machine-templates.html
'''

EXAMPLES = r'''
- name: New hardware for a MachineDeployment - clone its current template with a bigger instance type
  capi.rollout.capi_machine_template:
    namespace: fleet-a
    from_object:
      kind: MachineDeployment
      name: prod-eu-1-md-0
    overrides:
      instanceType: m6i.2xlarge
      rootVolume:
        size: 120
  register: new_template

- name: Roll the MachineDeployment onto the new template and wait
  capi.rollout.capi_rollout_restart:
    namespace: fleet-a
    name: prod-eu-1-md-0
    infrastructure_ref: "{{ new_template.infrastructure_ref }}"
    wait: true
    wait_timeout: 3600

- name: Clone a named vSphere template under a chosen name, dropping a field
  capi.rollout.capi_machine_template:
    namespace: fleet-a
    source:
      kind: VSphereMachineTemplate
      name: prod-eu-1-worker-2025-11
      api_group: infrastructure.cluster.x-k8s.io
    name: prod-eu-1-worker-2026-03
    overrides:
      template: ubuntu-2404-kube-v1.31.4
      memoryMiB: 32768
      customVMXKeys: null
    labels:
      hardware-generation: "2026"

- name: Clone the control plane's template (v1beta1 reference style)
  capi.rollout.capi_machine_template:
    namespace: fleet-a
    source:
      kind: AWSMachineTemplate
      name: prod-eu-1-control-plane-2025
      api_version: infrastructure.cluster.x-k8s.io/v1beta2
    overrides:
      ami:
        id: ami-0123456789abcdef0

- name: New hardware for a whole cluster in one call - checked first, created only when every clone passes
  capi.rollout.capi_machine_template:
    namespace: fleet-a
    objects:
      - name: prod-eu-1-md-0
        overrides: {instanceType: m6i.2xlarge}
      - name: prod-eu-1-md-gpu
        overrides: {instanceType: g5.2xlarge}
        labels: {hardware-generation: "2026"}
      - kind: kcp
        name: prod-eu-1-control-plane
        overrides: {instanceType: m6i.xlarge}
  register: new_templates

- name: Roll each object onto its new template
  capi.rollout.capi_rollout_restart:
    namespace: fleet-a
    kind: "{{ item.ref.split('/')[0] }}"
    name: "{{ item.ref.split('/')[2] }}"
    infrastructure_ref: "{{ item.infrastructure_ref }}"
    wait: true
  loop: "{{ new_templates.results }}"
  loop_control:
    label: "{{ item.ref }}"

- name: Dry run - show the template that would be created
  capi.rollout.capi_machine_template:
    namespace: fleet-a
    from_object:
      kind: kcp
      name: prod-eu-1-control-plane
    overrides:
      instanceType: m6i.xlarge
  check_mode: true
  diff: true
'''

RETURN = r'''
changed:
  description: Whether the template was (in check mode, would be) created; with O(objects), whether any was.
  returned: always
  type: bool
  sample: true
created:
  description: Whether the template was (in check mode, would be) created; false when it existed with the same spec.
  returned: success, without O(objects)
  type: bool
  sample: true
message:
  description: What was done.
  returned: success, without O(objects)
  type: str
  sample: dockermachinetemplate/fleet-a/prod-eu-1-md-0-3f9a61c2 created from dockermachinetemplate/fleet-a/prod-eu-1-md-0
infrastructure_ref:
  description:
    - The new template's reference, ready for O(capi.rollout.capi_rollout_restart#module:infrastructure_ref).
  returned: success, without O(objects)
  type: dict
  contains:
    api_group:
      description: API group of the template kind.
      type: str
      sample: infrastructure.cluster.x-k8s.io
    kind:
      description: Template kind (the source's).
      type: str
      sample: AWSMachineTemplate
    name:
      description: Name of the new (or existing, identical) template.
      type: str
      sample: prod-eu-1-md-0-3f9a61c2
  sample: {api_group: infrastructure.cluster.x-k8s.io, kind: AWSMachineTemplate, name: prod-eu-1-md-0-3f9a61c2}
source_ref:
  description: The template that was cloned.
  returned: success, without O(objects)
  type: dict
  contains:
    api_group:
      description: API group of the template kind.
      type: str
      sample: infrastructure.cluster.x-k8s.io
    api_version:
      description: C(group/version) the source was read with.
      type: str
      sample: infrastructure.cluster.x-k8s.io/v1beta2
    kind:
      description: Template kind.
      type: str
      sample: AWSMachineTemplate
    name:
      description: Template name.
      type: str
      sample: prod-eu-1-md-0
    namespace:
      description: Namespace.
      type: str
      sample: fleet-a
    from_object:
      description: The MachineDeployment or control plane the source was taken from (C(kind/namespace/name)).
      returned: when O(from_object) is given
      type: str
      sample: machinedeployment/fleet-a/prod-eu-1-md-0
  sample: {api_group: infrastructure.cluster.x-k8s.io, api_version: infrastructure.cluster.x-k8s.io/v1beta2,
           kind: AWSMachineTemplate, name: prod-eu-1-md-0, namespace: fleet-a}
template:
  description:
    - The template as created (in check mode, as it would be created; when it existed, as it is), without
      C(metadata.managedFields) and C(status).
  returned: success, without O(objects)
  type: dict
  sample:
    apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
    kind: AWSMachineTemplate
    metadata:
      name: prod-eu-1-md-0-3f9a61c2
      namespace: fleet-a
      labels: {cluster.x-k8s.io/cluster-name: prod-eu-1}
      annotations:
        rollout.capi-rollout.dev/cloned-from: AWSMachineTemplate/prod-eu-1-md-0
        rollout.capi-rollout.dev/spec-hash: 3f9a61c2
    spec: {template: {spec: {instanceType: m6i.2xlarge, iamInstanceProfile: nodes.cluster-api-provider-aws.sigs.k8s.io}}}
hash:
  description: The 8 hex digits of the merged C(spec.template.spec)'s hash (the default name's suffix).
  returned: success, without O(objects)
  type: str
  sample: 3f9a61c2
changes:
  description: The fields of C(spec.template.spec) that differ from the source, with their values before and after.
  returned: success, without O(objects)
  type: list
  elements: dict
  sample: [{path: spec.template.spec.instanceType, before: m5.xlarge, after: m6i.2xlarge}]
diff:
  description: The new template as YAML text (before is empty), when it is (would be) created.
  returned: when diff mode is on and the template is (would be) created (without O(objects))
  type: dict
  sample:
    before: ""
    after: "apiVersion: infrastructure.cluster.x-k8s.io/v1beta2\nkind: AWSMachineTemplate\n..."
    before_header: awsmachinetemplate/fleet-a/prod-eu-1-md-0-3f9a61c2 (absent)
    after_header: awsmachinetemplate/fleet-a/prod-eu-1-md-0-3f9a61c2 (new)
results:
  description:
    - With O(objects), one entry per object in the given order. Also returned when the task fails.
    - An entry that did not fail has the keys a call for that one object returns (RV(created), RV(message),
      RV(infrastructure_ref), RV(source_ref), RV(template), RV(hash), RV(changes)), plus RV(results[].changed) and
      RV(results[].warnings). When another object failed a check, RV(results[].created) is false and
      RV(results[].message) says that its template was not created.
  returned: when O(objects) is given
  type: list
  elements: dict
  contains:
    ref:
      description: The object (C(kind/namespace/name)).
      type: str
      sample: machinedeployment/fleet-a/prod-eu-1-md-0
    failed:
      description: Whether this object could not be cloned (a check failed, or its create failed).
      type: bool
      sample: false
    msg:
      description: Why it could not be cloned.
      returned: when RV(results[].failed) is true
      type: str
      sample: "dockermachinetemplate/fleet-a/prod-eu-1-md-0-3f9a61c2: the API server drops spec.template.spec.instanceTyp: ..."
    reason:
      description: Stable slug of the failure, as the single call's C(reason) (for example V(pruned_fields),
        V(no_effect), V(template_conflict), V(topology_owned), V(not_found)).
      returned: when RV(results[].failed) is true
      type: str
      sample: pruned_fields
    hint:
      description: What to do about the failure.
      returned: when RV(results[].failed) is true
      type: str
      sample: fix the field name in overrides
    changed:
      description: Whether its template was (in check mode, would be) created.
      returned: when RV(results[].failed) is false
      type: bool
      sample: true
    created:
      description: As RV(created), for this object.
      returned: when RV(results[].failed) is false
      type: bool
      sample: true
    message:
      description: As RV(message), for this object.
      returned: when RV(results[].failed) is false
      type: str
      sample: dockermachinetemplate/fleet-a/prod-eu-1-md-0-3f9a61c2 created from dockermachinetemplate/fleet-a/prod-eu-1-md-0
    infrastructure_ref:
      description: As RV(infrastructure_ref), for this object.
      returned: when RV(results[].failed) is false
      type: dict
      sample: {api_group: infrastructure.cluster.x-k8s.io, kind: AWSMachineTemplate, name: prod-eu-1-md-0-3f9a61c2}
    source_ref:
      description: As RV(source_ref), for this object (with C(from_object)).
      returned: when RV(results[].failed) is false
      type: dict
      sample: {api_group: infrastructure.cluster.x-k8s.io, api_version: infrastructure.cluster.x-k8s.io/v1beta2,
               kind: AWSMachineTemplate, name: prod-eu-1-md-0, namespace: fleet-a,
               from_object: machinedeployment/fleet-a/prod-eu-1-md-0}
    template:
      description: As RV(template), for this object.
      returned: when RV(results[].failed) is false
      type: dict
      sample: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: AWSMachineTemplate}
    hash:
      description: As RV(hash), for this object.
      returned: when RV(results[].failed) is false
      type: str
      sample: 3f9a61c2
    changes:
      description: As RV(changes), for this object.
      returned: when RV(results[].failed) is false
      type: list
      elements: dict
      sample: [{path: spec.template.spec.instanceType, before: m5.xlarge, after: m6i.2xlarge}]
    warnings:
      description: The warnings of this object (also emitted as task warnings, prefixed with RV(results[].ref)).
      returned: when RV(results[].failed) is false
      type: list
      elements: str
      sample: []
api_requests:
  description: Number of HTTP requests this task sent to the API server.
  returned: always
  type: int
  sample: 5
problems:
  description: The options refused before any request, one entry each (C(option), C(value), C(reason), C(msg)); the first one's reason is the task's C(reason).
  returned: when an option is refused before any request (the input gate)
  type: list
  elements: dict
'''

from ansible_collections.capi.rollout.plugins.module_utils.flows import args
from ansible_collections.capi.rollout.plugins.module_utils.flows.run import RolloutModule
from ansible_collections.capi.rollout.plugins.module_utils.flows.machine_template import run_machine_template


def main():
    module = RolloutModule(
        argument_spec=args.argument_spec(
            args.AUTH_ARG_SPEC,
            namespace={"type": "str", "default": "default"},
            source={"type": "dict", "options": {
                "name": {"type": "str", "required": True},
                "kind": {"type": "str", "required": True},
                "api_group": {"type": "str"},
                "api_version": {"type": "str"},
            }, "mutually_exclusive": [["api_group", "api_version"]]},
            from_object={"type": "dict", "options": {
                "kind": {"type": "str", "default": "MachineDeployment"},
                "name": {"type": "str", "required": True},
            }},
            overrides={"type": "dict", "default": {}},
            objects={"type": "list", "elements": "dict", "options": {
                "kind": {"type": "str", "default": "MachineDeployment"},
                "name": {"type": "str", "required": True},
                "namespace": {"type": "str"},
                "overrides": {"type": "dict", "default": {}},
                "labels": {"type": "dict"},
                "annotations": {"type": "dict"},
            }},
            name={"type": "str"},
            labels={"type": "dict"},
            annotations={"type": "dict"},
            force={"type": "bool", "default": False},
            lease={"type": "dict", "options": args.LEASE_ARG_SPEC},
        ),
        mutually_exclusive=[["source", "from_object", "objects"], ["objects", "name"]],
        required_one_of=[["source", "from_object", "objects"]],
        supports_check_mode=True,
    )
    run_machine_template(module)


if __name__ == "__main__":
    main()
