# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One HTTP connection to a management cluster.

Configuration resolution follows kubernetes.core: explicit host + credentials skip the kubeconfig;
otherwise the kubeconfig (paths, dict, or the default $KUBECONFIG / ~/.kube/config) or the in-cluster
service account is loaded; explicit options then override what was loaded.

Loading does not import the ``kubernetes`` client (0.3-0.45 s per module call) in the common cases:
explicit host + credentials, and kubeconfigs read by client/kubeconfig.py (server, CA, insecure-skip-tls-verify,
tls-server-name, proxy-url; token, tokenFile, client certificate, username/password; files merged as kubectl
merges them). ``kubernetes.config`` loads the rest, as before: a user with ``exec`` or ``auth-provider``,
the in-cluster service account (no kubeconfig nor context given, KUBERNETES_SERVICE_HOST/PORT set) and
kubeconfig content the light reader does not understand. ``_load`` makes that choice.

Transport is a urllib3 pool used with ``retries=False``: every retry is decided (and counted) by
client/requests.py. The pool is built here from the light configuration, or by kubernetes.client.ApiClient.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import re
import socket
import threading
import time
import traceback

from ansible_collections.capi.rollout.plugins.module_utils.client import kubeconfig as kc
from ansible_collections.capi.rollout.plugins.module_utils.client.errors import TransportError, is_tls_failure

# urllib3 (installed with the kubernetes client) is the transport; flows/run.py reports its absence before any request.
URLLIB3_IMPORT_ERROR = None
try:
    import urllib3
    try:
        from urllib3 import HTTPHeaderDict
    except ImportError:  # urllib3 < 2
        from urllib3._collections import HTTPHeaderDict
except ImportError:
    URLLIB3_IMPORT_ERROR = traceback.format_exc()

try:
    from urllib.parse import quote, urlencode
except ImportError:  # pragma: no cover - Python 2 is not supported, keeps the import sanity test quiet
    quote = urlencode = None

USER_AGENT = "capi.rollout"

# kubeconfig keys whose values are secrets (added to no_log_values when kubeconfig is a dict).
_SECRET_KEYS = ("token", "password", "secret", "client-key-data", "client-certificate-data", "api_key",
                "access-token", "refresh-token", "id-token")


class ConnectionConfigError(Exception):
    """The options do not describe a usable connection (bad kubeconfig, unknown context, ...)."""


