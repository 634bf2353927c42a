# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rollout identity of a machine template (reference §3.2).

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


def _ref_text(ref):
    return f"{ref['kind']} {ref['name']}" if ref else "<none>"


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
