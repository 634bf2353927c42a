"""A small Kubernetes REST client over urllib3 (interface fixed in docs/dev/CONTRACTS.md).

Not the kubernetes package on purpose: the simulator, the fleet loader and the tests need one
HTTP request per call (no hidden retries, no discovery, no client-side caches), so that what the
audit log counts is exactly what the caller did. TLS is always verified.
"""

import atexit
import base64
import json
import os
import shutil
import tempfile
from urllib.parse import quote, urlencode

import urllib3
import yaml

# Files written for kubeconfig *-data entries (urllib3 wants client certificates as files).
_DATA_DIR = []


class ApiError(Exception):
    """A non-2xx answer (or a watch ERROR event); body is the parsed Status when there is one."""

    def __init__(self, status, reason, body, message=None):
        self.status = status
        self.reason = reason
        self.body = body
        if message is None:
            message = body.get("message", "") if isinstance(body, dict) else str(body)
        self.message = message or reason
        super().__init__(f"{status} {reason}: {self.message}")


def resource_path(group, version, plural, namespace=None, name=None, subresource=None):
    """The REST path of a collection or an object: group "" is the core API under /api."""
    path = f"/api/{version}" if not group else f"/apis/{group}/{version}"
    if namespace:
        path += f"/namespaces/{quote(namespace, safe='')}"
    path += f"/{plural}"
    if name:
        path += f"/{quote(name, safe='')}"
        if subresource:
            path += f"/{subresource}"
    return path


def _data_file(b64data, suffix):
    """Write a kubeconfig *-data value to a private file removed at interpreter exit."""
    if not _DATA_DIR:
        _DATA_DIR.append(tempfile.mkdtemp(prefix="capisim-kubeapi-"))
        atexit.register(shutil.rmtree, _DATA_DIR[0], True)
    fd, path = tempfile.mkstemp(suffix=suffix, dir=_DATA_DIR[0])
    with os.fdopen(fd, "wb") as handle:
        handle.write(base64.b64decode(b64data))
    return path


def _named(entries, name, what, path):
    for entry in entries or []:
        if entry.get("name") == name:
            return entry.get(what) or {}
    raise ValueError(f"{path}: no {what} named {name!r}")