def secret_values(kubeconfig):
    """Every secret value of a kubeconfig given as a dict (for the module's no_log_values)."""
    found = set()

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key in _SECRET_KEYS and isinstance(value, str) and value:
                    found.add(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(kubeconfig)
    return found


def build_configuration(params):
    """The connection settings from the connection options (see flows/args.py): a kubeconfig.Configuration,
    or a kubernetes.client.Configuration when the kubernetes client loaded them (see _load)."""
    kubeconfig = params.get("kubeconfig")
    context = params.get("context")
    host = params.get("host")
    explicit = bool(host and (params.get("api_key") or (params.get("client_cert") and params.get("client_key"))))
    if isinstance(kubeconfig, str) and kubeconfig:
        missing = [path for path in kubeconfig.split(os.pathsep) if path and not os.path.exists(os.path.expanduser(path))]
        if missing:
            raise ConnectionConfigError(f"kubeconfig file {', '.join(missing)} does not exist")
        kubeconfig = os.pathsep.join(os.path.expanduser(path) for path in kubeconfig.split(os.pathsep) if path)
    elif kubeconfig is not None and not isinstance(kubeconfig, dict):
        raise ConnectionConfigError("kubeconfig must be a file path or a dictionary (the kubeconfig content)")
    try:
        config = _load(kubeconfig, context, explicit)
    except (IOError, OSError, ValueError, KeyError, TypeError) as err:
        where = "the kubeconfig given" if kubeconfig else "the default kubeconfig (~/.kube/config or $KUBECONFIG)"
        raise ConnectionConfigError(
            f"cannot load connection settings from {where}{' with context ' + context if context else ''}: {err}; "
            "give kubeconfig/context, or host with api_key (or client_cert and client_key)")
    if params.get("api_key"):
        config.api_key = {"authorization": "Bearer " + params["api_key"]}
        config.api_key_prefix = {}
        config.refresh_api_key_hook = None
    overrides = {}
    if host:
        overrides["host"] = host
    if params.get("validate_certs") is not None:
        # validate_certs defaults to true and wins over a kubeconfig's insecure-skip-tls-verify.
        overrides["verify_ssl"] = bool(params["validate_certs"])
    missing = [f"{option} {params[option]}" for option in ("ca_cert", "client_cert", "client_key")
               if params.get(option) and not os.path.isfile(params[option])]
    if missing:
        raise ConnectionConfigError(f"{' and '.join(missing)}: no such file; give the path of a PEM file (or leave the option "
                                    "unset to use the kubeconfig's)")
    for option, attr in (("ca_cert", "ssl_ca_cert"), ("client_cert", "cert_file"), ("client_key", "key_file"),
                         ("proxy", "proxy")):
        if params.get(option):
            overrides[attr] = params[option]
    if params.get("ca_cert"):
        overrides["ca_cert_data"] = None  # ca_cert replaces a kubeconfig's certificate-authority-data
    _apply(config, overrides)
    if config.refresh_api_key_hook is not None:
        _keep_overrides(config, overrides)
    if not config.host or config.host == "http://localhost":
        raise ConnectionConfigError("no API server address: give host, or a kubeconfig whose context names a cluster")
    # Our own retries, never urllib3's (they would hide requests from the audit log and our budget).
    config.retries = False
    return config


def _load(kubeconfig, context, explicit):
    """The loaded settings; the one place that chooses between client/kubeconfig.py and the kubernetes client.

    Raises KubeconfigError, OSError or ValueError for a kubeconfig that cannot be used.
    """
    if explicit and not kubeconfig and not context:
        return kc.Configuration()
    if kubeconfig is None and not context and os.environ.get("KUBERNETES_SERVICE_HOST") and os.environ.get("KUBERNETES_SERVICE_PORT"):
        return _kubernetes_configuration(None, None, "the in-cluster service account")
    name = context
    try:
        merged = kc.read(kubeconfig)
        name, cluster, user = kc.select(merged, context)
        kc.check_user(user)
        config = kc.configuration(cluster, user)
        config.credentials_note = kc.credentials_note(merged, name)
        return config
    except kc.Unsupported as err:
        # The context chosen by kubectl's merge rules is the one the kubernetes client loads too.
        return _kubernetes_configuration(kubeconfig, name, str(err))


def _kubernetes_configuration(kubeconfig, context, reason):
    """kubernetes.client.Configuration loaded by kubernetes.config (``reason``: why the light path does not)."""
    try:
        # Imported here: the import is the start-up cost the light path avoids.
        from kubernetes import client as k8s_client  # pylint: disable=import-outside-toplevel
        from kubernetes import config as k8s_config  # pylint: disable=import-outside-toplevel
        from kubernetes.config.config_exception import ConfigException  # pylint: disable=import-outside-toplevel
    except ImportError as err:
        raise ConnectionConfigError(f"the kubernetes Python library (pip install kubernetes) is needed to load the "
                                    f"connection settings ({reason}) but cannot be imported: {err}")
    # type.__call__ avoids old kubernetes clients handing out a copy of the global default.
    config = type.__call__(k8s_client.Configuration)
    try:
        if isinstance(kubeconfig, dict):
            k8s_config.load_kube_config_from_dict(kubeconfig, context=context, client_configuration=config,
                                                  persist_config=False)
        elif kubeconfig or context:
            k8s_config.load_kube_config(config_file=kubeconfig or None, context=context, client_configuration=config,
                                        persist_config=False)
        else:
            try:
                k8s_config.load_incluster_config(client_configuration=config)
            except ConfigException:
                k8s_config.load_kube_config(client_configuration=config, persist_config=False)
    except ConfigException as err:
        raise kc.KubeconfigError(str(err))
    return config


def _apply(config, overrides):
    for attr, value in overrides.items():
        setattr(config, attr, value)
    if config.host:
        config.host = config.host.rstrip("/")


def _keep_overrides(config, overrides):
    """The kubeconfig loader's token refresh hook copies host/TLS settings from the kubeconfig into
    the configuration again at every token read; re-apply the explicit options after it."""
    original = config.refresh_api_key_hook

    def hook(cfg):
        original(cfg)
        _apply(cfg, overrides)
        cfg.refresh_api_key_hook = hook

    config.refresh_api_key_hook = hook


def _auth_header(config):
    settings = config.auth_settings() or {}
    bearer = settings.get("BearerToken")
    if bearer and bearer.get("value"):
        return bearer["value"]
    basic = settings.get("BasicAuth")
    if basic and basic.get("value") and (config.username or config.password):
        return basic["value"]
    return None


def _pool(config):
    """The urllib3 pool for the configuration: the kubernetes client's for its own configuration."""
    if not isinstance(config, kc.Configuration):
        from kubernetes import client as k8s_client  # pylint: disable=import-outside-toplevel  # loaded by _load already
        return k8s_client.ApiClient(config).rest_client.pool_manager
    return kc.pool_manager(config)


# What Go's encoding/json (encode.go ``(*encodeState).string``, Go 1.19, with escapeHTML as json.Marshal and
# json.NewEncoder set it) writes otherwise than json.dumps(ensure_ascii=False): it escapes <, > and & (HTML) and
# U+2028 / U+2029, spells backspace and form feed \u0008 / \u000c (Go 1.22 and newer write \b / \f), and writes
# every other non-ASCII character as UTF-8. A lone surrogate (no UTF-8) stays escaped, as json.dumps escaped it.
_GO_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029",
               "\\b": "\\u0008", "\\f": "\\u000c"}
