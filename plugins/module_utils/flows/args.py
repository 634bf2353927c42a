# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Argument specs shared by the modules.

The connection options have kubernetes.core's names, aliases and ``K8S_AUTH_*`` environment
variables, so ``module_defaults`` and AWX/AAP "OpenShift or Kubernetes API Bearer Token"
credentials work unchanged. Documented in plugins/doc_fragments/connection.py and objects.py.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy

from ansible.module_utils.basic import env_fallback

from ansible_collections.capi.rollout.plugins.module_utils.core.lease import DEFAULT_NAME as DEFAULT_LEASE_NAME


def _env(*names):
    return (env_fallback, list(names))


AUTH_ARG_SPEC = {
    "kubeconfig": {"type": "raw", "fallback": _env("K8S_AUTH_KUBECONFIG")},
    "context": {"type": "str", "fallback": _env("K8S_AUTH_CONTEXT")},
    "host": {"type": "str", "fallback": _env("K8S_AUTH_HOST")},
    "api_key": {"type": "str", "no_log": True, "fallback": _env("K8S_AUTH_API_KEY")},
    "validate_certs": {"type": "bool", "default": True, "aliases": ["verify_ssl"],
                       "fallback": _env("K8S_AUTH_VALIDATE_CERTS", "K8S_AUTH_VERIFY_SSL")},
    "ca_cert": {"type": "path", "aliases": ["ssl_ca_cert"], "fallback": _env("K8S_AUTH_CA_CERT", "K8S_AUTH_SSL_CA_CERT")},
    "client_cert": {"type": "path", "aliases": ["cert_file"],
                    "fallback": _env("K8S_AUTH_CLIENT_CERT", "K8S_AUTH_CERT_FILE")},
    "client_key": {"type": "path", "aliases": ["key_file"], "no_log": False,
                   "fallback": _env("K8S_AUTH_CLIENT_KEY", "K8S_AUTH_KEY_FILE")},
    "proxy": {"type": "str", "fallback": _env("K8S_AUTH_PROXY")},
    "impersonate_user": {"type": "str", "fallback": _env("K8S_AUTH_IMPERSONATE_USER")},
    # A comma-separated K8S_AUTH_IMPERSONATE_GROUPS becomes a list through type=list.
    "impersonate_groups": {"type": "list", "elements": "str", "fallback": _env("K8S_AUTH_IMPERSONATE_GROUPS")},
}

AUTH_OPTIONS = tuple(AUTH_ARG_SPEC)

TARGET_ARG_SPEC = {
    "kind": {"type": "str", "default": "MachineDeployment"},
    "namespace": {"type": "str", "default": "default"},
    "name": {"type": "str"},
    "names": {"type": "list", "elements": "str"},
    "cluster_name": {"type": "str"},
    "label_selectors": {"type": "list", "elements": "str"},
}

# name / names / (cluster_name and/or label_selectors) are three ways to select; one at a time.
TARGET_MUTUALLY_EXCLUSIVE = [
    ["name", "names"],
    ["name", "cluster_name"],
    ["name", "label_selectors"],
    ["names", "cluster_name"],
    ["names", "label_selectors"],
]
# The changing modules never act on "everything in the namespace" by accident.
TARGET_REQUIRED_ONE_OF = [["name", "names", "cluster_name", "label_selectors"]]

# The reference to an infrastructure machine template a restart switches to: capi_rollout_restart's
# infrastructure_ref and the infrastructure_ref of each of its switches.
INFRASTRUCTURE_REF_OPTIONS = {
    "name": {"type": "str", "required": True},
    "kind": {"type": "str"},
    "api_group": {"type": "str"},
    "api_version": {"type": "str"},
}
# capi_rollout_restart's switches: the objects to select, each with the template it is switched to, or the
# template to make for it (capi_machine_template's per-object settings).
SWITCHES_ARG_SPEC = {"type": "list", "elements": "dict", "options": {
    "name": {"type": "str", "required": True},
    "infrastructure_ref": {"type": "dict", "options": INFRASTRUCTURE_REF_OPTIONS},
    "template": {"type": "dict", "options": {
        "overrides": {"type": "dict"},
        "labels": {"type": "dict"},
        "annotations": {"type": "dict"},
    }},
}, "mutually_exclusive": [["infrastructure_ref", "template"]], "required_one_of": [["infrastructure_ref", "template"]]}
# switches is a fourth way to select (and names each object's template): restart only, pause and undo keep
# the shared rules above.
RESTART_MUTUALLY_EXCLUSIVE = TARGET_MUTUALLY_EXCLUSIVE + [
    ["switches", other] for other in ("name", "names", "cluster_name", "label_selectors", "infrastructure_ref")]
RESTART_REQUIRED_ONE_OF = [TARGET_REQUIRED_ONE_OF[0] + ["switches"]]

# The lock of a management cluster: capi_rollout_lock's options, and capi_refresh_plan's lock.
LEASE_ARG_SPEC = {
    "name": {"type": "str", "default": DEFAULT_LEASE_NAME},
    "namespace": {"type": "str", "default": "default"},
    "holder": {"type": "str", "required": True},
    "lease_duration_seconds": {"type": "int", "default": 300},
}

# What a writing module does with a field another manager owns (core/owners.py; doc fragment field_owners).
FIELD_OWNERS_ARG_SPEC = {"field_owners": {"type": "str", "choices": ["refuse", "warn", "ignore"], "default": "refuse"}}

WAIT_ARG_SPEC = {
    "wait": {"type": "bool", "default": False},
    "wait_timeout": {"type": "int", "default": 1200},
    "stall_timeout": {"type": "int", "default": 600},
}


def argument_spec(*specs, **extra):
    """Deep copy of the given spec dicts merged with ``extra`` options."""
    out = {}
    for spec in specs:
        out.update(copy.deepcopy(spec))
    out.update(copy.deepcopy(extra))
    return out


def auth_params(params):
    """The connection options out of a module's params."""
    return {key: params.get(key) for key in AUTH_OPTIONS}
