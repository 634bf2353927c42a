# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Checks of the inputs that argument specs cannot express, made before anything is read or written: the one
table of the ranges of every duration, count and percentage (BOUNDS); the modules' options as the task gave them
(Ansible would turn "12.0" or "1e3" into a whole number, "a=1" into a mapping, a boolean into text), free of control
characters; the hardware_refresh role's settings, with variables of its prefix that it does not know (typos such as
``hardware_refresh_soak_second``); and every variable of playbooks/hardware_refresh.yml, with the names close to one
of them (``max_inflight``). Survey answers are text: a whole number or a boolean as text is taken, anything that is
not one ("5m", "12.5", "1e11", "maybe", "y") is refused, never guessed."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import difflib
import math
import re

from ansible_collections.capi.rollout.plugins.module_utils.core import timeutil

MINUTE = 60
HOUR = 3600
DAY = 86400


class Bound(object):
    """The range of one duration, count or percentage: ``low`` to ``high`` ``unit``, ``what`` it is, ``why`` the
    upper end is where it is."""

    def __init__(self, low, high, unit, what, why, percent=False):
        self.low = low
        self.high = high
        self.unit = unit
        self.what = what
        self.why = why
        self.percent = percent  # also "N%" (1%-100%) of the objects or hosts it counts


# The one home of the range of every duration, count and percentage the modules, the hardware_refresh role and
# the playbooks take (documented in the modules, roles/hardware_refresh/meta/argument_specs.yml, the playbook header
# and docs/hardware-refresh.md). The upper ends are sane, not technical: a value past them is a typo (an hour
# given in milliseconds, a survey's 1e11) that would hold a lock or a wave for ever.
BOUNDS = {
    "soak_seconds": Bound(0, DAY, "seconds", "how long every object must stay healthy after a rollout (0: no soak)",
                          "a soak holds the lock and its wave: a longer health gate is a separate run"),
    "wait_timeout": Bound(1, 7 * DAY, "seconds", "how long rollouts may take",
                          "a week: no rollout that is still moving takes longer, and the lock is held meanwhile"),
    "stall_timeout": Bound(1, DAY, "seconds", "how long no replica count or condition may change before it counts as stalled",
                           "a day without any progress is a stall"),
    "poll_interval": Bound(1, HOUR, "seconds", "between two attempts to open a watch or read again",
                           "an hour: a longer pause would miss the end of a rollout"),
    "progress_interval": Bound(1, HOUR, "seconds", "between two progress lines and lock renewals while waiting",
                               "an hour: a longer silence would let the lock expire"),
    "progress_verbosity": Bound(0, 6, "-v", "how many -v the progress lines need (0: always shown)",
                                "ansible-playbook has no more than 6 -v"),
    "lease_duration_seconds": Bound(1, DAY, "seconds", "how long the lock stays valid without renewal",
                                    "a run that dies blocks the others for at most a day"),
    "lock_duration": Bound(3, DAY, "seconds", "how long the lock stays valid without renewal (renewed every third)",
                           "a run that dies blocks the others for at most a day"),
    "lock_wait_timeout": Bound(0, DAY, "seconds", "how long to wait for another run's lock (0: fail at once)",
                               "a day: a run waiting longer holds its batch for another run's whole refresh"),
    "window_minutes": Bound(0, 7 * 24 * 60, "minutes", "from the start of the run to the end of the window (0: no such end)",
                            "a week: a longer window is no maintenance window"),
    "history_limit": Bound(1, 100, "entries", "of rollout history kept on each object",
                           "100 records stay far inside the API server's 256 KiB for all annotations of an object"),
    "max_in_flight": Bound(1, 10000, "objects", "rolling at the same time (per wave), or a percentage of them",
                           "10000 is more than any management cluster holds", percent=True),
    "on_delete_max_unavailable": Bound(1, 10000, "Machines", "of an OnDelete pool unavailable at a time while the run "
                                       "deletes its old Machines", "10000 is more than any pool holds"),
    "drain_timeout": Bound(1, DAY, "seconds", "a pool's node drain timeout while its wave runs: after it CAPI deletes a "
                           "Machine whose drain is not done (empty: each pool's own, forever when unset)",
                           "a day: a longer drain holds the wave and the lock"),
    "batch_size": Bound(1, 10000, "management clusters", "rolled at the same time (a batch), or a percentage of them",
                        "10000 is more than any fleet holds", percent=True),
    "failure_budget_percent": Bound(0, 100, "percent", "of a batch's management clusters that may fail before the later "
                                    "batches are stopped", "a percentage"),
}

