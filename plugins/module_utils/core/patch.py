# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The JSON patch (RFC 6902) every write to a MachineDeployment or KubeadmControlPlane sends: ``test``
operations on exactly the fields the plan relied on, with the values of the object that was read, then
the operations of the change itself.

Why not a resourceVersion: it changes with every status write of a busy object (its controller writes
several times a second during a rollout), so a write guarded by it conflicts with changes the plan never
looked at. A failed ``test`` means a field the plan relied on changed: the client re-reads and re-plans.

Absent fields: RFC 6902 has no "test that a member is absent" (``test`` of a missing path is an error
there, and ``add`` replaces an existing member). The API server's JSON patch (evanphx/json-patch, every
Kubernetes release) passes a ``test`` whose value is null when the member is absent or null, and fails it
when the member has a value; Kubernetes does not tell null from absent either. So an absent field is
guarded by ``{"op": "test", "path": <first missing member>, "value": null}``: the deepest member that
exists is the parent, so the test fails when the field (or any missing parent of it) has been set since.
A test of the whole parent would also guard it, but the parent of an annotation is the annotation map,
which other writers change all the time (the conflict this replaces). A missing parent answers
"missing path" and fails the same way.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy

from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import labels_annotations as keys
from ansible_collections.capi.rollout.plugins.module_utils.core import paths

TEST = "test"


def pointer(path):
    """RFC 6901 pointer of ``path`` (``~`` -> ``~0``, ``/`` -> ``~1``, as in annotation keys)."""
    return paths.json_pointer(path)


def _walk(doc, path):
    """(keys, depth, value): ``depth`` is how many leading keys of ``path`` hold a value in ``doc`` (null
    counts as absent, as on the API server) and ``value`` the value at that depth."""
    path_keys = paths.split_path(path)
    node = doc
    for depth, key in enumerate(path_keys):
        if not isinstance(node, dict) or node.get(key) is None:
            return path_keys, depth, node
        node = node[key]
    return path_keys, len(path_keys), node


def _covered(path_keys, tested):
    return any(path_keys[:len(done)] == done for done in tested)


def guard_operations(obj, field_paths):
    """``test`` operations that hold while every field in ``field_paths`` has the value it has in ``obj``.

    A present field is tested with its value; an absent one with null on its first missing member (see
    the module docstring). A path under one already tested is covered by that test and left out."""
    ops = []
    tested = []
    for path in sorted((paths.split_path(p) for p in field_paths), key=len):
        if _covered(path, tested):
            continue
        path_keys, depth, value = _walk(obj, path)
        if depth == len(path_keys):
            tested.append(path_keys)
            ops.append({"op": TEST, "path": pointer(path_keys), "value": copy.deepcopy(value)})
        elif isinstance(value, dict):
            tested.append(path_keys[:depth + 1])
            ops.append({"op": TEST, "path": pointer(path_keys[:depth + 1]), "value": None})
        else:
            # a scalar or list where the path goes on: the change could not be applied as planned anyway
            tested.append(path_keys[:depth])
            ops.append({"op": TEST, "path": pointer(path_keys[:depth]), "value": copy.deepcopy(value)})
    return ops


def _nested(path_keys, value):
    for key in reversed(path_keys):
        value = {key: value}
    return value


def change_operations(obj, changes):
    """add / replace / remove operations for the (path keys, after) pairs of ``changes`` (None: remove),
    applied in order from ``obj``: a missing parent is added with the value nested in it."""
    doc = copy.deepcopy(obj)
    ops = []
    for path_keys, after in changes:
        path_keys, depth, _value = _walk(doc, path_keys)
        if after is None:
            if depth == len(path_keys):
                ops.append({"op": "remove", "path": pointer(path_keys)})
                parent = paths.get_path(doc, path_keys[:-1])
                parent.pop(path_keys[-1])
            continue
        if depth == len(path_keys):
            ops.append({"op": "replace", "path": pointer(path_keys), "value": copy.deepcopy(after)})
        else:
            ops.append({"op": "add", "path": pointer(path_keys[:depth + 1]),
                        "value": _nested(path_keys[depth + 1:], copy.deepcopy(after))})
        paths.set_path(doc, path_keys, copy.deepcopy(after))
    return ops


