# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.client import extensions
from ansible_collections.capi.rollout.plugins.module_utils.client.errors import ApiError


class _Api(object):
    host = "https://mgmt"

    def __init__(self, answer):
        self.answer, self.paths = answer, []

    def list(self, path):
        self.paths.append(path)
        if isinstance(self.answer, ApiError):
            raise self.answer
        return self.answer


def _config(*hooks):
    hook_api = "hooks.runtime.cluster.x-k8s.io/v1alpha1"
    return {"status": {"handlers": [{"name": f"{h.lower()}.ext", "requestHook": {"apiVersion": hook_api, "hook": h}}
                                    for h in hooks]}}


def test_an_update_machine_handler_makes_in_place_updates_possible():
    api = _Api({"items": [_config("BeforeClusterUpgrade"), _config("CanUpdateMachineSet", "UpdateMachine")]})
    assert extensions.in_place_possible(api) == (True, None)
    assert api.paths == ["/apis/runtime.cluster.x-k8s.io/v1beta2/extensionconfigs"]  # one LIST


@pytest.mark.parametrize("answer", [{"items": []}, {"items": [_config("BeforeClusterUpgrade")]},
                                    {"items": [{"spec": {}}]}, ApiError(404)])
def test_no_update_extension_or_no_runtime_api_means_replacement_anyway(answer):
    assert extensions.in_place_possible(_Api(answer)) == (False, None)


def test_credentials_that_may_not_list_assume_possible_and_name_the_rule():
    possible, warning = extensions.in_place_possible(_Api(ApiError(403)))
    assert possible and "extensionconfigs.runtime.cluster.x-k8s.io (403)" in warning and "docs/rbac.yml" in warning


def test_other_errors_fail():
    with pytest.raises(Exception) as err:
        extensions.in_place_possible(_Api(ApiError(500)))
    assert "extensionconfigs" in str(err.value)


def test_a_v1beta1_management_cluster_is_not_asked():
    api = _Api({"items": [_config("UpdateMachine")]})
    assert extensions.in_place_possible(api, "v1beta1") == (False, None) and api.paths == []