# option -> bound: the numbers of every module (core.inputs.bounds: the input gate checks them before any request)
MODULE_BOUNDS = {
    "wait_timeout": "wait_timeout", "stall_timeout": "stall_timeout", "soak_seconds": "soak_seconds",
    "poll_interval": "poll_interval", "progress_interval": "progress_interval", "progress_verbosity": "progress_verbosity",
    "history_limit": "history_limit",
    "lease_duration_seconds": "lease_duration_seconds", "max_in_flight": "max_in_flight",
    "on_delete_max_unavailable": "on_delete_max_unavailable", "drain_timeout": "drain_timeout",
}
# capi_rollout_lock: its wait_timeout is how long to wait for another holder (0: not at all)
LOCK_BOUNDS = dict(MODULE_BOUNDS, wait_timeout="lock_wait_timeout")
# dict options whose own options are bounded too: the lease a writing module renews, the lock capi_refresh_plan probes
NESTED_BOUNDS = ("lease", "lock")

# variable of the hardware_refresh role -> bound
ROLE_BOUNDS = {
    "hardware_refresh_wait_timeout": "wait_timeout",
    "hardware_refresh_stall_timeout": "stall_timeout",
    "hardware_refresh_soak_seconds": "soak_seconds",
    "hardware_refresh_poll_interval": "poll_interval",
    "hardware_refresh_progress_interval": "progress_interval",
    "hardware_refresh_lock_duration": "lock_duration",
    "hardware_refresh_lock_wait_timeout": "lock_wait_timeout",
    "hardware_refresh_window_minutes": "window_minutes",
    "hardware_refresh_max_in_flight": "max_in_flight",
    "hardware_refresh_on_delete_max_unavailable": "on_delete_max_unavailable",
    "hardware_refresh_drain_timeout": "drain_timeout",
}

# Task files of the hardware_refresh role's hooks (included once per wave): variable -> its playbook variable
ROLE_HOOKS = {"hardware_refresh_before_wave": "before_wave", "hardware_refresh_after_wave": "after_wave"}
HOOK_ACCEPTED = ("the path of a task file, absolute or relative to the directory ansible-playbook runs in "
                 "(empty: no hook)")

# Every variable of playbooks/hardware_refresh.yml (and playbooks/restart.yml, which imports it) -> what it takes.
# bool: true/false (yes/no, on/off, 1/0 as survey text); list: a list or text split at commas and blanks; lines: a list
# or text, one item per line; dict: a mapping or YAML/JSON text of one; id: a refresh id; time: RFC 3339; text: one
# line of text; file: a task file that exists (hooks); choice:<a>|<b>; bound:<name of BOUNDS>. Empty (an unanswered survey question) keeps the default.
PLAYBOOK_VARIABLES = {
    "refresh_id": "id", "restart_id": "id", "reason": "text", "restart": "bool",
    "template_overrides": "dict", "object_templates": "dict",
    "clusters": "list", "machine_deployments": "list", "label_selectors": "lines", "namespaces": "list",
    "control_plane": "bool", "workers": "bool", "canary": "bool", "undo_on_failure": "bool", "lock_force": "bool",
    "allow_empty": "bool", "sliced": "bool",
    "on_blocked": "choice:fail|skip", "field_owners": "choice:refuse|warn|ignore", "in_place": "choice:replace|allow",
    "on_delete": "choice:skip|replace", "on_delete_max_unavailable": "bound:on_delete_max_unavailable",
    "drain_timeout": "bound:drain_timeout", "undrainable": "choice:continue|fail",
    "not_before": "time", "not_after": "time",
    "max_in_flight": "bound:max_in_flight", "batch_size": "bound:batch_size",
    "failure_budget_percent": "bound:failure_budget_percent",
    "soak_seconds": "bound:soak_seconds", "wait_timeout": "bound:wait_timeout", "stall_timeout": "bound:stall_timeout",
    "poll_interval": "bound:poll_interval", "lock_wait_timeout": "bound:lock_wait_timeout",
    "lock_duration": "bound:lock_duration", "window_minutes": "bound:window_minutes",
    "report_dir": "text", "rollout_hosts": "text",
    "before_wave": "file", "after_wave": "file",
}
# Variables set by others than the caller of the playbook (Ansible, AWX, inventories, the roles' own): never taken for
# a typo of a playbook variable.
FOREIGN_PREFIXES = ("ansible_", "hardware_refresh_", "rollout_report_", "capi_", "awx_", "tower_", "_")

