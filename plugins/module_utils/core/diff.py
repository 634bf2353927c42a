# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fields a plan changes, exactly; turn them into a merge patch and an Ansible diff.

Modelled on community.general's DifferenceTracker: each change is (path, before, after); the diff
shows only those fields, as YAML text a person can read, never whole objects.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import json
import re

from ansible_collections.capi.rollout.plugins.module_utils.core import paths

# Keys YAML reads back as plain strings (covers label/annotation keys such as cluster.x-k8s.io/paused).
_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_./-]*$")


class ChangeSet:
    """Changes planned for one object."""

    def __init__(self):
        self._changes = []

    def add(self, path, before, after, display=None):
        """Add the change at ``path`` (dotted string or tuple); None means "absent". Returns whether
        it is a change (equal values are left out). A later change of the same path replaces it,
        keeping the first ``before``.

        ``display``: optional (before_text, after_text) shown in before()/after()/changes()/diff()
        instead of the values (for long values such as the history annotation); the merge patch
        always carries the real ``after``."""
        keys = paths.split_path(path)
        for index, change in enumerate(self._changes):
            if change[0] == keys:
                before = change[1]
                if before == after:
                    del self._changes[index]
                    return False
                self._changes[index] = (keys, before, copy.deepcopy(after), display)
                return True
        if before == after:
            return False
        self._changes.append((keys, copy.deepcopy(before), copy.deepcopy(after), display))
        return True

    @property
    def changed(self):
        return bool(self._changes)

    def changes(self):
        """[{path, before, after}] with human paths (``spec.rollout.after``)."""
        return [{"path": paths.join_path(change[0]), "before": _shown(change, 1), "after": _shown(change, 2)}
                for change in self._changes]

    def items(self):
        """[(path keys, before, after)] in the order added (None: absent)."""
        return [(change[0], copy.deepcopy(change[1]), copy.deepcopy(change[2])) for change in self._changes]

    def merge_patch(self):
        """RFC 7386 merge patch applying every change (None when nothing changes)."""
        if not self._changes:
            return None
        return paths.merge_patch((change[0], change[2]) for change in self._changes)

    def _side(self, index):
        out = {}
        for change in self._changes:
            if change[index] is not None:
                paths.set_path(out, change[0], _shown(change, index))
        return out

    def before(self):
        """Nested dict of the changed fields as they are now (absent fields left out)."""
        return self._side(1)

    def after(self):
        """Nested dict of the changed fields as they will be (deleted fields left out)."""
        return self._side(2)

    def diff(self, header=None):
        """Ansible ``diff`` result entry: YAML text of only the changed fields."""
        out = {"before": to_yaml_text(self.before()), "after": to_yaml_text(self.after())}
        if header:
            out["before_header"] = f"{header} (before)"
            out["after_header"] = f"{header} (after)"
        return out


def _shown(change, index):
    """Value of side ``index`` (1 before, 2 after) of a change as shown to people (display text wins)."""
    value = change[index]
    display = change[3]
    if value is not None and display and display[index - 1] is not None:
        return display[index - 1]
    return copy.deepcopy(value)


def apply_merge_patch(obj, patch):
    """RFC 7386: ``obj`` with merge ``patch`` applied, as the API server does (inputs unchanged)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(obj) if isinstance(obj, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = apply_merge_patch(out.get(key), value)
    return out


def create_merge_patch(before, after):
    """Smallest RFC 7386 merge patch turning dict ``before`` into dict ``after`` (None if equal).

    Lists are replaced whole (merge patch has no list semantics); removed keys become null.
    """
    if before == after:
        return None
    if not isinstance(before, dict) or not isinstance(after, dict):
        return copy.deepcopy(after)
    patch = {}
    for key in before:
        if key not in after:
            patch[key] = None
    for key, value in after.items():
        if key not in before:
            patch[key] = copy.deepcopy(value)
        elif before[key] != value:
            if isinstance(before[key], dict) and isinstance(value, dict):
                patch[key] = create_merge_patch(before[key], value)
            else:
                patch[key] = copy.deepcopy(value)
    return patch


def _scalar(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    text = str(value)
    if '"' in text and "\n" not in text and "\\" not in text:
        # Single quotes keep embedded JSON (the last-rollout record) readable.
        escaped = text.replace("'", "''")
        return f"'{escaped}'"
    # JSON strings are valid YAML and never misread (timestamps, "true", "1", ": ").
    return json.dumps(text)


def _key(key):
    key = str(key)
    return key if _PLAIN_KEY.match(key) and key.lower() not in ("true", "false", "null", "yes", "no") else json.dumps(key)


def _lines(value, indent):
    pad = " " * indent
    out = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, dict) and item:
                out.append(f"{pad}{_key(key)}:")
                out.extend(_lines(item, indent + 2))
            elif isinstance(item, list) and item:
                out.append(f"{pad}{_key(key)}:")
                out.extend(_lines(item, indent))
            else:
                out.append(f"{pad}{_key(key)}: {_empty_or_scalar(item)}")
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, (dict, list)) and item:
                nested = _lines(item, indent + 2)
                nested[0] = f"{pad}- {nested[0].lstrip()}"
                out.extend(nested)
            else:
                out.append(f"{pad}- {_empty_or_scalar(item)}")
    else:
        out.append(f"{pad}{_scalar(value)}")
    return out


def _empty_or_scalar(value):
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    return _scalar(value)


def to_yaml_text(data):
    """Block-style YAML of plain data, deterministic (no PyYAML needed); "" for an empty dict."""
    if data in ({}, None):
        return ""
    return "\n".join(_lines(data, 0)) + "\n"
