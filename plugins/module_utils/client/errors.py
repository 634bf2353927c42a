# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Turn what the API server (or the network) said into a RolloutError that names the object and the
next step: 401/403 (which verb on which resource is missing), 404, TLS, unreachable server, ...
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.core import patch as patches
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError

# The reasons of client.discovery's errors that say a kind's group/version is not served: no object of it can exist.
NOT_SERVED = ("api_not_served", "kind_not_served", "api_version_unsupported")

RBAC_HINT = "grant the ClusterRole in docs/rbac.yml of the capi.rollout collection to this user"


class ApiError(Exception):
    """A non-2xx answer. ``body`` is the parsed Status object when the server sent one."""

    def __init__(self, status, body=None, method=None, path=None, headers=None, credentials_note=None):
        self.status = status
        self.credentials_note = credentials_note  # 401: what in the kubeconfig may explain it (client/kubeconfig)
        self.body = body if body is not None else {}
        self.method = method
        self.path = path
        self.headers = headers or {}
        if isinstance(self.body, dict):
            self.reason = self.body.get("reason") or ""
            self.message = self.body.get("message") or self.reason or f"HTTP {status}"
        else:
            self.reason = ""
            self.message = str(self.body).strip()[:300] or f"HTTP {status}"
        super(ApiError, self).__init__(f"{method} {path}: {status} {self.message}")


class TransportError(Exception):
    """No HTTP answer at all: connection refused, DNS, timeout, TLS handshake failure."""

    def __init__(self, host, cause, tls=False, sent=True):
        self.host = host
        self.cause = cause
        self.tls = tls
        # False when no connection could be opened: the request never left this host (safe to send again)
        self.sent = sent
        super(TransportError, self).__init__(f"{host}: {cause}")


class OutOfTime(TransportError):
    """No answer before the deadline of a waiting task (client.requests.Api.end_by): the API server hangs, is too slow
    or cannot be reached."""


def is_tls_failure(exc):
    """Whether a transport exception is a TLS/certificate problem (walks the cause chain)."""
    seen = 0
    while exc is not None and seen < 10:
        name = type(exc).__name__
        text = str(exc)
        if name in ("SSLError", "SSLCertVerificationError", "CertificateError") or "CERTIFICATE_VERIFY_FAILED" in text \
                or "certificate verify failed" in text:
            return True
        exc = getattr(exc, "reason", None) or exc.__cause__ or exc.__context__
        seen += 1
    return False


def transport_error(err, what=None):
    """RolloutError for a TransportError, with ``what`` (an object ref) when known."""
    if err.tls:
        return RolloutError(
            f"TLS verification of {err.host} failed: {err.cause}",
            ref=what, reason="tls",
            hint="give the cluster's CA certificate with ca_cert (or K8S_AUTH_SSL_CA_CERT), or fix the kubeconfig's "
                 "certificate-authority; validate_certs: false only for throw-away test clusters")
    if isinstance(err, OutOfTime):
        hint = ("check that the API server answers (a hung kube-apiserver or etcd, or a load balancer that accepts "
                "connections without a server behind it), host/kubeconfig/context and the network path, then re-run the task")
    else:
        hint = "check host/kubeconfig/context (is this the management cluster?), the network path and proxy"
    return RolloutError(f"cannot reach the API server {err.host}: {err.cause}", ref=what, reason="unreachable", hint=hint)


def _resource_words(resource):
    """``machinedeployments`` in API group ``cluster.x-k8s.io`` (from {'plural','group'})."""
    if not resource:
        return "the resource"
    group = resource.get("group")
    words = f"{resource.get('plural')}"
    if group:
        words += f" in API group {group}"
    else:
        words += " in the core API group"
    return words


def api_error(err, ref=None, verb=None, resource=None, namespace=None, host=None):
    """RolloutError for an ApiError raised while doing ``verb`` on ``resource`` ({'plural','group'})."""
    verb = verb or (err.method or "").lower()
    where = f" in namespace {namespace}" if namespace else ""
    if err.status == 401:
        return RolloutError(
            f"the API server {host or ''} rejected the credentials (401 Unauthorized)".replace("  ", " "),
            ref=ref, reason="unauthorized",
            hint=err.credentials_note or "check api_key/the kubeconfig user (token expired? wrong context?)")
    if err.status == 403:
        return RolloutError(
            f"permission denied: cannot {verb} {_resource_words(resource)}{where} (403 Forbidden: {err.message})",
            ref=ref, reason="forbidden",
            hint=f"{RBAC_HINT}; it needs the verb {verb!r} on {resource.get('plural') if resource else 'this resource'}")
    if err.status == 404:
        return RolloutError(f"not found ({err.message})", ref=ref, reason="not_found",
                            hint="check kind, name and namespace")
    if err.status == 409:
        return RolloutError(
            f"the object kept changing while it was being updated (409 Conflict: {err.message})",
            ref=ref, reason="conflict", hint="run the task again; another controller or user is writing the object")
    if patches.is_test_failure(err.status, err.body):
        return RolloutError(
            f"the fields the change was planned from kept changing while it was being written (422, a failed "
            f"JSON patch test: {_cause(err)})", ref=ref, reason="conflict",
            hint="run the task again; another controller or user is changing the object's template, trigger, "
                 "pause state or rollout records")
    if err.status == 422:
        return RolloutError(f"the API server refused the change (422 Invalid: {err.message})", ref=ref,
                            reason="invalid", hint="check the values given to the module (and the CAPI webhooks)")
    if err.status == 429 or err.status >= 500:
        return RolloutError(f"the API server failed to answer {verb} {_resource_words(resource)} "
                            f"({err.status}: {err.message})", ref=ref, reason="server_error",
                            hint="the request was retried with backoff; check the API server's health and retry later")
    return RolloutError(f"{verb} {_resource_words(resource)} failed ({err.status}: {err.message})", ref=ref,
                        reason="api_error", hint="see the message from the API server")


def _cause(err):
    """The first cause's message of a Status (where the API server puts the JSON patch error), else its message."""
    causes = (err.body.get("details") or {}).get("causes") if isinstance(err.body, dict) else None
    for cause in causes or []:
        if isinstance(cause, dict) and cause.get("message"):
            return cause["message"]
    return err.message
