# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Checks of a role's settings that its argument spec cannot express: ranges, and variables of the role's
prefix that the role does not know (typos such as ``hardware_refresh_soak_second``). Types are the argument
spec's (a survey's "maybe" for a bool is refused there, not coerced)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import difflib
import re

from ansible.module_utils.parsing.convert_bool import boolean

_WHOLE_NUMBER = re.compile(r"^\s*-?[0-9]+\s*$")

# name -> (lowest value, why); names of the hardware_refresh role
MINIMUMS = {
    "hardware_refresh_wait_timeout": (1, "seconds a wave's rollouts may take"),
    "hardware_refresh_stall_timeout": (1, "seconds without progress before a wave counts as stalled"),
    "hardware_refresh_soak_seconds": (0, "seconds every object must stay healthy after a wave (0: no soak)"),
    "hardware_refresh_poll_interval": (1, "seconds before a watch that could not be opened is tried again"),
    "hardware_refresh_progress_interval": (1, "seconds between heartbeats and lock renewals while waiting"),
    "hardware_refresh_lock_duration": (3, "seconds the lock stays valid without renewal (renewed every third)"),
    "hardware_refresh_lock_wait_timeout": (0, "seconds to wait for another run's lock"),
    "hardware_refresh_window_minutes": (0, "minutes from the start of the run to the end of the window (0: no such end)"),
}


# name -> (lowest value, why); options of the modules (flows.run.Run checks them before any request)
MODULE_MINIMUMS = {
    "wait_timeout": (1, "seconds the wait may take"),
    "stall_timeout": (1, "seconds without progress before the wait counts as stalled"),
    "soak_seconds": (0, "seconds every object must stay healthy after the rollout (0: no soak)"),
    "poll_interval": (1, "seconds before a watch that could not be opened is tried again"),
    "progress_interval": (1, "seconds between heartbeat lines while waiting"),
}
# capi_rollout_lock: its wait_timeout is how long to wait for another holder (0: not at all)
LOCK_MINIMUMS = {
    "wait_timeout": (0, "seconds to wait for another holder's lock (0: fail at once)"),
    "poll_interval": (1, "seconds between looks at a lock held by another holder"),
}
# A rollout id is recorded in every object's history and compared on re-runs: no blanks, no free text.
_ROLLOUT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$")
# hardware_refresh_id is the rollout id of every switched object and names the report directory and the undo id.
_REFRESH_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,62}$")


def minimum_errors(values, minimums):
    """``<name> must be a whole number >= <lowest>`` for every value of ``values`` ({name: value}) below its
    minimum in ``minimums`` ({name: (lowest, why)}); names not in ``values`` (or None) are not checked."""
    out = []
    for name, (lowest, what) in sorted(minimums.items()):
        if values.get(name) is None:
            continue
        value = values[name]
        if isinstance(value, str) and _WHOLE_NUMBER.match(value):
            value = int(value)  # an AWX text answer; the argument spec converts it the same way
        if isinstance(value, bool) or not isinstance(value, int) or value < lowest:
            out.append(f"{name} must be a whole number >= {lowest} ({what}), got {value!r}")
    return out


def module_errors(params, minimums=None):
    """Problems with a module's options that its argument spec cannot express, in words (``minimums``: the
    module's own, MODULE_MINIMUMS by default)."""
    out = minimum_errors(params, MODULE_MINIMUMS if minimums is None else minimums)
    if params.get("objects") == []:
        out.append("objects is empty: name at least one MachineDeployment or control plane to wait for")
    rollout_id = params.get("rollout_id")
    if rollout_id is not None and not _ROLLOUT_ID.match(str(rollout_id)):
        out.append(f"rollout_id must be 1-128 letters, digits, '.', '_', ':', '/' or '-', starting with a letter or digit "
                   f"(it is recorded in the history of every object and compared on re-runs), got {rollout_id!r}")
    return out


def refresh_errors(values):
    """The hardware_refresh role's rules between its options: a usable refresh id, and new templates that differ
    from the current ones (some override, or restart mode). Options not in ``values`` are not checked."""
    out = []
    if "hardware_refresh_id" in values:
        refresh_id = values["hardware_refresh_id"]
        if not isinstance(refresh_id, str) or not _REFRESH_ID.match(refresh_id):
            out.append("hardware_refresh_id must be 1-63 letters, digits, '.', '_', ':' or '-' (it is recorded as the "
                       f"rollout id of every switched object), got {'nothing' if refresh_id is None else refresh_id}")
    if "hardware_refresh_restart" in values and not (
            boolean(values["hardware_refresh_restart"] or False, strict=False) or values.get("hardware_refresh_template_overrides")
            or values.get("hardware_refresh_object_templates")):
        out.append("hardware_refresh_template_overrides is empty, so every new template would be a copy of the current one. "
                   "Give the new hardware or image (for example the instance type), or set hardware_refresh_restart "
                   "(playbooks/restart.yml) to replace the Machines on their current templates.")
    return out


def errors(values, known, present, minimums=None):
    """Every problem with ``values`` ({name: value}), in words: a value below its minimum, a name in ``present``
    (variables defined with the role's prefix) that is not in ``known`` (the role's options), and the rules between
    the hardware_refresh role's options (``refresh_errors``)."""
    out = minimum_errors(values, MINIMUMS if minimums is None else minimums) + refresh_errors(values)
    known = set(known)
    for name in sorted(set(present) - known):
        close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.8)
        out.append(f"{name} is not a setting of this role" + (f"; did you mean {close[0]}?" if close else ""))
    return out