class KubeAPI:
    """Bearer-token or client-certificate access to one API server, TLS verified against ca_file."""

    def __init__(self, server, token=None, ca_file=None, client_cert=None, client_key=None, user_agent="capisim"):
        self.server = server.rstrip("/")
        self.user_agent = user_agent
        self._headers = {"Accept": "application/json", "User-Agent": user_agent}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        # retries=False: a failed request surfaces instead of being silently repeated.
        self._http = urllib3.PoolManager(cert_reqs="CERT_REQUIRED", ca_certs=ca_file, cert_file=client_cert,
                                         key_file=client_key, retries=False,
                                         timeout=urllib3.Timeout(connect=5.0, read=30.0))

    def __repr__(self):
        return f"KubeAPI({self.server!r}, user_agent={self.user_agent!r})"

    @classmethod
    def from_kubeconfig(cls, path, context=None):
        """Build a client from a kubeconfig file (token, tokenFile or client certificate users)."""
        with open(path, encoding="utf-8") as handle:
            config = yaml.safe_load(handle)
        base = os.path.dirname(os.path.abspath(path))
        context = context or config.get("current-context")
        ctx = _named(config.get("contexts"), context, "context", path)
        cluster = _named(config.get("clusters"), ctx.get("cluster"), "cluster", path)
        user = _named(config.get("users"), ctx.get("user"), "user", path) if ctx.get("user") else {}
        if cluster.get("insecure-skip-tls-verify"):
            raise ValueError(f"{path}: insecure-skip-tls-verify is not supported; give the cluster's CA")

        def file_or_data(key, suffix):
            if user.get(key) or cluster.get(key):
                return os.path.join(base, user.get(key) or cluster.get(key))
            data = user.get(f"{key}-data") or cluster.get(f"{key}-data")
            return _data_file(data, suffix) if data else None

        token = user.get("token")
        if not token and user.get("tokenFile"):
            with open(os.path.join(base, user["tokenFile"]), encoding="utf-8") as handle:
                token = handle.read().strip()
        return cls(cluster["server"], token=token, ca_file=file_or_data("certificate-authority", ".crt"),
                   client_cert=file_or_data("client-certificate", ".crt"), client_key=file_or_data("client-key", ".key"))

    def _url(self, path, params):
        query = {k: v for k, v in (params or {}).items() if v is not None}
        return self.server + path + (f"?{urlencode(query)}" if query else "")

    @staticmethod
    def _raise_for(resp, data):
        try:
            body = json.loads(data)
        except ValueError:
            body = data.decode("utf-8", "replace")
        reason = body.get("reason", "") if isinstance(body, dict) else ""
        raise ApiError(resp.status, reason or resp.reason or "", body)

    def request(self, method, path, body=None, params=None, content_type="application/json"):
        """One HTTP request; returns the parsed JSON answer ({} when empty; the text of a non-JSON answer
        such as /readyz), raises ApiError on >= 400."""
        headers = dict(self._headers)
        payload = None
        if body is not None:
            headers["Content-Type"] = content_type
            payload = json.dumps(body).encode("utf-8")
        resp = self._http.request(method, self._url(path, params), body=payload, headers=headers)
        if resp.status >= 400:
            self._raise_for(resp, resp.data)
        if not resp.data:
            return {}
        if "json" not in resp.headers.get("Content-Type", ""):
            return resp.data.decode("utf-8", "replace")
        return json.loads(resp.data)

    def get(self, path):
        return self.request("GET", path)

    def list(self, path, label_selector=None, field_selector=None):
        return self.request("GET", path, params={"labelSelector": label_selector, "fieldSelector": field_selector})

    def create(self, path, obj):
        return self.request("POST", path, obj)

    def replace(self, path, obj):
        return self.request("PUT", path, obj)

    def replace_status(self, path, obj):
        return self.request("PUT", path.rstrip("/") + "/status", obj)

    def patch_merge(self, path, patch):
        return self.request("PATCH", path, patch, content_type="application/merge-patch+json")

    def apply(self, path, obj, field_manager, force=False):
        """Server-side apply of ``obj`` (JSON is YAML) as ``field_manager``; force takes over conflicting fields."""
        params = {"fieldManager": field_manager, "force": "true" if force else None}
        return self.request("PATCH", path, obj, params=params, content_type="application/apply-patch+yaml")

    def patch_json(self, path, ops):
        return self.request("PATCH", path, ops, content_type="application/json-patch+json")

    def delete(self, path, propagation="Background"):
        """Delete an object; None when it was already gone (404)."""
        try:
            return self.request("DELETE", path, {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": propagation})
        except ApiError as err:
            if err.status == 404:
                return None
            raise

    def watch(self, path, resource_version, timeout_seconds=60, label_selector=None):
        """Yield (type, object) from a watch on a collection; ApiError(410) when resource_version expired."""
        params = {"watch": "1", "resourceVersion": resource_version, "allowWatchBookmarks": "true",
                  "timeoutSeconds": str(int(timeout_seconds)), "labelSelector": label_selector}
        # The read timeout outlasts the server-side timeout so that the server ends the stream.
        resp = self._http.request("GET", self._url(path, params), headers=self._headers, preload_content=False,
                                  timeout=urllib3.Timeout(connect=5.0, read=timeout_seconds + 30.0))
        finished = False
        try:
            if resp.status >= 400:
                self._raise_for(resp, resp.read())
            pending = b""
            for chunk in resp.stream(65536):
                pending += chunk
                while b"\n" in pending:
                    line, pending = pending.split(b"\n", 1)
                    if not line.strip():
                        continue
                    event = json.loads(line)
                    obj = event.get("object") or {}
                    if event.get("type") == "ERROR":
                        raise ApiError(obj.get("code", 500), obj.get("reason", ""), obj)
                    yield event.get("type"), obj
            finished = True
        finally:
            if not finished:
                # Abandoned mid-stream: the connection still carries unread data, so close it.
                resp.close()
            resp.release_conn()
