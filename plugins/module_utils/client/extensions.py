# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a management cluster may update Machines in place (CAPI v1.12+, feature gate InPlaceUpdates): one LIST
of ExtensionConfigs, whose answer core.inplace.possible judges; a cluster that does not serve them (before v1.12, or
no runtime SDK) cannot.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.client.errors import ApiError, api_error
from ansible_collections.capi.rollout.plugins.module_utils.client.requests import resource_path
from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import inplace

RUNTIME_GROUP = "runtime.cluster.x-k8s.io"
EXTENSION_CONFIGS = resource_path(RUNTIME_GROUP, "v1beta2", "extensionconfigs")


def in_place_possible(api, version=apiversion.V1BETA2):
    """(possible, warning or None) for a management cluster serving CAPI API ``version`` (not asked before v1beta2).
    Credentials that may not list ExtensionConfigs count as possible (the switch then also writes the rollout
    trigger, which replaces Machines either way) with a warning naming the rule."""
    if not inplace.asked(version):
        return False, None
    try:
        body = api.list(EXTENSION_CONFIGS)
    except ApiError as err:
        if err.status == 404:
            return False, None
        if err.status in (401, 403):
            return True, (f"could not list extensionconfigs.{RUNTIME_GROUP} ({err.status}): assuming CAPI may update "
                          "Machines in place; add the extensionconfigs list rule of docs/rbac.yml to know")
        raise api_error(err, verb="list", resource={"group": RUNTIME_GROUP, "plural": "extensionconfigs"}, host=api.host)
    return inplace.possible(version, body.get("items")), None