# Booleans as the ``bool`` filter of the roles takes them: anything else ("maybe", and "y" / "t", which Ansible's
# argument specs take but the ``bool`` filter would turn into false) is refused, not guessed.
TRUE_TEXT = ("true", "yes", "on", "1")
FALSE_TEXT = ("false", "no", "off", "0")
BOOL_ACCEPTED = "true or false (also yes/no, on/off, 1/0)"

_WHOLE_NUMBER = re.compile(r"^\s*[+-]?[0-9]+\s*$")
_PERCENT = re.compile(r"^\s*([+-]?[0-9]+)\s*%\s*$")
# C0 control characters and DEL except tab, line feed and carriage return
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
TEXT_MAX_CHARS = 4096  # one line of text (a reason, a path, a host pattern)
SHOWN_CHARS = 80       # of a bad value in a message


def shown(value):
    """``value`` for a message: its repr, cut to SHOWN_CHARS with its full length when longer."""
    text = repr(value)
    if len(text) <= SHOWN_CHARS:
        return text
    size = len(value) if isinstance(value, (str, list, dict)) else len(text)
    return f"{text[:SHOWN_CHARS]}... ({size} characters)" if isinstance(value, str) else f"{text[:SHOWN_CHARS]}... ({size} items)"


def kind_of(value):
    """The kind of ``value`` in words (Ansible's own subclasses of dict, list and str named as their base)."""
    for kind, name in ((bool, "a boolean"), (int, "a number"), (float, "a number"), (str, "text"), (dict, "a mapping"),
                       (list, "a list")):
        if isinstance(value, kind):
            return name
    return type(value).__name__


def whole_number(value):
    """``value`` as an int when it is one (not a bool) or text of one (an AWX answer such as " 30 "); else None -
    "12.5", "1e11", "5m", 12.0 and True are not whole numbers."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _WHOLE_NUMBER.match(value):
        return int(value)
    return None


def boolean(value):
    """``value`` as a bool when it is one or its text (TRUE_TEXT / FALSE_TEXT, any case, or 0 / 1); else None."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in TRUE_TEXT:
            return True
        if text in FALSE_TEXT:
            return False
    return None


def _range_text(bound):
    unit = f" {bound.unit}" if bound.unit else ""
    return f"from {bound.low} to {bound.high}{unit}"


def bound_problem(name, value, key):
    """None when ``value`` is in the range of BOUNDS[``key``] (a whole number, or for a ``percent`` bound also
    "N%" with N from 1 to 100), else the sentence that names ``name``, the value and what is accepted."""
    bound = BOUNDS[key]
    number = whole_number(value)
    if number is not None and bound.low <= number <= bound.high:
        return None
    if bound.percent and isinstance(value, str):
        match = _PERCENT.match(value)
        if match and 1 <= int(match.group(1)) <= 100:
            return None
    accepted = f"a whole number {_range_text(bound)}" + (" or a whole percentage from 1% to 100%" if bound.percent else "")
    return f"{name} must be {accepted} ({bound.what}; at most {bound.high}: {bound.why}), got {shown(value)}"


def text_problem(name, value, max_chars=TEXT_MAX_CHARS):
    """None for text without control characters of at most ``max_chars``; else the problem, in words."""
    if not isinstance(value, str):
        return f"{name} must be text, got {kind_of(value)} {shown(value)}"
    found = _CONTROL.search(value)
    if found:
        return (f"{name} contains the control character {found.group()!r} at position {found.start()} "
                f"({shown(value)}); give it without control characters")
    if len(value) > max_chars:
        return f"{name} is {len(value)} characters long ({shown(value)}); at most {max_chars} are accepted"
    return None


def control_character_problems(name, value):
    """A problem for every string inside ``value`` (an option as given: text, lists, mappings, their keys) that holds a
    control character other than tab and line breaks (a NUL byte, for example)."""
    if isinstance(value, str):
        found = _CONTROL.search(value)
        return [] if not found else [f"{name} contains the control character {found.group()!r} at position {found.start()} "
                                     f"({shown(value)}); give it without control characters"]
    out = []
    if isinstance(value, dict):
        for key, item in value.items():
            out += control_character_problems(f"{name}.{key}", key) + control_character_problems(f"{name}.{key}", item)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out += control_character_problems(f"{name}[{index}]", item)
    return out


