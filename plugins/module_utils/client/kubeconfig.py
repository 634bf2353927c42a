# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A kubeconfig reader and the urllib3 pool for what it read, without importing the ``kubernetes`` client
(its import costs 0.3-0.45 s per module call); client/connection.py decides when they are used.

Files are merged as kubectl merges them: the first file that sets a cluster, context or user (by name), or
the current-context, wins; relative file paths resolve against the directory of the file that names them.
Cluster: server, certificate-authority(-data), insecure-skip-tls-verify, tls-server-name, proxy-url.
User: client-certificate(-data), client-key(-data), token, tokenFile, username/password.
A user with ``exec`` or ``auth-provider``, or content this reader does not understand, raises Unsupported:
the kubernetes client loads it instead.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import atexit
import base64
import ipaddress
import os
import shutil
import ssl
import tempfile

try:
    from urllib.parse import urlparse
    from urllib.request import getproxies
except ImportError:  # pragma: no cover - Python 2 is not supported, keeps the import sanity test quiet
    urlparse = getproxies = None

from ansible.module_utils.common.yaml import HAS_YAML, yaml_load

try:
    import urllib3
    from urllib3.util.ssl_ import create_urllib3_context
except ImportError:  # connection.py reports the missing library before a pool is built
    urllib3 = create_urllib3_context = None

try:
    from yaml import YAMLError
except ImportError:  # without PyYAML, files are left to the kubernetes client (see read)
    YAMLError = ValueError

# The user keys that need code only the kubernetes client has (plugins, token refreshers).
KUBERNETES_USER_KEYS = ("exec", "auth-provider")
_SECTIONS = (("clusters", "cluster"), ("contexts", "context"), ("users", "user"))


class Unsupported(Exception):
    """Content the kubernetes client must load (the reason is the message)."""


class KubeconfigError(ValueError):
    """A kubeconfig that cannot be used (the texts are those of kubernetes.config)."""


class Configuration(object):
    """The attributes of kubernetes.client.Configuration that the rest of the collection reads or sets."""

    def __init__(self):
        self.host = None
        self.api_key = {}
        self.api_key_prefix = {}
        self.refresh_api_key_hook = None  # never set here: tokens are static on this path
        self.username = None
        self.password = None
        self.verify_ssl = True
        self.ssl_ca_cert = None
        self.ca_cert_data = None  # PEM text or DER bytes, handed to the ssl module as they are
        self.cert_file = None
        self.key_file = None
        self.tls_server_name = None
        self.proxy = None
        self.retries = None
        self.credentials_note = None  # why a 401 may come from the kubeconfig's user naming (credentials_note)
        self._temp_dir = None

    def auth_settings(self):
        value = self.api_key.get("authorization")
        return {"BearerToken": {"type": "api_key", "in": "header", "key": "authorization", "value": value}} if value else {}

    def temp_file(self, content):
        """Path of a new 0600 file with ``content`` in a private directory removed by close() or at exit
        (the ssl module loads client certificates and keys from files only)."""
        if self._temp_dir is None:
            self._temp_dir = tempfile.mkdtemp(prefix="capi-rollout-")
            atexit.register(self.close)
        handle, path = tempfile.mkstemp(dir=self._temp_dir)
        with os.fdopen(handle, "wb") as out:
            out.write(content)
        return path

    def close(self):
        if self._temp_dir:
            shutil.rmtree(self._temp_dir, ignore_errors=True)
            self._temp_dir = None


class _Entry(object):
    """A named cluster/context/user and the directory its relative paths resolve against."""

    def __init__(self, value, base):
        self.value = value
        self.base = base


def _check(condition, what):
    if not condition:
        raise Unsupported(what)


def _merge(merged, document, base):
    _check(isinstance(document, dict), "the kubeconfig is not a mapping")
    for section, key in _SECTIONS:
        items = document.get(section) or []
        _check(isinstance(items, list), f"{section} is not a list")
        for item in items:
            _check(isinstance(item, dict) and isinstance(item.get("name"), str) and isinstance(item.get(key) or {}, dict),
                   f"an entry of {section} has no name or no {key} mapping")
            kept = merged[section].setdefault(item["name"], _Entry(item.get(key) or {}, base))
            if kept.value != (item.get(key) or {}):  # kubectl keeps the first of same-named entries, silently
                merged["shadowed"].setdefault(section, set()).add(item["name"])
    if document.get("current-context") and merged["current-context"] is None:
        merged["current-context"] = document["current-context"]


