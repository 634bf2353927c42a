# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one error type of the rollout core and the object reference format it uses."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type


def ref(kind, namespace, name):
    """Return the reference users see in every message: ``machinedeployment/<namespace>/<name>``.

    The kind is lower-cased like clusterctl prints it; the namespace is kept so that the same
    name in two namespaces (common in fleets) stays distinguishable.
    """
    kind = (kind or "object").lower()
    if namespace:
        return f"{kind}/{namespace}/{name}"
    return f"{kind}/{name}"


def ref_of(obj):
    """Reference of a Kubernetes object dict (uses kind, metadata.namespace and metadata.name)."""
    meta = obj.get("metadata") or {}
    return ref(obj.get("kind"), meta.get("namespace"), meta.get("name"))


def _sentence(text):
    text = (text or "").strip()
    if text and text[-1] not in ".!?":
        text += "."
    return text


class RolloutError(Exception):
    """A refusal or invalid input detected before anything was changed.

    ``str(err)`` is ``<ref>: <what is wrong>. <next step for the user>``.
    ``reason`` is a stable machine-readable slug (e.g. ``paused``, ``rollout_scheduled``) so that
    modules and roles can branch on it without parsing the text.
    """

    def __init__(self, msg, ref=None, hint=None, reason=None):  # pylint: disable=redefined-outer-name
        self.msg = msg
        self.ref = ref
        self.hint = hint
        self.reason = reason
        super(RolloutError, self).__init__(self.message)

    @property
    def message(self):
        parts = []
        what = _sentence(self.msg)
        parts.append(f"{self.ref}: {what}" if self.ref else what)
        if self.hint:
            parts.append(_sentence(self.hint))
        return " ".join(parts)

    def __str__(self):
        return self.message

    def to_dict(self):
        """Fields for ``fail_json``/per-object results: msg plus the structured parts."""
        return {"msg": self.message, "ref": self.ref, "hint": self.hint, "reason": self.reason}
