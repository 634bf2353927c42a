# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which CAPI API versions the management cluster serves: ONE ``GET /apis`` per module run.

The APIGroupList names every group with its served versions and the preferred one; no per-group
discovery (a CAPI management cluster carries many provider CRDs, kubernetes.core's full discovery
costs a request per group-version). v1beta2 is used wherever it is served (CAPI v1.11+), else
v1beta1. Only a template switch asks a group-version for its resource list (to find the plural of
the template kind).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.client.errors import ApiError, api_error
from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError

# Preference order for the CAPI groups this collection reads and writes.
CAPI_VERSIONS = (apiversion.V1BETA2, apiversion.V1BETA1)


class Discovery(object):
    """Lazy, per-run view of ``/apis``."""

    def __init__(self, api):
        self.api = api
        self._groups = None
        self._resources = {}

    def groups(self):
        """{group: {"versions": [...], "preferred": "v..."}} (one request, cached for the run)."""
        if self._groups is None:
            try:
                body = self.api.get("/apis")
            except ApiError as err:
                raise api_error(err, verb="get", resource={"plural": "/apis (discovery)", "group": ""},
                                host=self.api.host)
            groups = {}
            for group in body.get("groups") or []:
                versions = [entry.get("version") for entry in group.get("versions") or [] if entry.get("version")]
                preferred = (group.get("preferredVersion") or {}).get("version")
                groups[group.get("name")] = {"versions": versions, "preferred": preferred}
            self._groups = groups
        return self._groups

    def served(self, group):
        info = self.groups().get(group)
        return list(info["versions"]) if info else []

    def preferred(self, group):
        info = self.groups().get(group)
        return info["preferred"] if info else None

    def capi_version(self, kind, ref=None):
        """v1beta2 or v1beta1 for ``kind`` (its group), or a RolloutError saying CAPI is missing."""
        group = apiversion.RESOURCES[kind]["group"]
        served = self.served(group)
        for version in CAPI_VERSIONS:
            if version in served:
                return version
        if not served:
            what = "Cluster API" if group == apiversion.CORE_GROUP else f"the {kind} provider of Cluster API"
            raise RolloutError(
                f"API group {group} is not served by {self.api.host}: {what} is not installed there",
                ref=ref, reason="api_not_served",
                hint="point kubeconfig/context at the CAPI management cluster (not a workload cluster), "
                     "or install Cluster API (clusterctl init)")
        raise RolloutError(
            f"API group {group} serves only {', '.join(served)}; this collection needs v1beta1 or v1beta2",
            ref=ref, reason="api_version_unsupported", hint="upgrade Cluster API to v1.0 or newer")

    def version_for_group(self, group, ref=None):
        """Version to use for another group (e.g. an infrastructure provider): v1beta2/v1beta1 when
        served, else the server's preferred version."""
        served = self.served(group)
        if not served:
            raise RolloutError(f"API group {group} is not served by {self.api.host}", ref=ref,
                               reason="api_not_served", hint="check api_group of the template (is the provider installed?)")
        for version in CAPI_VERSIONS:
            if version in served:
                return version
        return self.preferred(group) or served[0]

    def plural(self, group, version, kind, ref=None):
        """Plural resource name of ``kind`` in ``group/version`` (one request per group-version)."""
        key = (group, version)
        if key not in self._resources:
            path = f"/apis/{group}/{version}" if group else f"/api/{version}"
            try:
                body = self.api.get(path)
            except ApiError as err:
                raise api_error(err, ref=ref, verb="get", resource={"plural": path + " (discovery)", "group": group},
                                host=self.api.host)
            self._resources[key] = {res.get("kind"): res.get("name") for res in body.get("resources") or []
                                    if "/" not in (res.get("name") or "")}
        plural = self._resources[key].get(kind)
        if not plural:
            known = sorted(k for k in self._resources[key] if k)
            raise RolloutError(f"kind {kind} is not served in {group}/{version} (served kinds: {', '.join(known)})",
                               ref=ref, reason="kind_not_served", hint="check the kind and api_group of the template")
        return plural
