# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The actor of history entries, read from the credential without a request."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import base64
import json

from ansible_collections.capi.rollout.plugins.module_utils.client import identity

# openssl req -x509 -subj "/O=system:masters/CN=alice@example.com" (EC P-256, valid until 2126)
CERT = b"""-----BEGIN CERTIFICATE-----
MIIBwTCCAWegAwIBAgIUB68wBHTZKfbDA/sR+RRGMTiety4wCgYIKoZIzj0EAwIw
NTEXMBUGA1UECgwOc3lzdGVtOm1hc3RlcnMxGjAYBgNVBAMMEWFsaWNlQGV4YW1w
bGUuY29tMCAXDTI2MTEzMDA2MjAxMVoYDzIxMjYxMTA2MDYyMDExWjA1MRcwFQYD
VQQKDA5zeXN0ZW06bWFzdGVyczEaMBgGA1UEAwwRYWxpY2VAZXhhbXBsZS5jb20w
WTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAASxKRpKyER/oEVJPmWV5GwHB38xBQIx
7zKVJghn6dlTWBcp5xdbVhiXYj+sagdY5upHLP/8sqjWxiPeTlZFjDSBo1MwUTAd
BgNVHQ4EFgQUb08pVfn8LJPeU/AqWgVVq6ZX2MQwHwYDVR0jBBgwFoAUb08pVfn8
LJPeU/AqWgVVq6ZX2MQwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNIADBF
AiEAtrATWkPeQ2EW5WcZ2d0uDsmyGT9dLLKq/mAdobjDZrUCIHvb4XkBLU5/O2UD
1q9IZ/SCOO6+dsyOamdx42UL8Pk3
-----END CERTIFICATE-----
"""


def _jwt(claims):
    def part(value):
        return base64.urlsafe_b64encode(json.dumps(value).encode("utf-8")).decode("ascii").rstrip("=")
    return ".".join([part({"alg": "RS256"}), part(claims), "c2lnbmF0dXJl"])


class Config(object):
    def __init__(self, cert_file=None, token=None, username=None):
        self.cert_file = cert_file
        self.token = token
        self.username = username

    def auth_settings(self):
        if self.token:
            return {"BearerToken": {"value": "Bearer " + self.token}}
        return {}


class Conn(object):
    def __init__(self, user=None, configuration=None):
        self.user = user
        self.configuration = configuration


def test_certificate_common_name_from_pem_and_der():
    assert identity.certificate_common_name(CERT) == "alice@example.com"
    der = base64.b64decode(b"".join(CERT.split(b"\n")[1:-2]))
    assert identity.certificate_common_name(der) == "alice@example.com"
    assert identity.certificate_common_name(b"not a certificate") is None
    assert identity.certificate_common_name(b"") is None


def test_service_account_tokens_name_their_user_other_tokens_do_not():
    bound = _jwt({"iss": "https://kubernetes.default.svc", "sub": "system:serviceaccount:ops:rollout",
                  "kubernetes.io": {"namespace": "ops"}})
    legacy = _jwt({"iss": "kubernetes/serviceaccount", "sub": "system:serviceaccount:ops:old",
                   "kubernetes.io/serviceaccount/namespace": "ops",
                   "kubernetes.io/serviceaccount/service-account.name": "old"})
    oidc = _jwt({"iss": "https://dex.example.com", "sub": "system:serviceaccount:ops:fake", "email": "a@b"})
    assert identity.service_account_user(bound) == "system:serviceaccount:ops:rollout"
    assert identity.service_account_user(legacy) == "system:serviceaccount:ops:old"
    assert identity.service_account_user(oidc) is None
    assert identity.service_account_user("static-token") is None
    assert identity.service_account_user("a.!!!.c") is None
    assert identity.service_account_user(None) is None


def test_credential_user_order(tmp_path):
    cert = tmp_path / "client.crt"
    cert.write_bytes(CERT)
    sa = _jwt({"sub": "system:serviceaccount:ops:rollout", "kubernetes.io": {}})
    assert identity.credential_user(Conn(user="bob", configuration=Config(cert_file=str(cert)))) == "bob"
    assert identity.credential_user(Conn(configuration=Config(cert_file=str(cert), token=sa))) == "alice@example.com"
    assert identity.credential_user(Conn(configuration=Config(token=sa))) == "system:serviceaccount:ops:rollout"
    assert identity.credential_user(Conn(configuration=Config(token="opaque", username="carol"))) == "carol"
    assert identity.credential_user(Conn(configuration=Config(cert_file=str(tmp_path / "gone")))) is None
    assert identity.credential_user(object()) is None


def test_actor_falls_back_to_the_awx_job_then_user_at_host():
    conn = Conn(configuration=Config(token="opaque"))
    assert identity.actor_for(conn, {"JOB_ID": "4711", "AWX_HOST": "awx.example.com"}) == "awx-job/4711 (awx.example.com)"
    assert identity.actor_for(conn, {"USER": "dave"}).startswith("dave@")
    assert identity.actor_for(Conn(user="bob"), {"JOB_ID": "1"}) == "bob"
