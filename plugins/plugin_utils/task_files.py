# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the task files of the hardware_refresh role's hooks are on the Ansible host, and whether they exist: the
settings checks (core/settings.file_problem) do no I/O, so the lookup and the filter that call them look here."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os


def found(values, names):
    """{value: (path, whether it is a file)} of the variables ``names`` given in ``values`` as non-empty text. A relative
    path is taken from the directory ansible-playbook runs in, as the role's ``expanduser | realpath`` takes it."""
    out = {}
    for name in names:
        value = values.get(name)
        if isinstance(value, str) and value:
            path = os.path.realpath(os.path.expanduser(value))
            out[value] = (path, os.path.isfile(path))
    return out