def time_problem(name, value):
    """None for an RFC 3339 time (or nothing); else the problem, in words."""
    if value in (None, ""):
        return None
    try:
        timeutil.parse_time(value)
    except ValueError:
        return (f"{name}: {shown(value)} is not an RFC 3339 time such as 2026-11-30T22:00:00Z (a real date and time, "
                f"year 9999 at most, with Z or an offset such as +02:00)")
    return None


def file_problem(name, value, found):
    """None for nothing or a task file that exists; else the problem, in words. ``found``: {value: (the path it
    names on the Ansible host, whether that is a file)}, looked up by the caller (the core does no I/O)."""
    if value in (None, ""):
        return None
    problem = text_problem(name, value)
    if problem:
        return problem
    path, exists = found.get(value, (value, False))
    if exists:
        return None
    return (f"{name}: {shown(value)} is no task file on the Ansible host ({path} does not exist or is not a file); give "
            f"{HOOK_ACCEPTED}")


def window_problems(not_before, not_after, names=("not_before", "not_after")):
    """The two ends of a maintenance window: each an RFC 3339 time, the end later than the start."""
    out = [problem for problem in (time_problem(names[0], not_before), time_problem(names[1], not_after)) if problem]
    if not out and not_before and not_after and timeutil.parse_time(not_after) <= timeutil.parse_time(not_before):
        out.append(f"{names[1]} ({not_after}) must be later than {names[0]} ({not_before})")
    return out


