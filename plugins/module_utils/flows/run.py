# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every module flow shares: the run of one module call (its input gate, core.inputs, before any request; the
connection, discovery, the result's ``progress`` / ``api_requests`` / ``server_time``, one way to fail) and
the reads and result entries the flows have in common. The only home of ``AnsibleModule`` outside
``plugins/modules/`` is this folder; ``client/`` never sees it.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ansible.module_utils import basic
from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.capi.rollout.plugins.module_utils.client import reading
from ansible_collections.capi.rollout.plugins.module_utils.client.connection import (
    URLLIB3_IMPORT_ERROR, Connection, ConnectionConfigError, secret_values,
)
from ansible_collections.capi.rollout.plugins.module_utils.client.discovery import Discovery
from ansible_collections.capi.rollout.plugins.module_utils.client import extensions
from ansible_collections.capi.rollout.plugins.module_utils.client.errors import (
    ApiError, OutOfTime, TransportError, api_error, transport_error,
)
from ansible_collections.capi.rollout.plugins.module_utils.client.requests import Api
from ansible_collections.capi.rollout.plugins.module_utils.client.reading import Selected
from ansible_collections.capi.rollout.plugins.module_utils.client import waiter as waiters
from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import inputs
from ansible_collections.capi.rollout.plugins.module_utils.core import resource_info
from ansible_collections.capi.rollout.plugins.module_utils.core import settings
from ansible_collections.capi.rollout.plugins.module_utils.core import timeutil
from ansible_collections.capi.rollout.plugins.module_utils.core import view as views
from ansible_collections.capi.rollout.plugins.module_utils.core import waitstate as ws
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import ref as make_ref
from ansible_collections.capi.rollout.plugins.module_utils.flows.args import auth_params


class RolloutModule(basic.AnsibleModule):
    """The AnsibleModule of every module of the collection. The options as the task gave them are checked before
    AnsibleModule converts them: it would take "12.0" and "1e3" for whole numbers, parse "a=1" into a mapping, turn a
    boolean into text, and refuse a text for a mapping without naming the option; syslog fails on a NUL byte."""

    def _set_internal_properties(self) -> None:
        super(RolloutModule, self)._set_internal_properties()
        problems = inputs.setting_problems(settings.given_problems(self.argument_spec, self.params), self.params)
        if problems:
            secrets = [self.params[name] for name, spec in self.argument_spec.items()
                       if spec.get("no_log") and self.params.get(name) is not None]
            # as given, and as the messages quote them (repr: a NUL byte is written \x00 there)
            self.no_log_values.update([str(value) for value in secrets] + [repr(value)[1:-1] for value in secrets
                                                                           if isinstance(value, str)])
            self.fail_json(**inputs.failure(problems))


