# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Plan a clone of an infrastructure machine template (any provider kind) with overrides.

Infrastructure machine templates are immutable in Cluster API: new hardware or a new image means a
new template. ``plan_clone`` takes the source template as read from the API server and returns the
object to create: ``spec.template.spec`` is treated as opaque and the overrides are deep-merged
into it (RFC 7386 semantics: dicts merge recursively, lists and scalars replace, ``None`` deletes a
key). Pure: no I/O.

Naming: ``<base>-<8 hex>``, the hex being the first 8 digits of the SHA-256 of the canonical JSON of
the merged ``spec.template.spec``; ``<base>`` is the source name without the hash suffix a previous
clone by this module gave it, so cloning a clone with the same overrides names (and finds) the same
template, and chains of clones never grow names. Names are cut to 63 characters.

Metadata: labels and annotations of the source are copied except those a controller or a GitOps
tool owns (topology labels, Helm/Flux/Argo CD markers, kubectl's last-applied configuration); the
only owner reference copied is the Cluster's (CAPI sets it on templates). uid, resourceVersion,
creationTimestamp, managedFields, generation, finalizers and status are not copied.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import hashlib
import json
import re

from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion
from ansible_collections.capi.rollout.plugins.module_utils.core import diff as diffs
from ansible_collections.capi.rollout.plugins.module_utils.core import labels_annotations as keys
from ansible_collections.capi.rollout.plugins.module_utils.core import paths
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError, ref as make_ref

# This collection's annotations on a clone: where it came from, and the hash in its name.

HASH_LENGTH = 8
MAX_NAME_LENGTH = 63
TEMPLATE_SPEC_PATH = ("spec", "template", "spec")
# Overrides are new hardware or an image: names, sizes, short lists. The CRD schema (applied by the server-side dry run
# of every clone) seldom bounds a string, so these sane limits refuse a pasted file or a runaway value instead.
OVERRIDE_VALUE_MAX_CHARS = 16 * 1024
OVERRIDES_MAX_CHARS = 64 * 1024
# C0 control characters and DEL except tab and line breaks (a NUL byte, an escape sequence)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")

# Labels never copied: set and owned by controllers (the topology controller, the MachineSet
# controller) or by GitOps tools, which would prune or claim an object they did not create.
DROPPED_LABEL_PREFIXES = (keys.TOPOLOGY_PREFIX, keys.FLUX_KUSTOMIZE_PREFIX, keys.FLUX_HELM_PREFIX)
DROPPED_LABELS = (keys.MACHINE_TEMPLATE_HASH_LABEL, keys.SET_NAME_LABEL, keys.MANAGED_BY_LABEL, keys.INSTANCE_LABEL)
# Annotations never copied: this collection's own (written fresh), CAPI's clone bookkeeping, the
# topology controller's, GitOps ownership markers and kubectl's copy of the last applied object.
DROPPED_ANNOTATION_PREFIXES = (keys.ROLLOUT_PREFIX, keys.TOPOLOGY_PREFIX, keys.HELM_META_PREFIX,
                               keys.ARGOCD_PREFIX, keys.FLUX_KUSTOMIZE_PREFIX, keys.FLUX_HELM_PREFIX)
DROPPED_ANNOTATIONS = (keys.LAST_APPLIED_ANNOTATION, keys.CLONED_FROM_NAME_ANNOTATION, keys.CLONED_FROM_GROUPKIND_ANNOTATION)

_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_HEX = re.compile(r"^[0-9a-f]+$")


# ---------------------------------------------------------------------------------------------
# building blocks


def deep_merge(base, overrides):
    """``base`` with ``overrides`` merged in (inputs unchanged): dicts merge recursively, lists and
    scalars replace, ``None`` deletes the key (RFC 7386 JSON merge patch)."""
    return diffs.apply_merge_patch(base if isinstance(base, dict) else {}, overrides or {})


def canonical_json(value):
    """JSON text that is the same for equal data, whatever the key order."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def spec_hash(template_spec):
    """First 8 hex digits of the SHA-256 of the canonical JSON of a template's ``spec.template.spec``."""
    return hashlib.sha256(canonical_json(template_spec).encode("utf-8")).hexdigest()[:HASH_LENGTH]


def base_name(source_obj):
    """The source name without the ``-<hash>`` suffix this module gave it when it is a clone made
    here (its spec-hash annotation matches the suffix); the plain name otherwise."""
    meta = source_obj.get("metadata") or {}
    name = meta.get("name") or ""
    previous = (meta.get("annotations") or {}).get(keys.SPEC_HASH_ANNOTATION) or ""
    if previous and _HEX.match(previous) and name.endswith(f"-{previous}") and len(name) > len(previous) + 1:
        return name[:-(len(previous) + 1)]
    return name


def default_name(base, digest):
    """``<base>-<digest>``, ``<base>`` cut so that the whole name has at most 63 characters."""
    room = MAX_NAME_LENGTH - len(digest) - 1
    trimmed = base[:room].rstrip("-.") or "template"
    return f"{trimmed}-{digest}"


def _drop_key(key, exact, prefixes):
    return key in exact or any(key.startswith(prefix) for prefix in prefixes)


def copied_labels(labels):
    """The source labels a clone keeps (cluster-name and user labels; not controller-owned ones)."""
    return {key: value for key, value in (labels or {}).items()
            if not _drop_key(key, DROPPED_LABELS, DROPPED_LABEL_PREFIXES)}


def copied_annotations(annotations):
    return {key: value for key, value in (annotations or {}).items()
            if not _drop_key(key, DROPPED_ANNOTATIONS, DROPPED_ANNOTATION_PREFIXES)}


def is_cluster_owner(owner):
    return owner.get("kind") == apiversion.CLUSTER and apiversion.group_of(owner.get("apiVersion")) == apiversion.CORE_GROUP


def copied_owner_references(owner_refs):
    """Only the Cluster owner reference(s), without the ``controller`` flag: a clone is owned by its
    Cluster (garbage-collected with it) but controlled by nobody."""
    out = []
    for owner in owner_refs or []:
        if not isinstance(owner, dict) or not is_cluster_owner(owner):
            continue
        kept = {key: copy.deepcopy(value) for key, value in owner.items() if key != "controller"}
        if kept not in out:
            out.append(kept)
    return out


def _override_problems(original, overrides, path):
    """What is wrong with the values of ``overrides`` merged over ``original`` at ``path`` (a tuple): keys that are
    empty or hold control characters, strings with control characters or longer than OVERRIDE_VALUE_MAX_CHARS, and
    an empty string where the current template has a non-empty one (null removes a field)."""
    out = []
    for key, value in overrides.items():
        where = paths.join_path(path + (str(key),))
        if not isinstance(key, str) or not key.strip() or _CONTROL.search(key):
            out.append(f"{paths.join_path(path)} has the key {key!r}: keys must be non-empty field names without control "
                       "characters")
            continue
        before = original.get(key) if isinstance(original, dict) else None
        if isinstance(value, dict):
            out += _override_problems(before, value, path + (key,))
        elif isinstance(value, list):
            out += _override_problems(None, {f"[{index}]": item for index, item in enumerate(value)}, path + (key,))
        elif isinstance(value, str):
            found = _CONTROL.search(value)
            if found:
                out.append(f"{where} contains the control character {found.group()!r} at position {found.start()}")
            elif len(value) > OVERRIDE_VALUE_MAX_CHARS:
                out.append(f"{where} is {len(value)} characters long ({value[:40]!r}...); at most "
                           f"{OVERRIDE_VALUE_MAX_CHARS} are accepted for one value")
            elif value == "" and isinstance(before, str) and before != "":
                out.append(f"{where} is empty, but the current template has {before!r}: give the new value "
                           "(null removes the field)")
    return out


def check_overrides(template_spec, overrides, ref=None):
    """Refuse ``overrides`` of ``template_spec`` (the current spec.template.spec) that the API server's schema would
    take but that are no new hardware: see _override_problems, and a whole document over OVERRIDES_MAX_CHARS.
    Raises RolloutError (reason ``invalid_override``)."""
    problems = _override_problems(template_spec, overrides, TEMPLATE_SPEC_PATH)
    size = len(canonical_json(overrides))
    if size > OVERRIDES_MAX_CHARS:
        problems.append(f"the overrides are {size} characters of JSON; at most {OVERRIDES_MAX_CHARS} are accepted")
    if problems:
        raise RolloutError("overrides: " + "; ".join(problems) + "; nothing was changed", ref=ref, reason="invalid_override",
                           hint=f"fix the overrides (values at most {OVERRIDE_VALUE_MAX_CHARS} characters without control "
                                f"characters, {OVERRIDES_MAX_CHARS} in all; docs/hardware-refresh.md)")


def string_map(values, what):
    """Labels/annotations given by the user: str values (numbers and booleans as text), None kept
    (means: do not copy this key from the source). capi_machine_template's input gate runs it too."""
    out = {}
    for key, value in (values or {}).items():
        if not isinstance(key, str) or not key:
            raise RolloutError(f"{what} keys must be non-empty strings, got {key!r}", reason="invalid_input",
                               hint=f"fix {what}")
        if value is None or isinstance(value, str):
            out[key] = value
        elif isinstance(value, bool):
            out[key] = "true" if value else "false"
        elif isinstance(value, (int, float)):
            out[key] = str(value)
        else:
            raise RolloutError(f"{what}[{key}] must be a string, got {type(value).__name__}", reason="invalid_input",
                               hint=f"fix {what}")
    return out


def _apply_user_map(base, extra):
    out = dict(base)
    for key, value in extra.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def diff_paths(before, after, prefix=()):
    """[(path tuple, before, after)] of every leaf (or type change) where ``before`` and ``after``
    differ; None means absent. Dicts are walked, lists compared whole."""
    if before == after:
        return []
    if isinstance(before, dict) and isinstance(after, dict):
        out = []
        for key in list(before) + [k for k in after if k not in before]:
            if key not in after:
                out.append((prefix + (key,), copy.deepcopy(before[key]), None))
            elif key not in before:
                out.append((prefix + (key,), None, copy.deepcopy(after[key])))
            else:
                out.extend(diff_paths(before[key], after[key], prefix + (key,)))
        return out
    return [(prefix, copy.deepcopy(before), copy.deepcopy(after))]


def _changes(before, after, prefix):
    return [{"path": paths.join_path(path), "before": old, "after": new}
            for path, old, new in diff_paths(before, after, prefix)]


def trimmed(obj):
    """An object as returned to users: without managedFields/selfLink and status."""
    out = {key: copy.deepcopy(value) for key, value in (obj or {}).items() if key != "status"}
    meta = out.get("metadata")
    if isinstance(meta, dict):
        for key in ("managedFields", "selfLink"):
            meta.pop(key, None)
    return out


def dropped_fields(planned, actual):
    """Paths of ``planned['spec']`` the API server did not keep in ``actual`` (fields pruned because
    the kind's schema does not know them - typically a typo in the overrides). Fields the server
    added (defaults) are not reported."""
    out = []
    for path, old, new in diff_paths((planned or {}).get("spec") or {}, (actual or {}).get("spec") or {}, ("spec",)):
        if old is not None and new is None:
            out.append(paths.join_path(path))
    return out


def refuse_ineffective(plan, source_obj, result):
    """Raise RolloutError (nothing written) when the template the API server makes of the plan -
    ``result``, the answer to a dry-run create or an existing clone - lost planned fields (pruned:
    not in the kind's schema, typically a typo in the overrides), or when overrides were given and the
    result's ``spec.template.spec`` equals the source's: a switch to it would replace every Machine
    with an identical one."""
    dropped = dropped_fields(plan["object"], result)
    if dropped:
        raise RolloutError(
            f"the API server drops {', '.join(dropped)}: {plan['kind']} has no such field, so the clone would not "
            "carry it; nothing was changed", ref=plan["ref"], reason="pruned_fields",
            hint=f"fix the field name in overrides (kubectl explain {plan['kind'].lower()}.spec.template.spec lists the "
                 "fields the installed provider knows)")
    if plan["overridden"] and paths.get_path(result, TEMPLATE_SPEC_PATH) == \
            paths.get_path(source_obj, TEMPLATE_SPEC_PATH):
        raise RolloutError(
            f"the overrides change nothing: spec.template.spec of the clone would equal the one of "
            f"{make_ref(plan['kind'], plan['namespace'], plan['source_ref']['name'])}, and switching to it would replace "
            "every Machine with an identical one; nothing was changed", ref=plan["ref"], reason="no_effect",
            hint="give overrides that differ from the current template, or restart the object to replace its Machines "
                 "on the current template")


# ---------------------------------------------------------------------------------------------
# the plan


def _source_parts(source_obj):
    if not isinstance(source_obj, dict):
        raise RolloutError("the source template is not an object", reason="invalid_source")
    meta = source_obj.get("metadata") or {}
    kind = source_obj.get("kind")
    name = meta.get("name")
    namespace = meta.get("namespace")
    api_version = source_obj.get("apiVersion")
    ref = make_ref(kind, namespace, name)
    if not kind or not name or not api_version:
        raise RolloutError("the source template has no kind, apiVersion or metadata.name", ref=ref,
                           reason="invalid_source")
    template_spec = paths.get_path(source_obj, TEMPLATE_SPEC_PATH)
    if not isinstance(template_spec, dict) or not paths.has_path(source_obj, TEMPLATE_SPEC_PATH):
        raise RolloutError(f"{kind} {namespace}/{name} has no spec.template.spec: it is not an infrastructure machine "
                           "template; nothing was changed", ref=ref, reason="invalid_source",
                           hint="name a *MachineTemplate (for example DockerMachineTemplate, AWSMachineTemplate) as source")
    return kind, name, namespace, api_version, ref, template_spec


def _refuse_topology(source_obj, ref, referenced_by, force):
    owned = []
    if keys.TOPOLOGY_OWNED_LABEL in ((source_obj.get("metadata") or {}).get("labels") or {}):
        owned.append(ref)
    if referenced_by is not None and keys.TOPOLOGY_OWNED_LABEL in \
            ((referenced_by.get("metadata") or {}).get("labels") or {}):
        from_ref = make_ref(referenced_by.get("kind"), (referenced_by.get("metadata") or {}).get("namespace"),
                            (referenced_by.get("metadata") or {}).get("name"))
        owned.append(from_ref)
    if not owned:
        return []
    what = " and ".join(owned)
    if not force:
        raise RolloutError(
            f"{what} is managed by a Cluster topology (label {keys.TOPOLOGY_OWNED_LABEL}): the topology controller "
            "creates and rotates its machine templates itself and would revert a switch to a clone; nothing was changed",
            ref=ref, reason="topology_owned",
            hint="change the machine template in the ClusterClass or the Cluster's spec.topology instead; "
                 "set force: true only to clone it anyway (the clone is not topology-owned)")
    return [f"{what} is managed by a Cluster topology; cloned because force is set (the clone is not topology-owned "
            "and the topology controller would revert a switch to it)"]


def plan_clone(source_obj, overrides, name=None, labels=None, annotations=None, force=False, referenced_by=None):
    """What to create to clone ``source_obj`` (an infrastructure machine template as read from the
    API server) with ``overrides`` merged into ``spec.template.spec``.

    ``name``: explicit target name (default ``<base>-<hash>``); ``labels``/``annotations``: added
    to (a None value removes a copied one); ``force``: clone a topology-owned template;
    ``referenced_by``: the MachineDeployment / control plane the source was taken from (its
    topology ownership counts too). Raises RolloutError (nothing to write) on bad input.

    Returns {name, namespace, kind, api_version, api_group, ref, hash, base_name, object,
    source_ref, infrastructure_ref, changes, overridden, warnings, diff, compare}; ``compare(existing)``
    decides about an existing object of the target name: returns {changed: False, message,
    warnings} when it has the planned content, raises RolloutError (reason ``template_conflict``)
    when it differs.
    """
    kind, source_name, namespace, api_version, source_ref_text, template_spec = _source_parts(source_obj)
    if overrides is None:
        overrides = {}
    if not isinstance(overrides, dict):
        raise RolloutError(f"overrides must be a dictionary (merged into spec.template.spec), got "
                           f"{type(overrides).__name__}; nothing was changed", ref=source_ref_text,
                           reason="invalid_input", hint="give overrides as a mapping of spec.template.spec fields")
    check_overrides(template_spec, overrides, ref=source_ref_text)
    user_labels = string_map(labels, "labels")
    user_annotations = string_map(annotations, "annotations")
    warnings = _refuse_topology(source_obj, source_ref_text, referenced_by, force)

    merged = deep_merge(template_spec, overrides)
    digest = spec_hash(merged)
    base = base_name(source_obj)
    explicit = name is not None and name != ""
    computed = default_name(base, digest)
    target = name if explicit else computed
    if explicit and (len(target) > 253 or not _DNS_SUBDOMAIN.match(target)):
        raise RolloutError(f"name {target!r} is not a valid object name (lower-case letters, digits, '-' and '.', "
                           "starting and ending with a letter or digit, at most 253 characters); nothing was changed",
                           ref=make_ref(kind, namespace, target), reason="invalid_name",
                           hint=f"give another name, or leave name unset to get {computed}")
    target_ref = make_ref(kind, namespace, target)

    meta = source_obj.get("metadata") or {}
    new_labels = _apply_user_map(copied_labels(meta.get("labels")), user_labels)
    own = {keys.CLONED_FROM_ANNOTATION: f"{kind}/{source_name}", keys.SPEC_HASH_ANNOTATION: digest}
    new_annotations = _apply_user_map(dict(copied_annotations(meta.get("annotations")), **own), user_annotations)
    new_meta = {"name": target}
    if namespace:
        new_meta["namespace"] = namespace
    if new_labels:
        new_meta["labels"] = new_labels
    if new_annotations:
        new_meta["annotations"] = new_annotations
    owners = copied_owner_references(meta.get("ownerReferences"))
    if owners:
        new_meta["ownerReferences"] = owners
    spec = copy.deepcopy(source_obj.get("spec") or {})
    spec.setdefault("template", {})["spec"] = merged
    obj = {"apiVersion": api_version, "kind": kind, "metadata": new_meta, "spec": spec}

    group = apiversion.group_of(api_version)
    plan = {
        "name": target,
        "namespace": namespace,
        "kind": kind,
        "api_version": api_version,
        "api_group": group,
        "ref": target_ref,
        "hash": digest,
        "base_name": base,
        "default_name": computed,
        "object": obj,
        "source_ref": {"api_group": group, "api_version": api_version, "kind": kind, "name": source_name,
                       "namespace": namespace},
        "infrastructure_ref": {"api_group": group, "kind": kind, "name": target},
        "changes": _changes(template_spec, merged, TEMPLATE_SPEC_PATH),
        "overridden": bool(overrides),
        "warnings": warnings,
        "diff": {"before": "", "after": diffs.to_yaml_text(obj), "before_header": f"{target_ref} (absent)",
                 "after_header": f"{target_ref} (new)"},
    }
    plan["compare"] = _comparer(plan, explicit, user_labels, user_annotations)
    return plan


def _comparer(plan, explicit, user_labels, user_annotations):
    desired = plan["object"]

    def compare(existing):
        """{changed: False, message, warnings} when ``existing`` has the planned content; RolloutError otherwise."""
        meta = (existing or {}).get("metadata") or {}
        ex_annotations = meta.get("annotations") or {}
        differing = diff_paths((existing or {}).get("spec") or {}, desired["spec"], ("spec",))
        # Created here from the same merged spec, and only fields added (CRD defaults) or dropped
        # (pruned unknown fields) by the API server differ: the same content.
        made_here = (ex_annotations.get(keys.SPEC_HASH_ANNOTATION) == plan["hash"]
                     and ex_annotations.get(keys.CLONED_FROM_ANNOTATION) is not None
                     and all(old is None or new is None for _path, old, new in differing))
        if not differing or made_here:
            warnings = []
            ex_labels = meta.get("labels") or {}
            missing = [f"label {key}" for key, value in user_labels.items() if value is not None and ex_labels.get(key) != value]
            missing += [f"annotation {key}" for key, value in user_annotations.items()
                        if value is not None and ex_annotations.get(key) != value]
            if missing:
                warnings.append(f"{plan['ref']} already exists with this spec but without the requested "
                                f"{', '.join(missing)}; its metadata was not changed")
            return {"changed": False, "warnings": warnings,
                    "message": f"{plan['ref']} already exists with the same spec; nothing to do"}
        shown = ", ".join(paths.join_path(path) for path, _old, _new in differing[:5])
        if len(differing) > 5:
            shown += f" and {len(differing) - 5} more"
        if explicit and plan["default_name"] != plan["name"]:
            suggestion = plan["default_name"]
        else:
            suggestion = default_name(plan["base_name"], f"{plan['hash']}-2")
        raise RolloutError(
            f"already exists with a different spec ({shown} differ) and machine templates are immutable; "
            "nothing was changed", ref=plan["ref"], reason="template_conflict",
            hint=f"set name to a new template name (for example {suggestion}), or delete the existing template "
                 "if nothing uses it")
    return compare
