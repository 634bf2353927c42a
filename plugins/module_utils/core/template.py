# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rollout identity of a machine template (upstream mdutil.MachineTemplateUpToDate,
internal/controllers/machinedeployment/mdutil/util.go@v1.10.10, core/reconcilers/machinedeployment/mdutil/util.go@v1.14.0).

A MachineSet is "new" for its MachineDeployment iff version, bootstrap (configRef group/kind/name or
dataSecretName), infrastructureRef (group/kind/name) and failureDomain are equal; every other template
field is propagated in place and never causes a rollout. The API version part of refs is ignored.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.core import apiversion


def identity(template_spec):
    """{version, infrastructure_ref, bootstrap_ref, data_secret_name, failure_domain} of a template spec
    (MD/MS ``spec.template.spec`` or a Machine's ``spec``), either API version."""
    spec = template_spec or {}
    bootstrap = spec.get("bootstrap") or {}
    return {
        "version": spec.get("version") or None,
        "infrastructure_ref": apiversion.normalize_ref(spec.get("infrastructureRef")),
        "bootstrap_ref": apiversion.normalize_ref(bootstrap.get("configRef")),
        "data_secret_name": bootstrap.get("dataSecretName") or None,
        "failure_domain": spec.get("failureDomain") or None,
    }


def _ref_text(object_ref):
    return f"{object_ref['kind']} {object_ref['name']}" if object_ref else "<none>"


def differences(current, desired):
    """Why ``current`` (an identity) needs a rollout to reach ``desired``; [] when up to date.

    Messages follow CAPI v1.14's UpToDateResult log messages ("spec.version v1.30.0, v1.31.0 required").
    """
    out = []
    if current.get("version") != desired.get("version"):
        out.append(f"spec.version {current.get('version')}, {desired.get('version')} required")
    if current.get("bootstrap_ref") != desired.get("bootstrap_ref"):
        out.append(
            f"spec.bootstrap.configRef {_ref_text(current.get('bootstrap_ref'))}, {_ref_text(desired.get('bootstrap_ref'))} required")
    elif current.get("data_secret_name") != desired.get("data_secret_name"):
        out.append(
            f"spec.bootstrap.dataSecretName {current.get('data_secret_name')}, {desired.get('data_secret_name')} required")
    if current.get("infrastructure_ref") != desired.get("infrastructure_ref"):
        out.append(
            f"spec.infrastructureRef {_ref_text(current.get('infrastructure_ref'))}, "
            f"{_ref_text(desired.get('infrastructure_ref'))} required")
    if current.get("failure_domain") != desired.get("failure_domain"):
        out.append(f"spec.failureDomain {current.get('failure_domain')}, {desired.get('failure_domain')} required")
    return out


def up_to_date(current, desired):
    return not differences(current, desired)


# ---------------------------------------------------------------------------------------------
# compact identities (history record) and the templates an identity needs

_REF_KEYS = ("apiVersion", "apiGroup", "kind", "name")


def compact_ref(object_ref):
    """A reference reduced to what identifies it: apiVersion (v1beta1) or apiGroup (v1beta2), kind,
    name; namespace/uid/resourceVersion/fieldPath are dropped. None for no reference."""
    if not isinstance(object_ref, dict) or not object_ref:
        return None
    return {key: object_ref[key] for key in _REF_KEYS if object_ref.get(key) is not None}


def compact_identity(template_spec):
    """The rollout identity of a template spec in CAPI's own field names, absent fields left out:
    {version, infrastructureRef, bootstrap: {configRef | dataSecretName}, failureDomain}.
    ``identity()`` reads it back like a template spec."""
    spec = template_spec or {}
    out = {}
    if spec.get("version"):
        out["version"] = spec["version"]
    infra = compact_ref(spec.get("infrastructureRef"))
    if infra:
        out["infrastructureRef"] = infra
    bootstrap = spec.get("bootstrap") or {}
    compact_bootstrap = {}
    config_ref = compact_ref(bootstrap.get("configRef"))
    if config_ref:
        compact_bootstrap["configRef"] = config_ref
    if bootstrap.get("dataSecretName"):
        compact_bootstrap["dataSecretName"] = bootstrap["dataSecretName"]
    if compact_bootstrap:
        out["bootstrap"] = compact_bootstrap
    if spec.get("failureDomain"):
        out["failureDomain"] = spec["failureDomain"]
    return out


