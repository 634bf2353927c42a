# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type


class ModuleDocFragment(object):
    # Connection options: the names, aliases and K8S_AUTH_* variables of kubernetes.core.
    DOCUMENTATION = r'''
options:
  kubeconfig:
    description:
      - Path to a kubeconfig file, or the kubeconfig content as a dictionary.
      - Several files can be given separated by the operating system's path separator, like C($KUBECONFIG); they
        are merged as C(kubectl) merges them (the first file that sets a cluster, context, user or the current
        context wins). Relative file names in a kubeconfig file are relative to that file's directory.
      - When neither O(kubeconfig), O(context) nor O(host) with credentials is given, the in-cluster service
        account is used when running in a pod, else C(~/.kube/config) (or C($KUBECONFIG)).
      - Can also be given with the E(K8S_AUTH_KUBECONFIG) environment variable.
      - Secret values of a kubeconfig dictionary (tokens, keys) are hidden from the output.
    type: raw
  context:
    description:
      - The kubeconfig context to use; the kubeconfig's current context when not set.
      - Can also be given with the E(K8S_AUTH_CONTEXT) environment variable.
    type: str
  host:
    description:
      - URL of the management cluster's API server, for example V(https://127.0.0.1:6443).
      - Overrides the server of the kubeconfig. With O(api_key), or O(client_cert) and O(client_key), no
        kubeconfig is read.
      - Can also be given with the E(K8S_AUTH_HOST) environment variable.
    type: str
  api_key:
    description:
      - Bearer token to authenticate with the API server.
      - Can also be given with the E(K8S_AUTH_API_KEY) environment variable.
    type: str
  validate_certs:
    description:
      - Whether to verify the API server's TLS certificate. Set to V(false) only for throw-away test clusters.
      - Overrides C(insecure-skip-tls-verify) of the kubeconfig.
      - Can also be given with the E(K8S_AUTH_VALIDATE_CERTS) or E(K8S_AUTH_VERIFY_SSL) environment variables.
    type: bool
    default: true
    aliases: [verify_ssl]
  ca_cert:
    description:
      - Path to a CA certificate file used to verify the API server.
      - Can also be given with the E(K8S_AUTH_CA_CERT) or E(K8S_AUTH_SSL_CA_CERT) environment variables.
    type: path
    aliases: [ssl_ca_cert]
  client_cert:
    description:
      - Path to a client certificate file to authenticate with.
      - Can also be given with the E(K8S_AUTH_CLIENT_CERT) or E(K8S_AUTH_CERT_FILE) environment variables.
    type: path
    aliases: [cert_file]
  client_key:
    description:
      - Path to the private key file of O(client_cert).
      - Can also be given with the E(K8S_AUTH_CLIENT_KEY) or E(K8S_AUTH_KEY_FILE) environment variables.
    type: path
    aliases: [key_file]
  proxy:
    description:
      - URL of an HTTP(S) proxy to reach the API server through, for example V(http://proxy.example.com:3128).
      - Can also be given with the E(K8S_AUTH_PROXY) environment variable.
    type: str
  impersonate_user:
    description:
      - User name to impersonate (the authenticated user needs the C(impersonate) permission).
      - Can also be given with the E(K8S_AUTH_IMPERSONATE_USER) environment variable.
    type: str
  impersonate_groups:
    description:
      - Groups to impersonate together with O(impersonate_user).
      - Can also be given with the E(K8S_AUTH_IMPERSONATE_GROUPS) environment variable (comma-separated).
    type: list
    elements: str
requirements:
  - urllib3 and PyYAML (both are installed with the kubernetes client)
  - kubernetes >= 24.2.0 (the official Kubernetes Python client), for kubeconfig users with C(exec) or
    C(auth-provider) and for the in-cluster service account; other connection settings are read without it
notes:
  - The options and environment variables are those of C(kubernetes.core), so the same C(module_defaults) and
    AWX/AAP Kubernetes credentials work. Set them once for every module of this collection with
    C(module_defaults) and the action group C(group/capi.rollout.rollout).
  - The user needs the permissions of the ClusterRole in C(docs/rbac.yml) of this collection; a permission
    error names the verb and resource that is missing.
  - Requests that only read (get, list, watch) are retried with backoff on HTTP 429, 5xx and connection
    errors; writes are sent once. A change of a MachineDeployment or KubeadmControlPlane is a JSON patch whose
    C(test) operations hold the fields it was planned from (template, version, trigger, pause, rollout records);
    when one of them changed meanwhile (HTTP 422, a failed test) or on a conflict (HTTP 409), the object is read
    again, planned again and written, up to 5 times. Status writes and other changes of a busy object do not
    make it fail.
  - Options are taken as given, before anything is read - whole numbers as numbers or their digits, mappings as
    mappings, text as text, each number within its range (the collection's table of bounds, docs/hardware-refresh.md).
    What Ansible would convert (V(12.0) or V(1e3) for a whole number, V(a=1) for a mapping, a boolean or a list for
    text) and control characters (a NUL byte) are refused, naming the option and the value (reason C(invalid_setting)).
'''
