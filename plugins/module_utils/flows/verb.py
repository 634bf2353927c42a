# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The interface of a verb of the change flow (flows.change.run_change), as a type.

A verb is a module of this folder (flows/restart.py, flows/pause.py, flows/undo.py) with the functions below;
its decisions are in the core (core/<verb>.py, whose planner returns a ``core.plan.Plan``). The change flow calls
them in this order, before its first write: ``refuse_early`` (no request made yet), ``selection_options`` to select its
objects, ``planner`` once, the plan function it returns once per selected object, ``check_plans`` over every plan,
``write_prerequisites``; its ``RESULT_KEYS`` say what its
result entries carry besides every verb's. A write that must be retried (a failed
``test`` or a 409) calls the plan function again with the object read fresh. ``make typecheck`` checks that each
verb module passed to run_change by its Ansible module has these functions.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime
from typing import Any, Callable, Dict, List, Optional, Protocol, Tuple

from ansible_collections.capi.rollout.plugins.module_utils.client.reading import Selected
from ansible_collections.capi.rollout.plugins.module_utils.core.plan import Plan
from ansible_collections.capi.rollout.plugins.module_utils.flows.run import Run

# a Kubernetes object as read (an MD or KCP, a Cluster, ...)
KubeObject = Dict[str, Any]
# plans one object, read now or read again for a retried write
PlanFunction = Callable[[KubeObject], Plan]


class Verb(Protocol):
    """What flows.change needs of a verb (a module satisfies it with module-level functions)."""

    @property
    def RESULT_KEYS(self) -> Tuple[str, ...]:  # noqa: N802 (a module constant in each verb)
        """The keys of its plans that its result entries carry besides every verb's (flows.change._RESULT_KEYS): those
        its module's RETURN documents under objects."""

    def refuse_early(self, params: Dict[str, Any]) -> None:
        """Raise a core.errors.RolloutError for what is wrong whatever the objects are; no request is made."""

    def planner(self, run: Run, selected: Selected, clusters: Dict[str, KubeObject], now: datetime.datetime,
                actor: Optional[str]) -> PlanFunction:
        """The function that plans one object (``clusters``: the selection's Clusters by name; ``now``: the API
        server's time; ``actor``: who the history records). It may read a constant number of objects first."""

    def check_plans(self, run: Run, planned: List[Tuple[KubeObject, Plan]]) -> None:
        """Checks over all (object, plan) pairs before the first write (raise a RolloutError to refuse)."""

    def selection_options(self, params: Dict[str, Any]) -> Dict[str, Any]:
        """The options that select its objects (client.reading.selection_from_params): ``params``, or with ``names``
        taken from an option of its own (restart's ``switches``)."""

    def write_prerequisites(self, run: Run, planned: List[Tuple[KubeObject, Plan]]) -> None:
        """What its writes need written first (restart's new templates), called once every check passed (its own and
        flows.change's field owners), so a refusal leaves nothing behind."""