def template_refs(template_spec, namespace):
    """The templates a template spec needs to exist for a rollout to finish: its infrastructure
    template and its bootstrap config template (a dataSecretName Secret is not a template and is
    not listed). [{role, api_group, kind, name, namespace[, api_version]}]."""
    spec = template_spec or {}
    out = []
    for role, raw in (("infrastructure", spec.get("infrastructureRef")),
                      ("bootstrap", (spec.get("bootstrap") or {}).get("configRef"))):
        object_ref = apiversion.normalize_ref(raw)
        if not object_ref or not object_ref.get("kind") or not object_ref.get("name"):
            continue
        entry = {"role": role, "api_group": object_ref["api_group"], "kind": object_ref["kind"], "name": object_ref["name"], "namespace": namespace}
        if raw.get("apiVersion"):
            entry["api_version"] = raw["apiVersion"]
        out.append(entry)
    return out


def templates_by_kind(required):
    """{(api_group, kind): [names]} of template references: one list call per kind checks them all."""
    out = {}
    for template_ref in required or []:
        names = out.setdefault((template_ref["api_group"], template_ref["kind"]), [])
        if template_ref["name"] not in names:
            names.append(template_ref["name"])
    return out


def template_key(item, kind_key=None):
    """(api_group, kind, name) of an existing template given as a Kubernetes object, a reference
    (either shape, or normalized), a (group, kind, name) tuple or, with ``kind_key`` = (group,
    kind), a bare name. None when it is none of these."""
    if isinstance(item, (tuple, list)) and len(item) == 3:
        return tuple(item)
    if isinstance(item, str) and kind_key is not None:
        return kind_key[0], kind_key[1], item
    if not isinstance(item, dict):
        return None
    if isinstance(item.get("metadata"), dict):
        group = apiversion.group_of(item.get("apiVersion"))
        kind = item.get("kind")
        if kind_key is not None:
            group, kind = (group if item.get("apiVersion") else kind_key[0]), (kind or kind_key[1])
        return group, kind, item["metadata"].get("name")
    if "api_group" in item:
        return item.get("api_group"), item.get("kind"), item.get("name")
    object_ref = apiversion.normalize_ref(item)
    return (object_ref["api_group"], object_ref["kind"], object_ref["name"]) if object_ref else None


def missing_templates(required, existing):
    """(missing, unchecked): which ``required`` refs (template_refs entries) are not in ``existing``.

    ``existing`` is either a mapping {(api_group, kind): names or objects} - only kinds that are keys
    count as checked, the others are returned as ``unchecked`` - or an iterable of objects / refs /
    (group, kind, name) tuples, which counts every kind as checked. Objects in another namespace
    than the required reference do not count.
    """
    found = set()
    checked = None
    if isinstance(existing, dict):
        checked = set()
        for kind_key, items in existing.items():
            kind_key = tuple(kind_key)
            checked.add(kind_key)
            for item in items or []:
                if isinstance(item, dict) and isinstance(item.get("metadata"), dict):
                    found.add((template_key(item, kind_key), item["metadata"].get("namespace")))
                else:
                    found.add((template_key(item, kind_key), None))
    else:
        for item in existing or []:
            namespace = item["metadata"].get("namespace") if isinstance(item, dict) and isinstance(item.get("metadata"), dict) else None
            found.add((template_key(item), namespace))
    missing, unchecked = [], []
    for template_ref in required or []:
        key = (template_ref["api_group"], template_ref["kind"], template_ref["name"])
        if checked is not None and (key[0], key[1]) not in checked:
            unchecked.append(template_ref)
        elif (key, None) not in found and (key, template_ref.get("namespace")) not in found:
            missing.append(template_ref)
    return missing, unchecked
