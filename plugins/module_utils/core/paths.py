# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Paths into nested dicts (Kubernetes objects): get/has/set by dotted path or key tuple, merge patches, JSON pointers.

Nothing here knows about Cluster API kinds or versions; where a field lives per kind and version is
core/apiversion.py's business.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy


def split_path(path):
    """Tuple of keys. Dotted strings for plain field names; tuples/lists when a key contains a dot
    (label/annotation keys such as ``cluster.x-k8s.io/paused``)."""
    if path is None:
        return ()
    if isinstance(path, (tuple, list)):
        return tuple(path)
    return tuple(part for part in str(path).split(".") if part)


def join_path(path):
    """Human form of a path: dotted, with keys that contain dots bracketed like kubectl's jsonpath."""
    out = []
    for key in split_path(path):
        if "." in key or "/" in key:
            out.append(f"[{key}]")
        else:
            out.append(("." if out else "") + key)
    return "".join(out)


def get_path(obj, path, default=None):
    """Value at ``path`` in nested dicts; ``default`` when any level is missing or not a dict."""
    cur = obj
    for key in split_path(path):
        if not isinstance(cur, dict) or key not in cur:
            return default
        cur = cur[key]
    return default if cur is None else cur


def has_path(obj, path):
    cur = obj
    for key in split_path(path):
        if not isinstance(cur, dict) or key not in cur:
            return False
        cur = cur[key]
    return True


def set_path(target, path, value):
    """Set ``value`` at ``path`` in ``target`` creating intermediate dicts; returns ``target``.

    Used to build JSON merge patches: a value of None means "delete this key" (RFC 7386).
    """
    keys = split_path(path)
    if not keys:
        raise ValueError("empty path")
    cur = target
    for key in keys[:-1]:
        nxt = cur.get(key)
        if not isinstance(nxt, dict):
            nxt = {}
            cur[key] = nxt
        cur = nxt
    cur[keys[-1]] = value
    return target


def merge_patch(changes):
    """Merge patch dict from an iterable of (path, value) pairs."""
    patch = {}
    for path, value in changes:
        set_path(patch, path, copy.deepcopy(value))
    return patch


def json_pointer(path):
    """RFC 6901 pointer: ``/metadata/annotations/cluster.x-k8s.io~1paused``."""
    return "".join(f"/{str(key).replace('~', '~0').replace('/', '~1')}" for key in split_path(path))