# A doubled backslash is matched (and kept) as a whole, so that the "b" of an escaped backslash followed by a "b"
# is never read as \b. Outside strings, JSON has none of these characters.
_GO_DIFFERENCES = re.compile(r'\\[\\bf]|[<>&\u2028\u2029\ud800-\udfff]')


def go_json(body):
    """``body`` as JSON bytes spelled as the API server spells the stored object.

    kube-apiserver applies a JSON patch with evanphx/json-patch v4 (v4.9.0 in Kubernetes 1.20; v4.12.0 later, as
    gopkg.in/evanphx/json-patch.v4), whose ``test`` of a string compares the compacted bytes of the patch's value with
    those of the object, which encoding/json wrote (patch.go ``lazyNode.equal``: ``bytes.Equal(n.compact(),
    o.compact())``, at tags v4.9.0 and v4.12.0). A string that json.dumps spells otherwise (``<``, ``>``, ``&``,
    non-ASCII) would fail its test although its value is the same."""
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    return _GO_DIFFERENCES.sub(_go_escape, text).encode("utf-8")


def _go_escape(match):
    found = match.group(0)
    if len(found) == 1 and "\ud800" <= found <= "\udfff":
        return f"\\u{ord(found):04x}"
    return _GO_ESCAPES.get(found, found)


class Response(object):
    """Status, headers and either the parsed JSON body (``data``) or the open stream (``raw``)."""

    def __init__(self, status, headers, data=None, raw=None):
        self.status = status
        self.headers = headers
        self.data = data
        self.raw = raw


def _decode(payload):
    if not payload:
        return {}
    try:
        return json.loads(payload)
    except ValueError:
        return payload.decode("utf-8", "replace") if isinstance(payload, bytes) else payload


class Connection(object):
    """Sends single HTTP requests (no retries) to one API server."""

    def __init__(self, params, module_name="capi.rollout"):
        if URLLIB3_IMPORT_ERROR:
            raise ImportError(URLLIB3_IMPORT_ERROR)
        self.configuration = build_configuration(params)
        self.host = self.configuration.host
        self.pool = _pool(self.configuration)
        # said with a 401 (client/errors.api_error): the kubeconfig's user may be another cluster's
        self.credentials_note = getattr(self.configuration, "credentials_note", None)
        self.user = params.get("impersonate_user")
        self._base_headers = [("Accept", "application/json"), ("User-Agent", f"{USER_AGENT} ({module_name})")]
        if params.get("impersonate_user"):
            self._base_headers.append(("Impersonate-User", params["impersonate_user"]))
        for group in params.get("impersonate_groups") or []:
            # One header per group: the API server reads repeated Impersonate-Group headers.
            self._base_headers.append(("Impersonate-Group", group))

    def close(self):
        """Drops the pooled connections and the temp files of a kubeconfig's *-data credentials."""
        self.pool.clear()
        if isinstance(self.configuration, kc.Configuration):
            self.configuration.close()

    def _headers(self, content_type=None):
        headers = HTTPHeaderDict()
        for key, value in self._base_headers:
            headers.add(key, value)
        auth = _auth_header(self.configuration)
        if auth:
            headers["Authorization"] = auth
        if content_type:
            headers["Content-Type"] = content_type
        return headers

    def url(self, path, query=None):
        pairs = [(key, value) for key, value in (query or {}).items() if value is not None]
        return self.host + path + (("?" + urlencode(pairs)) if pairs else "")

    def send(self, method, path, query=None, body=None, content_type=None, stream=False, timeout=None, total=None):
        """One request. ``stream=True`` returns the open response in ``raw`` (for watches).

        ``timeout`` is (connect, read) seconds. ``total`` (seconds, or None) bounds the whole request: the connection,
        the TLS handshake, the answer and every read of its body or stream (a read timeout alone restarts at each
        read). Raises TransportError when no answer arrives.
        """
        payload = None
        if body is not None:
            payload = go_json(body)
            content_type = content_type or "application/json"
        connect, read = timeout or (10.0, 60.0)
        ends = None if total is None else time.monotonic() + total
        try:
            resp = self.pool.request(
                method, self.url(path, query), body=payload, headers=self._headers(content_type if payload else None),
                retries=False, preload_content=False, timeout=urllib3.Timeout(connect=connect, read=read, total=total))
        except urllib3.exceptions.HTTPError as err:
            raise TransportError(self.host, _cause_text(err), tls=is_tls_failure(err), sent=not _not_connected(err))
        except (OSError, ValueError) as err:
            raise TransportError(self.host, str(err), tls=is_tls_failure(err), sent=not _not_connected(err))
        cutoff = None if ends is None else Cutoff(resp, ends)
        if stream and resp.status < 300:
            return Response(resp.status, resp.headers, raw=resp if cutoff is None else BoundedStream(resp, cutoff, self.host))
        try:
            data = resp.read()
        except urllib3.exceptions.HTTPError as err:
            raise TransportError(self.host, _cause_text(err), tls=is_tls_failure(err))
        finally:
            if cutoff is not None:
                cutoff.cancel()
            resp.release_conn()
        if cutoff is not None and cutoff.fired:
            raise TransportError(self.host, "the answer did not come whole in the time the request had")
        return Response(resp.status, resp.headers, data=_decode(data))


