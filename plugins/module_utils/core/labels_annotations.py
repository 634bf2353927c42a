# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every label/annotation key the plugins use: Cluster API's (same in v1beta1 and v1beta2), this collection's
own (``rollout.capi-rollout.dev/*``) and the few well-known Kubernetes/GitOps keys the template clone drops.

The one home of these strings: other modules import the constants (docs/dev/STYLE.md). Only YAML that cannot
import (module DOCUMENTATION/EXAMPLES, roles, Molecule) spells them out.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

# Presence (any value) stops reconciliation of the object (MD, KCP, ...); KCP has no spec.paused.
PAUSED_ANNOTATION = "cluster.x-k8s.io/paused"
# a Machine that MachineHealthChecks leave alone (api/core/v1beta2/common_types.go at v1.14.0)
SKIP_REMEDIATION_ANNOTATION = "cluster.x-k8s.io/skip-remediation"
# Rollout sequence number on MachineSets (and the current one copied to the MachineDeployment).
REVISION_ANNOTATION = "machinedeployment.clusters.x-k8s.io/revision"
# Comma separated revisions a reused MachineSet had before (still maintained through v1.14).
REVISION_HISTORY_ANNOTATION = "machinedeployment.clusters.x-k8s.io/revision-history"
DESIRED_REPLICAS_ANNOTATION = "machinedeployment.clusters.x-k8s.io/desired-replicas"
MAX_REPLICAS_ANNOTATION = "machinedeployment.clusters.x-k8s.io/max-replicas"

CLUSTER_NAME_LABEL = "cluster.x-k8s.io/cluster-name"
DEPLOYMENT_NAME_LABEL = "cluster.x-k8s.io/deployment-name"
SET_NAME_LABEL = "cluster.x-k8s.io/set-name"
CONTROL_PLANE_LABEL = "cluster.x-k8s.io/control-plane"
CONTROL_PLANE_NAME_LABEL = "cluster.x-k8s.io/control-plane-name"
# On a MachineDeployment created by a Cluster topology: its name in spec.topology.workers.machineDeployments.
TOPOLOGY_DEPLOYMENT_NAME_LABEL = "topology.cluster.x-k8s.io/deployment-name"
# Prefix of every key the topology controller sets and owns.
TOPOLOGY_PREFIX = "topology.cluster.x-k8s.io/"
# CAPI's bookkeeping on an infrastructure/bootstrap object cloned from a template.
CLONED_FROM_NAME_ANNOTATION = "cluster.x-k8s.io/cloned-from-name"
CLONED_FROM_GROUPKIND_ANNOTATION = "cluster.x-k8s.io/cloned-from-groupkind"
# On a MachineSet (or MD/Cluster): preflight checks CAPI skips when it creates Machines.
SKIP_PREFLIGHT_CHECKS_ANNOTATION = "machineset.cluster.x-k8s.io/skip-preflight-checks"
# On a Machine while CAPI v1.12+ moves it into another MachineSet and updates it in place (api/core/v1beta2/
# machine_types.go at v1.12.3 and v1.14.0): the history counts such a Machine as updated in place.
PENDING_ACKNOWLEDGE_MOVE_ANNOTATION = "in-place-updates.internal.cluster.x-k8s.io/pending-acknowledge-move"
UPDATE_IN_PROGRESS_ANNOTATION = "in-place-updates.internal.cluster.x-k8s.io/update-in-progress"
# Unique per MachineSet; must be stripped when copying an MS template back into its MD (undo).
MACHINE_TEMPLATE_HASH_LABEL = "machine-template-hash"
# Marks ClusterClass-managed objects: the topology controller re-applies their template fields.
TOPOLOGY_OWNED_LABEL = "topology.cluster.x-k8s.io/owned"

# Prefix of every key of this collection's own (all below start with it).
ROLLOUT_PREFIX = "rollout.capi-rollout.dev/"
# This collection's record of its last action on an object: compact JSON {id, at, action, reason, actor}.
# Kept in metadata.annotations (not spec.template) so writing it never causes a rollout.
LAST_ROLLOUT_ANNOTATION = "rollout.capi-rollout.dev/last"
# This collection's rollout history of an MD (or KCP): compact JSON list, oldest entry first, one
# entry per template change it made (core/history.py, docs/history-and-undo.md). Same reasoning:
# metadata.annotations, never spec.template.
HISTORY_ANNOTATION = "rollout.capi-rollout.dev/history"
# On an MD whose node drain timeout a refresh set for its wave (core/drains.py): compact JSON {id, before}, the
# refresh id and the value the field had before (null: unset), so the wave's end, a failure, an undo or a re-run
# after a kill puts it back.
DRAIN_TIMEOUT_ANNOTATION = "rollout.capi-rollout.dev/drain-timeout"
# On a template cloned by this collection (core/template_clone.py): where it came from
# (``<kind>/<source name>``) and the hash of its merged spec (which the name ends in).
CLONED_FROM_ANNOTATION = "rollout.capi-rollout.dev/cloned-from"
SPEC_HASH_ANNOTATION = "rollout.capi-rollout.dev/spec-hash"
# On the lock's Lease (core/lease.py): the holder's facts (refresh id, AWX job, start), for messages.
LOCK_INFO_ANNOTATION = "rollout.capi-rollout.dev/lock-info"

# Well-known keys of Kubernetes and GitOps tools (not Cluster API's): the template clone drops them
# (core/template_clone.py) and the lock's Lease carries the managed-by label (core/lease.py).
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
INSTANCE_LABEL = "app.kubernetes.io/instance"
LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"
HELM_META_PREFIX = "meta.helm.sh/"
ARGOCD_PREFIX = "argocd.argoproj.io/"
FLUX_KUSTOMIZE_PREFIX = "kustomize.toolkit.fluxcd.io/"
FLUX_HELM_PREFIX = "helm.toolkit.fluxcd.io/"
# What tells an object's owner where managedFields do not (core/owners.py): Argo CD's tracking (its default,
# client-side apply leaves no managedFields entry of its own), Flux's inventory labels, Helm's managed-by value.
ARGOCD_TRACKING_ID_ANNOTATION = "argocd.argoproj.io/tracking-id"
FLUX_KUSTOMIZE_NAME_LABEL = "kustomize.toolkit.fluxcd.io/name"
FLUX_KUSTOMIZE_NAMESPACE_LABEL = "kustomize.toolkit.fluxcd.io/namespace"
FLUX_HELM_NAME_LABEL = "helm.toolkit.fluxcd.io/name"
FLUX_HELM_NAMESPACE_LABEL = "helm.toolkit.fluxcd.io/namespace"
HELM_MANAGED_BY = "Helm"
