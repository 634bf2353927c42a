# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether CAPI updates the Machines of a template switch in place or replaces them: the one rule that
capi_rollout_restart writes by (core.restart) and capi_refresh_plan previews with (core.refresh), for a plain
MachineDeployment / KubeadmControlPlane and for one a Cluster topology switches (paths (a), (b), (c) of
docs/clusterclass.md) alike.

CAPI v1.12+ with the feature gate InPlaceUpdates updates Machines in place only through a runtime extension that
serves the in-place hooks; once registered, its ExtensionConfig lists them in ``status.handlers`` (cluster-api v1.12.3
docs/book/src/tasks/experimental-features/runtime-sdk/implement-in-place-update-hooks.md, and the same at v1.14.0).
The feature gate itself cannot be read through the API: an ``UpdateMachine`` handler is taken to mean in-place
updates are possible. Where they are, ``in_place`` "replace" writes the rollout trigger with the switch (every
Machine is replaced) and "allow" lets CAPI move Machines to the new MachineSet and update them
(``reconcileInPlaceUpdateIntent``, internal/controllers/machinedeployment/machinedeployment_rollout_rollingupdate.go at
v1.12.3); a topology switch rotates only the template whose values change, so the same holds for it
(``reconcileReferencedTemplate``, core/reconcilers/topology/cluster/reconcile_state.go at v1.14.0).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion

UPDATE_HOOK = "UpdateMachine"
REPLACE = "replace"
ALLOW = "allow"
CHOICES = (REPLACE, ALLOW)


def asked(version):
    """Whether a management cluster serving CAPI API ``version`` may have an update extension at all: the in-place
    hooks came with v1.12, whose API is v1beta2 (a v1beta1 one is not asked: one request saved)."""
    return version == apiversion.V1BETA2


def possible(version, extension_configs):
    """Whether CAPI may update Machines in place on a management cluster serving ``version`` with these
    ExtensionConfigs (as listed): an ``UpdateMachine`` handler in the status of one of them."""
    return asked(version) and any(((handler.get("requestHook") or {}).get("hook") == UPDATE_HOOK)
                                  for item in extension_configs or []
                                  for handler in ((item.get("status") or {}).get("handlers") or []))


def mode(is_possible, in_place):
    """What a template switch does with the Machines (the ``in_place`` of a restart's plan and of a refresh plan's
    object): None where CAPI cannot update them in place (replaced, nothing to write for it), else the option
    ``in_place`` ("replace": the switch writes the rollout trigger with it; "allow"). ``is_possible``: a bool, or a
    callable returning one (one LIST of ExtensionConfigs), called only here."""
    if not (is_possible() if callable(is_possible) else is_possible):
        return None
    return in_place or REPLACE


def outlook(switch_mode):
    """The words of a refresh plan's note for ``switch_mode`` (core.inplace.mode), None for None (replaced, as ever)."""
    if switch_mode == ALLOW:
        return ("CAPI may update its Machines in place (in_place=allow; InPlaceUpdates with an update extension here): "
                "the Machines whose change the extension accepts keep their names, the others are replaced")
    if switch_mode == REPLACE:
        return ("its Machines are replaced: CAPI could update them in place here (InPlaceUpdates with an update "
                "extension), so the switch writes the rollout trigger with it (in_place=replace)")
    return None
