# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one ``wrap_var`` of the filters that return user-controlled text (the report filters).

ansible-core < 2.19 re-templates plain strings read back from variables; marking a filter's result unsafe keeps
user-controlled text in it (names, messages, reasons) from ever being templated. 2.19+ does not trust filter output
as a template anyway, and ``ansible.utils.unsafe_proxy`` is deprecated there: without it the value passes unchanged.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

try:
    from ansible.utils.unsafe_proxy import wrap_var as _ansible_wrap_var
except ImportError:  # pragma: no cover - the module is deprecated and may go away
    _ansible_wrap_var = None


def wrap_var(value):
    """``value`` (and every string nested in it) marked unsafe for templating, where ansible-core has the marker."""
    if _ansible_wrap_var is None:  # pragma: no cover - see the import
        return value
    return _ansible_wrap_var(value)
