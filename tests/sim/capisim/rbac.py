"""RBAC of a local management cluster: one identity per role a test needs.

- ``rollout-operator``: exactly the collection's documented role (docs/rbac.yml), so modules are
  tested with the permissions we tell users to grant and nothing more.
- ``viewer``: read-only on the CAPI groups (to prove writes are refused).
- ``capi-controller-manager``: what CAPI's own controllers need (used by capisim.controller).
The admin kubeconfig is in group system:masters and bypasses RBAC.
"""

from pathlib import Path

import yaml

from .kubeapi import ApiError, resource_path

OPERATOR_ROLE_FILE = Path(__file__).resolve().parents[3] / "docs" / "rbac.yml"

CAPI_GROUPS = ["cluster.x-k8s.io", "controlplane.cluster.x-k8s.io", "bootstrap.cluster.x-k8s.io",
               "infrastructure.cluster.x-k8s.io", "runtime.cluster.x-k8s.io"]

_VIEWER_ROLE = {
    "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
    "metadata": {"name": "capisim-viewer"},
    "rules": [{"apiGroups": CAPI_GROUPS, "resources": ["*"], "verbs": ["get", "list", "watch"]}],
}

_CONTROLLER_ROLE = {
    "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
    "metadata": {"name": "capisim-capi-controller-manager"},
    "rules": [
        # "*" also matches subresources (status, scale): controllers write status.
        {"apiGroups": CAPI_GROUPS, "resources": ["*"], "verbs": ["*"]},
        {"apiGroups": [""], "resources": ["secrets", "configmaps"], "verbs": ["*"]},
        {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["", "events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch", "update"]},
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["*"]},
    ],
}

# user -> ClusterRole it is bound to
BINDINGS = {"rollout-operator": "capi-rollout-operator", "viewer": "capisim-viewer",
            "capi-controller-manager": "capisim-capi-controller-manager"}


def operator_role():
    with open(OPERATOR_ROLE_FILE, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def rbac_objects():
    """ClusterRoles and ClusterRoleBindings, in creation order."""
    objects = [operator_role(), _VIEWER_ROLE, _CONTROLLER_ROLE]
    for user, role in BINDINGS.items():
        objects.append({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": f"capisim-{user}"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
        })
    return objects


def apply_rbac(api):
    """Create the roles and bindings (as admin); already existing ones are kept."""
    for obj in rbac_objects():
        plural = "clusterroles" if obj["kind"] == "ClusterRole" else "clusterrolebindings"
        try:
            api.create(resource_path("rbac.authorization.k8s.io", "v1", plural), obj)
        except ApiError as err:
            if err.status != 409:
                raise
