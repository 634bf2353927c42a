# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""core.inplace: whether a switch's Machines are replaced or may be updated in place (the rule of capi_rollout_restart
and of capi_refresh_plan's preview), on crafted ExtensionConfigs per CAPI release."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core import inplace

HOOK_API = "hooks.runtime.cluster.x-k8s.io/v1alpha1"


def _config(*hooks):
    """An ExtensionConfig as the API server lists it once its extension registered ``hooks`` (status.handlers)."""
    return {"apiVersion": "runtime.cluster.x-k8s.io/v1beta2", "kind": "ExtensionConfig", "metadata": {"name": "ext"},
            "status": {"handlers": [{"name": f"{hook.lower()}.ext", "requestHook": {"apiVersion": HOOK_API, "hook": hook}}
                                    for hook in hooks]}}


IN_PLACE_EXTENSION = _config("CanUpdateMachineSet", "CanUpdateMachine", "UpdateMachine")


@pytest.mark.parametrize("release, version, configs, expected", [
    # v1.10 serves v1beta1 and has no in-place hooks: not even asked
    ("v1.10", "v1beta1", [IN_PLACE_EXTENSION], False),
    # v1.12.3 / v1.13 / v1.14 without the feature gate: no extension registers the hooks (no ExtensionConfig, or one of
    # lifecycle hooks only)
    ("v1.12.3 gate off", "v1beta2", [], False),
    ("v1.13 lifecycle hooks only", "v1beta2", [_config("BeforeClusterUpgrade")], False),
    ("v1.14 unregistered extension", "v1beta2", [{"spec": {}}], False),
    # with InPlaceUpdates and an update extension registered
    ("v1.12.3 gate on", "v1beta2", [IN_PLACE_EXTENSION], True),
    ("v1.14 gate on beside another extension", "v1beta2", [_config("BeforeClusterUpgrade"), IN_PLACE_EXTENSION], True),
])
def test_in_place_updates_are_possible_only_with_an_update_extension_on_v1beta2(release, version, configs, expected):
    assert inplace.possible(version, configs) is expected, release


def test_the_mode_is_the_option_where_possible_and_none_elsewhere():
    assert [inplace.mode(True, option) for option in ("replace", "allow", None)] == ["replace", "allow", "replace"]
    assert [inplace.mode(False, option) for option in ("replace", "allow")] == [None, None]
    # a callable is asked once, for the LIST it stands for
    asked = []
    assert inplace.mode(lambda: asked.append(1) or True, "allow") == "allow" and asked == [1]


def test_the_outlook_says_replaced_or_in_place():
    assert "replaced" in inplace.outlook("replace") and "in_place=replace" in inplace.outlook("replace")
    assert "in place" in inplace.outlook("allow") and "in_place=allow" in inplace.outlook("allow")
    assert inplace.outlook(None) is None