class Run(object):
    """State of one module run: the API, discovery, and what goes into the result. It starts with the module's input
    gate (``gate``, declared once in its flow): a refused option fails the task before any request."""

    def __init__(self, module: AnsibleModule, gate: inputs.Gate) -> None:
        self.module = module
        refuse(module, gate)
        # Set by connect(), which every flow calls before any read: typed as set. Only result() and error() can run
        # before it (a refused option), and they check for None.
        self.api: Api = None  # type: ignore[assignment]
        self.discovery: Discovery = None  # type: ignore[assignment]
        self.progress: List[str] = []
        # The MachineSets the last wait decided with, so its result entries agree with it.
        self.waited_machine_sets: Optional[List[Dict[str, Any]]] = None
        self.extras: Dict[str, Any] = {}  # result fields of a verb's own (flows.restart: ``clones``), in success and failure
        self.writes: List[Dict[str, Any]] = []  # diffs of writes a verb made besides the objects' patches (restart: templates)
        self.verb_state: Any = None  # what a verb's planner hands to its check_plans and write_prerequisites (flows.change)
        self._in_place_possible: Optional[bool] = None

    def connect(self, dry_run: Optional[bool] = None, wait: Optional[Tuple[float, str]] = None) -> None:
        """Connect. Writes are server-side dry runs in check mode, or always with
        ``dry_run=True`` (a module that only checks what a write would do). ``wait`` is (seconds, what) for a task
        that waits (``wait_limit``): the deadline of every request of the task, set before the first one
        (client.requests.Api.end_by)."""
        module = self.module
        if URLLIB3_IMPORT_ERROR:
            module.fail_json(msg=missing_required_lib("urllib3"), exception=URLLIB3_IMPORT_ERROR)
        kubeconfig = module.params.get("kubeconfig")
        if isinstance(kubeconfig, dict):
            module.no_log_values.update(secret_values(kubeconfig))
        try:
            self.api = Api(Connection(auth_params(module.params), module_name=module._name),
                           dry_run=module.check_mode if dry_run is None else dry_run)
        except ConnectionConfigError as err:
            module.fail_json(msg=str(err), reason="connection_config", progress=[], api_requests=0)
        self.discovery = Discovery(self.api)
        if wait is not None:
            self.api.end_by(*wait)

    def result(self, **extra: Any) -> Dict[str, Any]:
        known = self.api is not None and self.api.clock.known
        out = {"progress": list(self.progress), "api_requests": self.api.count if self.api else 0,
               "server_time": timeutil.format_time(self.api.server_now()) if known else None}
        out.update(self.extras)
        out.update(extra)
        return out

    def error(self, err: Exception) -> Exception:
        """A RolloutError / ApiError / TransportError as a RolloutError (the others pass unchanged)."""
        if isinstance(err, TransportError):
            return transport_error(err)
        if isinstance(err, ApiError):
            return api_error(err, host=self.api.host if self.api else None)
        return err

    def timed_out(self, err: OutOfTime, refs: List[str], state: Optional[Mapping[str, Any]] = None) -> RolloutError:
        """The failure of a waiting task that got no answer before its deadline (client.errors.OutOfTime): reason
        ``wait_timeout``, naming the objects waited for and what was last seen of them (``state``, a core.waitstate);
        the ``unreachable`` shape, naming them too, when the API server has not answered in this wait at all."""
        names = ", ".join(refs)
        if state is None and not self.api.reached:
            unreachable = transport_error(err)
            return RolloutError(f"{unreachable.msg} (while waiting for {names})", reason=unreachable.reason,
                                hint=unreachable.hint)
        last = [(state or {}).get("lines", {}).get(ref) for ref in refs]
        seen = "; ".join(line for line in last if line)
        return RolloutError(
            f"{names}: not seen complete before the end of the wait: the API server {err.host} stopped answering "
            f"({err.cause})" + (f"; last seen: {seen}" if seen else ""), reason=ws.WAIT_TIMEOUT,
            hint=f"check that the API server {err.host} answers (a hung kube-apiserver or etcd, or an overloaded one), then "
                 "re-run the wait; raise wait_timeout if it is only slow")

    def fail(self, err: Exception, **extra: Any) -> None:
        """fail_json for a RolloutError / ApiError / TransportError (the ref is in the message)."""
        err = self.error(err)
        fields = err.to_dict() if isinstance(err, RolloutError) else {"msg": str(err)}
        fields.update(extra)
        self.module.fail_json(**self.result(**fields))

    # ----- reads -----
    def in_place_possible(self, api_version: str) -> bool:
        """Whether CAPI may update Machines in place on this management cluster (client.extensions): one LIST of
        ExtensionConfigs, asked once per run and only when a flow needs the answer; its warning becomes the task's."""
        if self._in_place_possible is None:
            possible, warning = extensions.in_place_possible(self.api, api_version)
            if warning:
                self.module.warn(warning)
            self._in_place_possible = possible
        return self._in_place_possible

    def select(self, options: Dict[str, Any], require_match: bool) -> Selected:
        """The objects the selection ``options`` (the module's, or a verb's ``selection_options``) name."""
        return reading.select(self.api, self.discovery, options, require_match=require_match)

    def select_kind(self, kind: str, namespace: str, label_selectors: Optional[List[str]] = None) -> Selected:
        """Every ``kind`` object of ``namespace`` matching ``label_selectors``, whatever the module's own options."""
        return reading.select(self.api, self.discovery, {"kind": kind, "namespace": namespace,
                                                         "label_selectors": label_selectors or None})

    def clusters(self, selected: Selected) -> Dict[str, Dict[str, Any]]:
        return reading.clusters_for(self.api, self.discovery, selected.objects, selected.namespace)

    def machine_sets(self, selected: Selected) -> List[Dict[str, Any]]:
        """The MachineSets of the selection's namespace (one LIST); [] for KCPs, which have none."""
        return self.machine_sets_at(selected)[0]

    def machine_sets_at(self, selected: Selected) -> Tuple[List[Dict[str, Any]], Optional[str]]:
        """(MachineSets of the selection's namespace, the list's resourceVersion); ([], None) for KCPs."""
        if selected.kind != apiversion.MACHINE_DEPLOYMENT:
            return [], None
        items, _version, rv = reading.list_kind_at(self.api, self.discovery, apiversion.MACHINE_SET, selected.namespace)
        return items, rv

    def wait(self, selected: Selected, objects: List[Dict[str, Any]], resource_version: Optional[str],
             holds: Optional[Dict[str, Any]] = None) -> List[Dict[str, Any]]:
        """Wait for the rollouts of ``objects`` (client.waiter, watched from ``resource_version``), those of ``holds``
        held to their topology change; returns them as last seen, or raises WaitFailed."""
        params = self.module.params
        waiter = self.waiter([waiters.Group.of(selected, objects, resource_version)], params["wait_timeout"],
                             params["stall_timeout"], holds=holds,
                             topology_reads=waiters.TopologyReads(self.api, self.discovery) if holds else None)
        try:
            waiter.run()
        except OutOfTime as err:
            raise self.timed_out(err, waiter.refs, waiter.state)
        finally:
            self.progress.extend(waiter.progress)
            self.waited_machine_sets = waiter.machine_sets.get(selected.namespace)
        if waiter.state["phase"] == ws.FAILED:
            raise waiter.failure()
        return waiter.objects()

    def waiter(self, groups: List[waiters.Group], wait_timeout: float, stall_timeout: float, **options: Any) -> waiters.Waiter:
        """The one waiting engine (client.waiter) over this run's API. Its clock is the API server's: the times it
        reports (started, rollout_finished, soak_finished, ended) line up with the cluster's own, and its state,
        carried from one call to the next, stays consistent whatever the Ansible host's clock says."""
        return waiters.Waiter(self.api, groups, wait_timeout, stall_timeout,
                              clock=lambda: self.api.server_now().timestamp(), sleep=self.api.sleep,
                              machine_sets_lister=waiters.machine_sets_lister(self.api, self.discovery),
                              machines_lister=waiters.machines_lister(self.api, self.discovery), **options)


