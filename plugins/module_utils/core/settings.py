# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Checks of a role's settings that its argument spec cannot express: ranges, and variables of the role's
prefix that the role does not know (typos such as ``hardware_refresh_soak_second``). Types are the argument
spec's (a survey's "maybe" for a bool is refused there, not coerced)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import difflib
import re

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
}


def errors(values, known, present, minimums=None):
    """Every problem with ``values`` ({name: value}), in words: a value below its minimum, a name in ``present``
    (variables defined with the role's prefix) that is not in ``known`` (the role's options)."""
    minimums = MINIMUMS if minimums is None else minimums
    out = []
    for name, (lowest, what) in sorted(minimums.items()):
        if name not in values:
            continue
        value = values[name]
        if isinstance(value, str) and _WHOLE_NUMBER.match(value):
            value = int(value)  # an AWX text answer; the argument spec converts it the same way
        if isinstance(value, bool) or not isinstance(value, int) or value < lowest:
            out.append(f"{name} must be a whole number >= {lowest} ({what}), got {value!r}")
    known = set(known)
    for name in sorted(set(present) - known):
        close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.8)
        out.append(f"{name} is not a setting of this role" + (f"; did you mean {close[0]}?" if close else ""))
    return out
