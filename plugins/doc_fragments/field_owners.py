# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type


class ModuleDocFragment(object):
    # What a writing module does with a field another manager owns (core/owners.py, docs/gitops.md).
    DOCUMENTATION = r'''
options:
  field_owners:
    description:
      - What to do when a field the task would write is owned by another manager - a GitOps reconciler (Flux's
        C(kustomize-controller) or C(helm-controller), Argo CD), Helm, or the Cluster topology (C(capi-topology)),
        read from the object's C(managedFields) (server-side apply, or a reconciler's update) and its tracking
        labels and annotations (C(argocd.argoproj.io/tracking-id), C(app.kubernetes.io/instance),
        C(kustomize.toolkit.fluxcd.io/name), C(helm.toolkit.fluxcd.io/name), C(app.kubernetes.io/managed-by=Helm)).
      - V(refuse) fails the task before anything is written (in check mode too), naming the manager, the field, the
        object and where to change it instead (in Git, in the Helm release, in the Cluster topology); in
        M(capi.rollout.capi_refresh_plan) it is a blocker of the object in the plan (a switch writes the template
        reference, a restart the trigger). V(warn) writes and warns (the owner may put the field back); V(ignore)
        writes without looking.
      - The rule per field - template references, version and paused are held in Git when the object comes from Git;
        the rollout trigger (C(spec.rolloutAfter) / C(spec.rollout.after)) and this collection's annotations
        (C(rollout.capi-rollout.dev/*)) are not, so a restart of a Git-managed object is allowed unless a manager's
        C(managedFields) hold the trigger itself. See docs/gitops.md.
      - The Cluster topology is left to the topology rule (a template change of a topology-owned object fails with
        C(reason=topology_owned)), not to this option.
      - Every write of this collection is made as field manager C(capi-rollout), never forcing ownership.
    type: str
    choices: [refuse, warn, ignore]
    default: refuse
'''
