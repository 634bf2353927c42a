# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who makes a change, for the history record (``actor``), without asking the API server.

``SelfSubjectReview`` (authentication.k8s.io/v1) would tell the authenticated user, but only
Kubernetes 1.28+ serves it and it costs a request. The user is instead read from the credential
when the credential itself says who it is:

- ``impersonate_user`` - the user the server acts as;
- a client certificate - Kubernetes takes the user name from the subject common name (CN);
- a Kubernetes service account token (a JWT issued by the API server) - its ``sub`` claim
  (``system:serviceaccount:<namespace>:<name>``); other tokens (static, OIDC) are opaque here;
- a basic-auth user name in the kubeconfig.

Otherwise ``core.history.actor_from`` falls back to the AWX/AAP job id or ``user@host``.
Nothing here fails: an unreadable credential just means "not known".
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import base64
import binascii
import json
import os
import re
import socket

from ansible_collections.capi.rollout.plugins.module_utils.core import history as hist

_CN_OID = b"\x55\x04\x03"  # 2.5.4.3 commonName
_PEM = re.compile(rb"-----BEGIN CERTIFICATE-----(.+?)-----END CERTIFICATE-----", re.S)
_SA_PREFIX = "system:serviceaccount:"


def _tlv(data, pos):
    """(tag, content start, content end) of the DER element at ``pos``."""
    tag = data[pos]
    length = data[pos + 1]
    pos += 2
    if length & 0x80:
        count = length & 0x7F
        if not 0 < count <= 4:
            raise ValueError("unsupported DER length")
        length = int.from_bytes(data[pos:pos + count], "big")
        pos += count
    if pos + length > len(data):
        raise ValueError("truncated DER")
    return tag, pos, pos + length


def _children(data, start, end):
    out = []
    pos = start
    while pos < end:
        tag, content_start, content_end = _tlv(data, pos)
        out.append((tag, content_start, content_end))
        pos = content_end
    return out


def certificate_common_name(data):
    """Subject CN of the first certificate in PEM or DER ``data`` (bytes); None when not found."""
    try:
        match = _PEM.search(data)
        der = base64.b64decode(b"".join(match.group(1).split())) if match else data
        _tag, start, end = _tlv(der, 0)
        tbs = _children(der, start, end)[0]
        fields = _children(der, tbs[1], tbs[2])
        if fields and fields[0][0] == 0xA0:  # [0] version
            fields = fields[1:]
        subject = fields[4]  # serialNumber, signature, issuer, validity, subject
        for rdn in _children(der, subject[1], subject[2]):
            for attribute in _children(der, rdn[1], rdn[2]):
                parts = _children(der, attribute[1], attribute[2])
                if len(parts) >= 2 and der[parts[0][1]:parts[0][2]] == _CN_OID:
                    return der[parts[1][1]:parts[1][2]].decode("utf-8", "replace") or None
    except (ValueError, IndexError, TypeError, binascii.Error):
        return None
    return None


def service_account_user(token):
    """``system:serviceaccount:<ns>:<name>`` from a Kubernetes service account JWT; None for any other
    token. The signature is not checked: this only labels the record, the server authenticates."""
    parts = str(token or "").split(".")
    if len(parts) != 3:
        return None
    try:
        payload = parts[1] + "=" * (-len(parts[1]) % 4)
        claims = json.loads(base64.urlsafe_b64decode(payload.encode("ascii")).decode("utf-8"))
    except (ValueError, TypeError, binascii.Error, UnicodeError):
        return None
    if not isinstance(claims, dict):
        return None
    sub = claims.get("sub")
    issued_by_kubernetes = "kubernetes.io" in claims or claims.get("iss") == "kubernetes/serviceaccount"
    if isinstance(sub, str) and sub.startswith(_SA_PREFIX) and issued_by_kubernetes:
        return sub
    namespace = claims.get("kubernetes.io/serviceaccount/namespace")
    name = claims.get("kubernetes.io/serviceaccount/service-account.name")
    if claims.get("iss") == "kubernetes/serviceaccount" and namespace and name:
        return f"{_SA_PREFIX}{namespace}:{name}"
    return None


def _bearer_token(configuration):
    # A token refresh hook (exec plugin, OIDC) may fail here; the user is then unknown, and the
    # request that follows reports the credential problem.
    try:
        settings = configuration.auth_settings() or {}
    except Exception:  # pylint: disable=broad-except
        return None
    value = (settings.get("BearerToken") or {}).get("value") or ""
    return value[7:] if value.lower().startswith("bearer ") else None


def credential_user(connection):
    """The Kubernetes user name the connection's credential names, or None."""
    user = getattr(connection, "user", None)
    if user:
        return user
    configuration = getattr(connection, "configuration", None)
    if configuration is None:
        return None
    cert_file = getattr(configuration, "cert_file", None)
    if cert_file:
        try:
            with open(cert_file, "rb") as handle:
                name = certificate_common_name(handle.read())
        except (IOError, OSError):
            name = None
        if name:
            return name
    name = service_account_user(_bearer_token(configuration))
    if name:
        return name
    return getattr(configuration, "username", None) or None


def actor_for(connection, environ=None):
    """The ``actor`` of history entries for changes made through ``connection``."""
    try:
        hostname = socket.gethostname()
    except OSError:
        hostname = None
    return hist.actor_from(credential_user(connection), os.environ if environ is None else environ, hostname)