def read(kubeconfig):
    """The merged kubeconfig: {"clusters"/"contexts"/"users": {name: _Entry}, "current-context": name}.

    ``kubeconfig`` is a dict, os.pathsep-separated existing paths, or None for $KUBECONFIG / ~/.kube/config.
    """
    merged = {"clusters": {}, "contexts": {}, "users": {}, "current-context": None, "shadowed": {}}
    if isinstance(kubeconfig, dict):
        _merge(merged, kubeconfig, "")
        return merged
    _check(HAS_YAML, "PyYAML is not installed")
    paths = [os.path.expanduser(path) for path in (kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config").split(os.pathsep)]
    found = False
    for path in paths:
        if not path or not os.path.exists(path):
            continue
        with open(path, "rb") as handle:
            try:
                document = yaml_load(handle)
            except YAMLError as err:
                raise KubeconfigError(f"Invalid kube-config. {path} is not YAML: {err}")
        if document is None:
            raise KubeconfigError(f"Invalid kube-config. {path} file is empty")
        _merge(merged, document, os.path.dirname(os.path.abspath(path)))
        found = True
    if not found:
        raise KubeconfigError("Invalid kube-config file. No configuration found.")
    return merged


def _named(merged, section, name):
    entry = merged[section].get(name)
    if entry is None:
        raise KubeconfigError(f"Invalid kube-config file. Expected object with name {name} in {section} list")
    return entry


def select(merged, context=None):
    """(context name, cluster _Entry, user _Entry or None) of ``context`` or the current-context."""
    name = context or merged["current-context"]
    if not name:
        raise KubeconfigError("Invalid kube-config file. Expected key current-context in kube-config")
    ctx = _named(merged, "contexts", name).value
    cluster = _named(merged, "clusters", ctx.get("cluster"))
    user = merged["users"].get(ctx.get("user")) if ctx.get("user") else None
    return name, cluster, user


def credentials_note(merged, context):
    """Why the user of ``context`` may hold another management cluster's credentials, or None.

    Merging kubeconfigs (several files in KUBECONFIG, or ``kubectl config view --flatten``) keeps the first user
    of each name: when every management cluster's kubeconfig names its user alike, all contexts but the first send
    the first cluster's token and get 401.
    """
    ctx = merged["contexts"].get(context)
    user = ctx.value.get("user") if ctx is not None else None
    if not user:
        return None
    if user in merged["shadowed"].get("users", ()):
        return (f"the kubeconfig user {user} of context {context} is defined differently in more than one kubeconfig "
                "file and only the first is used (as kubectl does): give each management cluster's user its own name "
                "(docs/awx.md)")
    servers = {(merged["clusters"].get(entry.value.get("cluster")) or _Entry({}, "")).value.get("server")
               for entry in merged["contexts"].values() if entry.value.get("user") == user}
    if len(servers) > 1:
        return (f"the kubeconfig user {user} of context {context} is the user of {len(servers)} API servers: a kubeconfig "
                "merged with `kubectl config view --flatten` keeps only the first of same-named users, so this may be "
                "another management cluster's token; give each management cluster's user its own name before merging "
                "(docs/awx.md)")
    return None


def check_user(user):
    """Raises Unsupported when the user entry needs the kubernetes client."""
    for key in KUBERNETES_USER_KEYS:
        _check(user is None or not user.value.get(key), f"the kubeconfig user has {key}")


def _path(entry, key):
    path = os.path.normpath(os.path.join(entry.base, str(entry.value[key])))
    if not os.path.isfile(path):
        raise KubeconfigError(f"File does not exist: {path}")
    return path


def _data(entry, key):
    return base64.b64decode(entry.value[key + "-data"], validate=False)


def _file_or_data(config, entry, key):
    """A path for ``key``: the file named, or a temp file with ``key``-data (data wins, as kubectl)."""
    if entry is None:
        return None
    if entry.value.get(key + "-data"):
        return config.temp_file(_data(entry, key))
    return _path(entry, key) if entry.value.get(key) else None


def _ca_data(config, data):
    """(cadata, cafile) for the CA certificates ``data``: load_verify_locations takes ASCII PEM as text and
    DER as bytes, so only PEM with other text around it needs a file."""
    if b"-----BEGIN" not in data:
        return data, None
    try:
        return data.decode("ascii"), None
    except UnicodeDecodeError:
        return None, config.temp_file(data)


def configuration(cluster, user):
    """A Configuration from the selected cluster and user entries."""
    config = Configuration()
    settings = cluster.value
    _check(isinstance(settings.get("server", ""), str), "server is not a string")
    config.host = (settings.get("server") or "").rstrip("/") or None
    if config.host and config.host.startswith("https"):
        if settings.get("certificate-authority-data"):
            config.ca_cert_data, config.ssl_ca_cert = _ca_data(config, _data(cluster, "certificate-authority"))
        elif settings.get("certificate-authority"):
            config.ssl_ca_cert = _path(cluster, "certificate-authority")
        config.cert_file = _file_or_data(config, user, "client-certificate")
        config.key_file = _file_or_data(config, user, "client-key")
    if "insecure-skip-tls-verify" in settings:
        config.verify_ssl = not settings["insecure-skip-tls-verify"]
    config.tls_server_name = settings.get("tls-server-name") or None
    config.proxy = settings.get("proxy-url") or None
    if user is not None:
        _authenticate(config, user)
    return config


def _authenticate(config, user):
    token = user.value.get("token")
    if not token and user.value.get("tokenFile"):
        with open(_path(user, "tokenFile"), encoding="utf-8") as handle:
            token = handle.read().strip()
    if token:
        config.api_key = {"authorization": f"Bearer {token}"}
    elif "username" in user.value and "password" in user.value:
        config.username = str(user.value["username"])
        config.password = str(user.value["password"])
        basic = base64.b64encode(f"{config.username}:{config.password}".encode("utf-8")).decode("ascii")
        config.api_key = {"authorization": f"Basic {basic}"}


def pool_manager(config):
    """The urllib3 pool for ``config`` with the pool settings the kubernetes client would give it
    (TLS, client certificate, proxy)."""
    # CERT_REQUIRED also turns on the hostname check (against tls-server-name when given).
    context = create_urllib3_context(cert_reqs=ssl.CERT_REQUIRED if config.verify_ssl else ssl.CERT_NONE)
    if not (config.ssl_ca_cert or config.ca_cert_data):
        context.load_default_certs()  # urllib3 does it only for contexts it makes itself
    # urllib3 loads the files when it connects: a bad CA or key file is a TLS error of the request, as before.
    # Connections kept per host as the kubernetes client keeps them (5 per CPU): an open watch holds one, and the
    # reads made meanwhile would otherwise each open a new TLS connection and drop it.
    args = {"ssl_context": context, "ca_certs": config.ssl_ca_cert, "ca_cert_data": config.ca_cert_data,
            "cert_file": config.cert_file, "key_file": config.key_file, "retries": False, "num_pools": 4,
            "maxsize": (os.cpu_count() or 1) * 5}
    if config.tls_server_name:
        args["server_hostname"] = config.tls_server_name
    # As kubernetes.client.Configuration: an explicit proxy, else the environment's; no_proxy applies to both.
    proxies = getproxies()
    proxy = config.proxy or proxies.get(urlparse(config.host).scheme) or proxies.get("all")
    if not proxy or _bypass_proxy(config.host, proxies.get("no") or ""):
        return urllib3.PoolManager(**args)
    if proxy.split("://", 1)[0].lower() in ("socks4", "socks4a", "socks5", "socks5h"):
        from urllib3.contrib.socks import SOCKSProxyManager  # pylint: disable=import-outside-toplevel  # needs PySocks
        return SOCKSProxyManager(proxy, **args)
    return urllib3.ProxyManager(proxy, **args)


def _bypass_proxy(url, no_proxy):
    """Whether ``url`` matches a rule of the comma-separated ``no_proxy`` (host, domain suffix, IP network, *)."""
    parsed = urlparse(url)
    host = (parsed.hostname or "").lower()
    netloc = parsed.netloc.lower()
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    for rule in (entry.strip().lower() for entry in no_proxy.split(",")):
        if rule == "*":
            return True
        if not rule:
            continue
        if address is not None:
            try:
                if address in ipaddress.ip_network(rule, strict=False):
                    return True
            except ValueError:
                pass
        rule = rule.lstrip(".")
        if host == rule or host.endswith("." + rule) or netloc == rule or netloc.endswith("." + rule):
            return True
    return False
