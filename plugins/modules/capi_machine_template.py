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
    type: str
    default: default
  source:
    description:
      - The template to clone. Mutually exclusive with O(from_object); one of them is required.
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
      - Mutually exclusive with O(source); one of them is required.
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
  overrides:
    description:
      - Fields deep-merged into the copy's C(spec.template.spec) - mappings merge, lists and values replace,
        V(null) removes a key.
      - Fields must exist in the kind's schema; a field the API server drops is reported as a warning.
    type: dict
    default: {}
  name:
    description:
      - Name of the new template. Defaults to C(<source name>-<8 hex digits of the merged spec's hash>).
      - Needed when a template of the default name exists with a different spec (the task fails and says so).
    type: str
  labels:
    description:
      - Labels to set on the new template, in addition to (or replacing) the copied ones. A V(null) value
        leaves out a label of the source.
      - Not applied to a template that already exists.
    type: dict
  annotations:
    description:
      - Annotations to set on the new template, like O(labels).
    type: dict
  force:
    description:
      - Clone a template managed by a Cluster topology (ClusterClass) anyway. The clone is not topology-owned,
        and the topology controller reverts a MachineDeployment or control plane it manages to its own template.
    type: bool
    default: false
notes:
  - In check mode nothing is written; RV(template) is the object that would be created.
  - Needs C(get) and C(create) on the template kind's resource (for example C(dockermachinetemplates),
    C(awsmachinetemplates)), and C(get) on C(machinedeployments) / C(kubeadmcontrolplanes) for O(from_object);
    see C(docs/rbac.yml).
extends_documentation_fragment:
  - capi.rollout.connection
  - capi.rollout.targets.attributes
attributes:
  check_mode:
    description: The create is sent as a server-side dry run (C(dryRun=All)) and nothing is stored; RV(template) is
      the API server's answer (the object a real run creates, with defaults applied and unknown fields pruned) and
      RV(changed) says whether it would be created. A real run sends the same dry run first.
    support: full
  diff_mode:
    description: Shows the whole new template (metadata and spec) as YAML when it is (would be) created.
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
  description: Whether the template was (in check mode, would be) created.
  returned: always
  type: bool
  sample: true
created:
  description: Whether the template was (in check mode, would be) created; false when it existed with the same spec.
  returned: success
  type: bool
  sample: true
message:
  description: What was done.
  returned: success
  type: str
  sample: dockermachinetemplate/fleet-a/prod-eu-1-md-0-3f9a61c2 created from dockermachinetemplate/fleet-a/prod-eu-1-md-0
infrastructure_ref:
  description:
    - The new template's reference, ready for O(capi.rollout.capi_rollout_restart#module:infrastructure_ref).
  returned: success
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
  returned: success
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
  returned: success
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
  returned: success
  type: str
  sample: 3f9a61c2
changes:
  description: The fields of C(spec.template.spec) that differ from the source, with their values before and after.
  returned: success
  type: list
  elements: dict
  sample: [{path: spec.template.spec.instanceType, before: m5.xlarge, after: m6i.2xlarge}]
diff:
  description: The new template as YAML text (before is empty), when it is (would be) created.
  returned: when diff mode is on and the template is (would be) created
  type: dict
  sample:
    before: ""
    after: "apiVersion: infrastructure.cluster.x-k8s.io/v1beta2\nkind: AWSMachineTemplate\n..."
    before_header: awsmachinetemplate/fleet-a/prod-eu-1-md-0-3f9a61c2 (absent)
    after_header: awsmachinetemplate/fleet-a/prod-eu-1-md-0-3f9a61c2 (new)
api_requests:
  description: Number of HTTP requests this task sent to the API server.
  returned: always
  type: int
  sample: 5
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.capi.rollout.plugins.module_utils.flows import args
from ansible_collections.capi.rollout.plugins.module_utils.flows.machine_template import run_machine_template


def main():
    module = AnsibleModule(
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
            name={"type": "str"},
            labels={"type": "dict"},
            annotations={"type": "dict"},
            force={"type": "bool", "default": False},
        ),
        mutually_exclusive=[["source", "from_object"]],
        required_one_of=[["source", "from_object"]],
        supports_check_mode=True,
    )
    run_machine_template(module)


if __name__ == "__main__":
    main()