def _number(value):
    """``value`` (a number or its text) as a finite float, or None."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _spec_type_problem(name, spec, value):
    """The problem of one option's value as given against its argument spec's type, or None: Ansible would convert
    "12.0" and "1e3" to whole numbers, text such as "a=1" to a mapping and a boolean or a list to text."""
    kind = spec.get("type", "str")
    if value is None or kind == "raw":
        return None
    if kind == "int":
        if whole_number(value) is None:
            return f"{name} must be a whole number, got {kind_of(value)} {shown(value)}"
    elif kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float, str)) or _number(value) is None:
            return f"{name} must be a number, got {kind_of(value)} {shown(value)}"
    elif kind in ("str", "path"):
        if isinstance(value, (bool, float, list, dict)):
            return f"{name} must be text, got {kind_of(value)} {shown(value)}"
    elif kind == "dict":
        if not isinstance(value, dict):
            return f"{name} must be a mapping, got {kind_of(value)} {shown(value)}"
    elif kind == "list":
        element = spec.get("elements")
        items = value if isinstance(value, list) else None
        # text is a list of names separated by commas (Ansible's own rule), never of mappings
        if items is None and not (isinstance(value, str) and element in (None, "str")):
            return f"{name} must be a list, got {kind_of(value)} {shown(value)}"
        for index, item in enumerate(items or []):
            if element == "str" and isinstance(item, (bool, float, list, dict)):
                return f"{name}[{index}] must be text, got {kind_of(item)} {shown(item)}"
            if element == "dict" and not isinstance(item, dict):
                return f"{name}[{index}] must be a mapping, got {kind_of(item)} {shown(item)}"
    return None


def _option_names(spec):
    """{name or alias: option} of an argument spec."""
    names = {}
    for option, option_spec in spec.items():
        for alias in [option] + list(option_spec.get("aliases") or []):
            names[alias] = option
    return names


def given_type_problems(spec, given, prefix=""):
    """Problems of the options as given (before AnsibleModule converted them) against the argument spec ``spec``,
    sub-options included; options under an alias are named as given."""
    out = []
    names = _option_names(spec)
    for given_name, value in sorted((given or {}).items()):
        option = names.get(given_name)
        if option is None:
            continue
        option_spec = spec[option]
        name = prefix + given_name
        problem = _spec_type_problem(name, option_spec, value)
        if problem:
            out.append(problem)
            continue
        sub = option_spec.get("options")
        if sub and isinstance(value, dict):
            out += given_type_problems(sub, value, name + ".")
        elif sub and isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, dict):
                    out += given_type_problems(sub, item, f"{name}[{index}].")
    return out


def bound_problems(values, bounds):
    """A problem for every value of ``values`` ({name: value}) out of the range of its bound (``bounds``: {name: key
    of BOUNDS}); names not in ``values`` (or None) are not checked."""
    return [problem for problem in (bound_problem(name, values[name], key) for name, key in sorted(bounds.items())
                                    if values.get(name) is not None) if problem]


# A rollout id is recorded in every object's history and compared on re-runs: no blanks, no free text.
_ROLLOUT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$")
# hardware_refresh_id is the rollout id of every switched object and names the report directory and the undo id.
_REFRESH_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,62}$")
REFRESH_ID_ACCEPTED = "1-63 letters, digits, '.', '_', ':' or '-', starting with a letter or digit"


def given_problems(spec, given):
    """The problems of the options as the task gave them (``given``, before AnsibleModule converted them) against the
    argument spec ``spec``: their types (given_type_problems), and control characters in the text of the others."""
    out = []
    names = _option_names(spec)
    for name, value in sorted(given.items()):
        if name in names:  # not Ansible's own (_ansible_check_mode, ...)
            out += given_type_problems(spec, {name: value}) or control_character_problems(name, value)
    return out


def module_errors(params, bounds=None):
    """Problems with a module's options that its argument spec cannot express, in words, before any request: the
    ranges of ``bounds`` (MODULE_BOUNDS by default; {option: key of BOUNDS}, the lease's and lock's own included), an
    empty ``objects`` and the rollout id."""
    out = []
    bounds = MODULE_BOUNDS if bounds is None else bounds
    out += bound_problems(params, {name: key for name, key in bounds.items() if name in params})
    for nested in NESTED_BOUNDS:
        if isinstance(params.get(nested), dict):
            inner = params[nested]
            inner_bounds = {name: key for name, key in bounds.items() if name in inner}
            out += [f"{nested}.{problem}" for problem in bound_problems(inner, inner_bounds)]
    if params.get("objects") == []:
        out.append("objects is empty: name at least one MachineDeployment or control plane to wait for")
    rollout_id = params.get("rollout_id")
    if rollout_id is not None and not _ROLLOUT_ID.match(str(rollout_id)):
        out.append(f"rollout_id must be 1-128 letters, digits, '.', '_', ':', '/' or '-', starting with a letter or digit "
                   f"(it is recorded in the history of every object and compared on re-runs), got {shown(rollout_id)}")
    return out


def refresh_errors(values):
    """The hardware_refresh role's rules between its options: a usable refresh id, a maintenance window of RFC 3339
    times, and new templates that differ from the current ones (some override, or restart mode). Options not in
    ``values`` are not checked."""
    out = []
    if "hardware_refresh_id" in values:
        refresh_id = values["hardware_refresh_id"]
        if not isinstance(refresh_id, str) or not _REFRESH_ID.match(refresh_id):
            out.append(f"hardware_refresh_id must be {REFRESH_ID_ACCEPTED} (it is recorded as the "
                       f"rollout id of every switched object), got {'nothing' if refresh_id is None else refresh_id}")
    if "hardware_refresh_not_before" in values or "hardware_refresh_not_after" in values:
        out += window_problems(values.get("hardware_refresh_not_before"), values.get("hardware_refresh_not_after"),
                               ("hardware_refresh_not_before", "hardware_refresh_not_after"))
    if "hardware_refresh_restart" in values and not (
            boolean(values["hardware_refresh_restart"]) or values.get("hardware_refresh_template_overrides")
            or values.get("hardware_refresh_object_templates")):
        out.append("hardware_refresh_template_overrides is empty, so every new template would be a copy of the current one. "
                   "Give the new hardware or image (for example the instance type), or set hardware_refresh_restart "
                   "(playbooks/restart.yml) to replace the Machines on their current templates.")
    return out


def _closest(name, known):
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.8)
    return f"; did you mean {close[0]}?" if close else ""


def errors(values, known, present, bounds=None, types=None, files=None):
    """Every problem with ``values`` ({name: value}) of the hardware_refresh role, in words: a value out of its range
    (``bounds``: ROLE_BOUNDS by default), a boolean that is none (``types``: {name: the argument spec's type}), a name
    in ``present`` (variables defined with the role's prefix) that is not in ``known`` (the role's options), and the
    rules between the role's options (``refresh_errors``), and hooks that name no task file (``files``: see
    file_problem)."""
    out = bound_problems(values, ROLE_BOUNDS if bounds is None else bounds)
    for name in sorted(ROLE_HOOKS):
        problem = file_problem(name, values.get(name), files or {})
        if problem:
            out.append(problem)
    for name, kind in sorted((types or {}).items()):
        if kind == "bool" and values.get(name) is not None and boolean(values[name]) is None:
            out.append(f"{name} must be {BOOL_ACCEPTED}, got {shown(values[name])}")
    out += refresh_errors(values)
    known = set(known)
    for name in sorted(set(present) - known):
        out.append(f"{name} is not a setting of this role" + _closest(name, known))
    return out


def _list_problem(name, value, lines):
    accepted = ("a list, or text with one item per line" if lines
                else "a list of names, or text of names separated by commas or blanks")
    if isinstance(value, str):
        problem = text_problem(name, value, max_chars=64 * 1024)
        return None if problem is None else problem
    if not isinstance(value, list):
        return f"{name} must be {accepted}, got {kind_of(value)} {shown(value)}"
    for index, item in enumerate(value):
        if isinstance(item, bool) or not isinstance(item, (str, int)) or str(item).strip() == "":
            return f"{name}[{index}] must be a non-empty name ({name}: {accepted}), got {shown(item)}"
        problem = text_problem(f"{name}[{index}]", str(item))
        if problem:
            return problem
    return None


def _dict_problem(name, value, parse_text):
    accepted = "a mapping, or YAML or JSON text of one"
    if isinstance(value, str):
        problem = text_problem(name, value, max_chars=256 * 1024)
        if problem:
            return problem
        try:
            value = parse_text(value)
        except ValueError as err:
            return f"{name} must be {accepted}; its text is not YAML or JSON ({err}): {shown(value)}"
        if value in (None, ""):
            return None
    if not isinstance(value, dict):
        return f"{name} must be {accepted}, got {kind_of(value)} {shown(value)}"
    problems = control_character_problems(name, value)
    return problems[0] if problems else None


def _playbook_problem(name, kind, value, parse_text, files):
    if kind == "file":
        return file_problem(name, value, files)
    if kind == "bool":
        return None if boolean(value) is not None else f"{name} must be {BOOL_ACCEPTED}, got {shown(value)}"
    if kind.startswith("bound:"):
        return bound_problem(name, value, kind.split(":", 1)[1])
    if kind.startswith("choice:"):
        choices = kind.split(":", 1)[1].split("|")
        return None if value in choices else f"{name} must be one of {', '.join(choices)}, got {shown(value)}"
    if kind == "time":
        return time_problem(name, value)
    if kind == "id":
        if isinstance(value, str) and _REFRESH_ID.match(value):
            return None
        return f"{name} must be {REFRESH_ID_ACCEPTED} (the rollout id recorded on every object), got {shown(value)}"
    if kind == "text":
        return text_problem(name, value)
    if kind in ("list", "lines"):
        return _list_problem(name, value, kind == "lines")
    return _dict_problem(name, value, parse_text)


def playbook_errors(values, present=(), parse_text=None, playbook="playbooks/hardware_refresh.yml", files=None):
    """Every problem with the variables of ``playbook`` (PLAYBOOK_VARIABLES), in words, each naming the variable,
    what was given and what is accepted: ``values`` ({name: value} of the variables given; None and "" keep their
    default), and every name of ``present`` (the variables defined) that is not one of the playbook's but close to
    one (a typo such as ``max_inflight``). ``parse_text``: YAML/JSON text -> value (ValueError when it is neither),
    for the mappings given as survey text; ``files``: the task files of the hooks (see file_problem)."""
    out = []
    for name, kind in sorted(PLAYBOOK_VARIABLES.items()):
        value = values.get(name)
        if value is None or value == "":
            continue
        problem = _playbook_problem(name, kind, value, parse_text, files or {})
        if problem:
            out.append(problem)
    if not any(problem.startswith(("not_before", "not_after")) for problem in out):
        out += window_problems(values.get("not_before"), values.get("not_after"))
    known = set(PLAYBOOK_VARIABLES)
    for name in sorted(set(present) - known):
        if name.startswith(FOREIGN_PREFIXES):
            continue
        close = _closest(name, known)
        if close:
            out.append(f"{name} is not a variable of {playbook} (its header lists them){close}")
    return out
