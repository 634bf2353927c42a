# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a management cluster may update Machines in place (CAPI v1.12+, feature gate InPlaceUpdates).

CAPI updates in place only through a runtime extension that serves the in-place hooks; once registered, its
ExtensionConfig lists them in ``status.handlers`` (cluster-api v1.12.3
docs/book/src/tasks/experimental-features/runtime-sdk/implement-in-place-update-hooks.md). The feature gate itself
cannot be read through the API: an ``UpdateMachine`` handler is taken to mean in-place updates are possible.
One LIST of ExtensionConfigs; a cluster that does not serve them (before v1.12, or no runtime SDK) cannot.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.client.errors import ApiError, api_error
from ansible_collections.capi.rollout.plugins.module_utils.client.requests import resource_path

RUNTIME_GROUP = "runtime.cluster.x-k8s.io"
EXTENSION_CONFIGS = resource_path(RUNTIME_GROUP, "v1beta2", "extensionconfigs")
UPDATE_HOOK = "UpdateMachine"


def in_place_possible(api):
    """(possible, warning or None). Credentials that may not list ExtensionConfigs count as possible (the switch
    then also writes the rollout trigger, which replaces Machines either way) with a warning naming the rule."""
    try:
        body = api.list(EXTENSION_CONFIGS)
    except ApiError as err:
        if err.status == 404:
            return False, None
        if err.status in (401, 403):
            return True, (f"could not list extensionconfigs.{RUNTIME_GROUP} ({err.status}): assuming CAPI may update "
                          "Machines in place; add the extensionconfigs list rule of docs/rbac.yml to know")
        raise api_error(err, verb="list", resource={"group": RUNTIME_GROUP, "plural": "extensionconfigs"}, host=api.host)
    return any(((handler.get("requestHook") or {}).get("hook") == UPDATE_HOOK)
               for item in body.get("items") or []
               for handler in ((item.get("status") or {}).get("handlers") or [])), None
