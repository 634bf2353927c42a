# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""capi_rollout_info: select (a constant number of LISTs), optionally wait, read the MachineSets that decide an
MD's completion (and the Machines when asked), and describe every object with the core; with ``history``, its
revisions and what changed between them (the templates they reference read with one LIST per kind).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.client import reading
from ansible_collections.capi.rollout.plugins.module_utils.client import templates as templates_client
from ansible_collections.capi.rollout.plugins.module_utils.client.errors import ApiError, TransportError
from ansible_collections.capi.rollout.plugins.module_utils.client.waiter import WaitFailed
from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import history as hist
from ansible_collections.capi.rollout.plugins.module_utils.core import inputs
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError
from ansible_collections.capi.rollout.plugins.module_utils.flows.run import (
    Run, resource_entries, selection_check, selects_nothing, start_rv, wait_limit, warn_status,
)

# the selection's options and the settings' ranges (core.inputs)
GATE = inputs.Gate((selection_check(), inputs.bounds()))


def run_info(module):
    params = module.params
    run = Run(module, GATE)
    if selects_nothing(params):
        module.exit_json(changed=False, resources=[], progress=[], api_requests=0)
    run.connect(wait=wait_limit(params))
    resources = []
    selected = None
    try:
        selected = run.select(params, require_match=False)
        clusters = run.clusters(selected)
        objects = selected.objects
        if not objects and not reading.namespace_exists(run.api, selected.namespace):
            module.warn(f"namespace {selected.namespace} does not exist: nothing to show (check the namespace)")
        if params.get("wait") and objects:
            objects = run.wait(selected, objects, start_rv(selected, objects))
        machines = None
        history = params.get("history") or params.get("revision") is not None
        # MDs: the MachineSets decide completion (core.status), so they are always read.
        machine_sets = run.machine_sets(selected) if objects else []
        if params.get("machines") or (history and selected.kind == apiversion.MACHINE_DEPLOYMENT and objects):
            # with the history: how the Machines of each revision whose MachineSet exists changed (core.history)
            machines, _v = reading.list_kind(run.api, run.discovery, apiversion.MACHINE, selected.namespace)
        resources = resource_entries(objects, clusters, selected.version, run.api.server_now(), machine_sets, machines,
                                     show_machine_sets=bool(params.get("machine_sets")))
        warn_status(module, resources)
        if history:
            _add_history(run, objects, resources, machine_sets, machines, selected.version, params.get("revision"))
    except WaitFailed as err:
        run.fail(err, resources=resource_entries(err.objects, {}, selected.version, run.api.server_now(),
                                                 run.waited_machine_sets))
    except (RolloutError, ApiError, TransportError) as err:
        run.fail(err)
    module.exit_json(**run.result(changed=False, resources=resources))


def _add_history(run, objects, resources, machine_sets, machines, version, revision):
    """``history`` of every entry (core.history.history_info): all revisions newest first, or with
    ``revision`` only that one in full (an unknown revision fails, listing those there are). The templates
    the revisions reference are read with one LIST per template kind, for the changes of their specs; when
    that is refused, the history is shown without them and a warning says so. ``machines``: the Machines of the
    namespace (MDs), for the counts of the revisions whose MachineSet exists."""
    module = run.module
    required = []
    for obj in objects:
        required.extend(hist.history_template_refs(obj, machine_sets))
    templates = None
    if required:
        try:
            templates = templates_client.existing_templates(run.api, run.discovery, required)
        except (RolloutError, ApiError) as err:
            module.warn(f"the templates the revisions reference could not be read, so their spec changes are not shown: {err}")
    for obj, entry in zip(objects, resources):
        info = hist.history_info(obj, machine_sets, api_version=version, revision=revision, templates=templates,
                                 machines=machines)
        entry["history"] = info["history"]
        for warning in info["warnings"]:
            module.warn(f"{entry.get('ref') or entry.get('name')}: {warning}")