def refuse(module: AnsibleModule, gate: inputs.Gate) -> None:
    """Fail the task when ``gate`` refuses its options (core.inputs): before any request, so a wait that cannot succeed
    never follows a write."""
    problems = gate.problems(module.params)
    if problems:
        module.fail_json(**gate.failure(problems))


def selection_check(options: Any = None) -> inputs.Check:
    """The check of the options that select objects (core.selection: the kind, empty names or label selectors);
    ``options``: params -> those options (a verb's ``selection_options``), the params themselves by default."""
    return inputs.raising(lambda params: reading.selection_from_params(options(params) if options else params))


def wait_limit(params: Dict[str, Any], waits: bool = True) -> Optional[Tuple[float, str]]:
    """``wait`` of Run.connect for restart, pause, undo and info: (wait_timeout, what) when the task waits, else None."""
    if not (waits and params.get("wait")):
        return None
    return params["wait_timeout"], f"wait_timeout={params['wait_timeout']}s"


def start_rv(selected: Selected, objects: List[Dict[str, Any]]) -> Optional[str]:
    if selected.list_resource_version:
        return selected.list_resource_version
    versions = [(obj.get("metadata") or {}).get("resourceVersion") for obj in objects]
    numeric = sorted(int(v) for v in versions if v and str(v).isdigit())
    return str(numeric[0]) if numeric else None


def resource_entries(objects: List[Dict[str, Any]], clusters: Dict[str, Dict[str, Any]], version: Optional[str],
                     now: datetime.datetime, machine_sets: Optional[List[Dict[str, Any]]] = None,
                     machines: Optional[List[Dict[str, Any]]] = None, show_machine_sets: bool = False) -> List[Dict[str, Any]]:
    out = []
    for obj in objects:
        cluster = clusters.get(views.cluster_name_of(obj))
        out.append(resource_info.resource_entry(obj, now=now, cluster=cluster, api_version=version,
                                                machine_sets=machine_sets, machines=machines,
                                                show_machine_sets=show_machine_sets))
    return out


def warn_status(module: AnsibleModule, resources: List[Dict[str, Any]]) -> None:
    """Status warnings (core.status, e.g. upstream bug #13182) as Ansible warnings, once per object."""
    for entry in resources:
        for warning in (entry.get("rollout") or {}).get("warnings") or []:
            module.warn(f"{entry['ref']}: {warning}")


def selects_nothing(params: Dict[str, Any], option: str = "names") -> bool:
    """Whether ``option`` (a list of names: ``names``, or a verb's own such as restart's ``switches``) is given as []
    and nothing else selects objects."""
    return params.get(option) == [] and not (params.get("cluster_name") or params.get("label_selectors"))


def single_ref(params: Dict[str, Any]) -> Optional[str]:
    """The ref of the one object ``name`` (or a single ``names``) selects, for an error of the input gate; None when
    the options select more or otherwise."""
    names = params.get("names") or []
    single = params.get("name") or (names[0] if len(names) == 1 else None)
    if not single:
        return None
    kind = params.get("kind") or apiversion.MACHINE_DEPLOYMENT
    return make_ref(apiversion.normalize_kind(kind) or kind, params.get("namespace") or None, single)