class Cutoff(object):
    """Shuts the connection of an open response down at ``ends`` (monotonic seconds), so that a read blocked on it
    ends then: urllib3's read timeout starts again at every read, so a server that sends a little now and then (or
    an open watch stream that stops) would outlast it."""

    def __init__(self, resp, ends):
        self.resp = resp
        self.fired = False
        self._timer = threading.Timer(max(ends - time.monotonic(), 0.0), self._fire)
        self._timer.daemon = True
        self._timer.start()

    def _fire(self):
        self.fired = True
        try:
            self.resp.shutdown()  # urllib3 >= 2.3, also when the server said it closes the connection
        except (AttributeError, ValueError, RuntimeError, OSError):
            sock = getattr(getattr(self.resp, "connection", None), "sock", None)
            try:
                if sock is not None:
                    sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # closed meanwhile: nothing to cut

    def cancel(self):
        self._timer.cancel()


class BoundedStream(object):
    """An open streamed response (a watch) that ends, at the latest, when its Cutoff fires."""

    def __init__(self, resp, cutoff, host):
        self.resp = resp
        self.cutoff = cutoff
        self.host = host

    def stream(self, amt, decode_content=True):
        try:
            yield from self.resp.stream(amt, decode_content=decode_content)
        except urllib3.exceptions.HTTPError:
            if not self.cutoff.fired:
                raise
        if self.cutoff.fired:
            raise TransportError(self.host, "the stream was cut at the end of the time the request had")

    def close(self):
        self.cutoff.cancel()
        self.resp.close()

    def release_conn(self):
        self.cutoff.cancel()
        self.resp.release_conn()


def _not_connected(err):
    """Whether the error came before a connection was open (refused, connect timeout): nothing was sent."""
    connect_errors = (urllib3.exceptions.NewConnectionError, urllib3.exceptions.ConnectTimeoutError, ConnectionRefusedError)
    seen = 0
    while isinstance(err, BaseException) and seen < 10:
        if isinstance(err, connect_errors):
            return True
        reason = getattr(err, "reason", None)  # urllib3 wraps the cause here; ssl errors keep a text here
        err = reason if isinstance(reason, BaseException) else (err.__cause__ or err.__context__)
        seen += 1
    return False


def _cause_text(err):
    """The innermost useful message of a urllib3 error (drops the pool/URL boilerplate)."""
    inner = getattr(err, "reason", None)
    if inner is None and err.args and isinstance(err.args[0], BaseException):
        inner = err.args[0]
    if isinstance(inner, OSError) and getattr(inner, "strerror", None) and not isinstance(inner, type(err)):
        if not inner.errno or "SSL" in type(inner).__name__:
            return inner.strerror
        return f"[Errno {inner.errno}] {inner.strerror}"
    text = str(inner if inner is not None else err)
    if isinstance(inner, BaseException) and len(getattr(inner, "args", ())) == 2 and isinstance(inner.args[1], str):
        text = inner.args[1]  # ssl errors: (code, message)
    marker = "Failed to establish a new connection: "
    if marker in text:
        text = text.split(marker, 1)[-1]
    return text or type(err).__name__


def path_quote(value):
    return quote(str(value), safe="")