def json_patch(obj, changes, guarded):
    """The operations sent: tests of ``guarded`` paths and of every changed path, then the changes.
    ``changes`` is a core.diff.ChangeSet; None when it changes nothing."""
    items = changes.items()
    if not items:
        return None
    field_paths = list(guarded or ()) + [path_keys for path_keys, _before, _after in items]
    return guard_operations(obj, field_paths) + change_operations(obj, [(path_keys, after) for path_keys, _before, after in items])


def merged(operation_lists):
    """One JSON patch of an object doing what each of ``operation_lists`` (JSON patches of it, each planned from the
    same read) does: every ``test`` first, then the other operations, each distinct one once (the plans of several
    MachineDeployments rebased through one Cluster share the test and the change of its class; their own topology
    entries are apart). ValueError when two of them test or set one path with different operations: those cannot
    be one write."""
    tests, changes, seen = [], [], {}
    for operations in operation_lists:
        for op in operations:
            same = seen.setdefault((op["path"], op["op"] == TEST), op)
            if same != op:
                raise ValueError(f"{op['path']} is written in two ways")
            if op in tests or op in changes:
                continue
            (tests if op["op"] == TEST else changes).append(op)
    return tests + changes


def beside_owner_write(fields):
    """Of ``fields`` (relied_on), those an object's patch still tests when its change is written in the object that
    decides its template (core.topology: the Cluster topology): whether it is paused and its records. The topology
    controller changes its trigger and template fields at any moment after the Cluster write (it copies rollout.after,
    rotates the template), and the Cluster patch tests what that write relies on."""
    return [field for field in fields if field[0] == "metadata" or tuple(field) == ("spec", "paused")]


def paused_fields(kind):
    """The fields that say whether the object is paused (MD spec.paused, the paused annotation): every plan relies on
    them beyond the fields it changes (which json_patch tests too)."""
    field_paths = [("metadata", "annotations", keys.PAUSED_ANNOTATION)]
    if kind == apiversion.MACHINE_DEPLOYMENT:
        field_paths.append(("spec", "paused"))
    return field_paths


def rollout_fields(kind, version):
    """What a plan that changes the template or the trigger relies on besides paused_fields: the records (last-rollout
    and history annotations: rollout_id idempotence, the next revision), the template (MD spec.template.spec version,
    infrastructureRef, bootstrap, failureDomain; KCP spec.version and its infrastructureRef) and the trigger
    (rolloutAfter / rollout.after)."""
    field_paths = [("metadata", "annotations", keys.LAST_ROLLOUT_ANNOTATION),
                   ("metadata", "annotations", keys.HISTORY_ANNOTATION),
                   paths.split_path(apiversion.spec_path(kind, version, "rollout_after"))]
    if kind == apiversion.MACHINE_DEPLOYMENT:
        field_paths.extend(("spec", "template", "spec", field) for field in ("version", "infrastructureRef", "bootstrap", "failureDomain"))
    else:
        field_paths.append(("spec", "version"))
        field_paths.append(paths.split_path(apiversion.spec_path(kind, version, "infrastructure_ref")))
    return paused_fields(kind) + field_paths


# What kube-apiserver answers when a JSON patch does not apply (a failed test among them), at least up to 1.2x:
# a bare 422 with this message; the patch library's own words ("testing value /spec/x failed") are dropped
# (apiserver endpoints/handlers/patch.go, errors.NewGenericServerResponse without causes).
PATCH_NOT_APPLIED = "the server rejected our request due to an error in our request"


def is_test_failure(status, body):
    """Whether an API server answer (HTTP status, parsed body) is a failed ``test`` operation: 422 with
    evanphx/json-patch's "testing value ... failed" or "test operation does not apply" (a missing parent), or
    the bare 422 "rejected our request" with no causes that kube-apiserver 1.20 sends for any patch that does
    not apply. The change operations of a patch built here apply to every object its tests pass on, so a patch
    that does not apply means a test failed. A 422 from validation names the object and is not one."""
    if status != 422 or not isinstance(body, dict):
        return False
    details = body.get("details") or {}
    causes = [cause for cause in details.get("causes") or [] if isinstance(cause, dict)]
    texts = [str(body.get("message") or "")] + [str(cause.get("message") or "") for cause in causes]
    if any(("testing value" in text and "failed" in text) or "test operation does not apply" in text for text in texts):
        return True
    return body.get("message") == PATCH_NOT_APPLIED and not causes and not details.get("name")
