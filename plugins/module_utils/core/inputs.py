# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The input gate: the options of a module call refused before any request, in one vocabulary.

Each module flow declares its ``Gate`` once: a tuple of checks (pure: the module's params in, a list of ``Problem`` out), the
ending of the failure's message and the result keys every failure of that module carries. ``flows.run.Run`` runs the
gate before it can connect; ``RolloutModule`` runs the type checks of core.settings through ``failure`` as well
(they must see the options before AnsibleModule converts them). A refused call fails with one shape: ``msg``,
``reason`` (the first problem's), ``hint``, ``ref``, ``changed=False``, ``api_requests=0``, ``progress=[]``,
``server_time=None`` (as a result before any request) and ``problems`` (``option``, ``value``, ``reason``, ``msg`` each).

Checks that need the API server (a template that does not exist, RBAC, a label selector it refuses) are no input
checks: the flows make them.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re
from typing import Any, Callable, Dict, List, Mapping, NamedTuple, Optional, Tuple

from ansible_collections.capi.rollout.plugins.module_utils.core import settings
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError

# The reasons of the gate, and what each says (the outcomes of a rollout are in core.outcomes)
INVALID_SETTING = "invalid_setting"
INVALID_SELECTION = "invalid_selection"
INVALID_INPUT = "invalid_input"
INVALID_KIND = "invalid_kind"
INVALID_HOLDER = "invalid_holder"
INVALID_DURATION = "invalid_duration"
INVALID_SWITCHED_AT = "invalid_switched_at"
INVALID_REVISION = "invalid_revision"
INVALID_AFTER = "invalid_after"
INVALID_INFRASTRUCTURE_REF = "invalid_infrastructure_ref"
NOT_A_TEMPLATE = "not_a_template"

REASONS = {
    INVALID_SETTING: "an option's type, range or text (core.settings), or a setting out of its range",
    INVALID_SELECTION: "the options select no object, or name one twice",
    INVALID_INPUT: "options that cannot be given together, or a part of one that cannot be used (a label value, a held object)",
    INVALID_KIND: "a kind the module does not act on",
    INVALID_HOLDER: "an empty lock holder",
    INVALID_DURATION: "a lock duration that is no whole number of seconds of at least 1",
    INVALID_SWITCHED_AT: "a switch time that is no RFC 3339 time",
    INVALID_REVISION: "two options that say where an undo goes back to",
    INVALID_AFTER: "a restart's after that is neither 'now' nor an RFC 3339 time",
    INVALID_INFRASTRUCTURE_REF: "a template reference without a name (its kind and group defaulted from the object are checked per object)",
    NOT_A_TEMPLATE: "a template reference to a group of Cluster API itself (the flows also refuse a template without spec.template.spec)",
}

NOTHING_CHANGED = "nothing was changed"
NOTHING_READ = "nothing was read"

# the option a sentence of core.settings names: its first word ("lease.lease_duration_seconds must be ...")
_LEADING_OPTION = re.compile(r"^[^\s:]+")
_PATH_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


class Problem(NamedTuple):
    """One refused option: ``option`` (a path such as ``lease.lease_duration_seconds`` or ``switches[0]``), the
    ``value`` given, the ``reason`` slug (REASONS) and ``msg``, the sentence that names the option, the value, what is
    accepted and the next step (``hint`` and ``ref`` when it came from a RolloutError)."""

    option: str
    value: Any
    reason: str
    msg: str
    hint: Optional[str] = None
    ref: Optional[str] = None


Check = Callable[[Mapping[str, Any]], List[Problem]]


def value_at(params: Mapping[str, Any], option: str) -> Any:
    """The value of ``option`` (``a.b[0].c``) in ``params``; None where the path ends."""
    value: Any = params
    for name, index in _PATH_PART.findall(option):
        if name and isinstance(value, Mapping):
            value = value.get(name)
        elif index and isinstance(value, list) and int(index) < len(value):
            value = value[int(index)]
        else:
            return None
    return value


def from_error(err: RolloutError, option: str, value: Any) -> Problem:
    """A RolloutError of a check that raises, as a problem: its message without the closing full stop (the gate ends
    the message), naming ``option`` when it does not."""
    text = err.message.rstrip(".")
    named = bool(option) and re.search(rf"\b{re.escape(option)}\b", text) is not None
    return Problem(option, value, err.reason or INVALID_INPUT, text if named or not option else f"{text} (option {option})",
                   hint=err.hint, ref=err.ref)


def raising(function: Callable[[Mapping[str, Any]], Any], option: Optional[str] = None) -> Check:
    """A check made of ``function`` (params in), which raises a RolloutError for bad input. Its problem names
    ``option``, or else the given option its message names first."""
    def check(params: Mapping[str, Any]) -> List[Problem]:
        try:
            function(params)
        except RolloutError as err:
            named = option or named_option(err.message, params)
            return [from_error(err, named, value_at(params, named))]
        return []
    return check


def named_option(text: str, params: Mapping[str, Any]) -> str:
    """The option given in ``params`` (not None) that ``text`` names first as a word, else the one whose text value it
    quotes ("invalid resource type 'MachineSet'"); "" when it names none."""
    given = [name for name in params if params[name] is not None and not name.startswith("_")]
    found = [(match.start(), name) for name in given for match in [re.search(rf"\b{re.escape(name)}\b", text)] if match]
    if not found:
        found = [(text.index(repr(params[name])), name) for name in given
                 if isinstance(params[name], str) and repr(params[name]) in text]
    return min(found)[1] if found else ""


def setting_problems(sentences: List[str], params: Mapping[str, Any]) -> List[Problem]:
    """The sentences of core.settings (each starts with the option it names) as problems."""
    out = []
    for sentence in sentences:
        found = _LEADING_OPTION.match(sentence)
        option = found.group() if found else ""
        out.append(Problem(option, value_at(params, option), INVALID_SETTING, sentence))
    return out


def bounds(module_bounds: Optional[Dict[str, Any]] = None) -> Check:
    """The check of core.settings.module_errors: ranges of numbers (``module_bounds``, MODULE_BOUNDS by default), an
    empty ``objects``, the rollout id."""
    def check(params: Mapping[str, Any]) -> List[Problem]:
        return setting_problems(settings.module_errors(params, module_bounds), params)
    return check


class Gate(NamedTuple):
    """What a module refuses before any request: ``checks`` in order, the ``ending`` of the message (what was not
    done), and ``empty``: the result keys every failure of the module carries, as a failure before any request has
    them (a restart's ``objects: []``)."""

    checks: Tuple[Check, ...]
    ending: str = NOTHING_CHANGED
    empty: Mapping[str, Any] = {}

    def problems(self, params: Mapping[str, Any]) -> List[Problem]:
        """Every check's problems in order, one per option (the first check to refuse an option names it)."""
        out: List[Problem] = []
        for check in self.checks:
            out += [problem for problem in check(params) if problem.option not in {seen.option for seen in out}]
        return out

    def failure(self, problems: List[Problem]) -> Dict[str, Any]:
        return failure(problems, self.ending, self.empty)


def failure(problems: List[Problem], ending: str = NOTHING_CHANGED, empty: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """The one result of a call refused before any request (fail_json's fields)."""
    first = problems[0]
    out = dict(empty or {})
    out.update(msg="; ".join(problem.msg for problem in problems) + f"; {ending}", reason=first.reason, hint=first.hint,
               ref=first.ref, changed=False, api_requests=0, progress=[], server_time=None,
               problems=[{"option": problem.option, "value": problem.value, "reason": problem.reason, "msg": problem.msg}
                         for problem in problems])
    return out
