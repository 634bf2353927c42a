# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.flows import args
from ansible_collections.capi.rollout.plugins.module_utils.client import connection

pytest.importorskip("kubernetes")

KUBECONFIG = {
    "apiVersion": "v1", "kind": "Config", "current-context": "a",
    "clusters": [{"name": "a", "cluster": {"server": "https://a.example:6443"}},
                 {"name": "b", "cluster": {"server": "https://b.example:6443", "insecure-skip-tls-verify": True}}],
    "users": [{"name": "a", "user": {"token": "tok-a"}}, {"name": "b", "user": {"token": "tok-b"}}],
    "contexts": [{"name": "a", "context": {"cluster": "a", "user": "a"}},
                 {"name": "b", "context": {"cluster": "b", "user": "b"}}],
}


def params(**kw):
    out = {key: None for key in args.AUTH_ARG_SPEC}
    out["validate_certs"] = True
    out.update(kw)
    return out


def test_kubeconfig_dict_and_context():
    cfg = connection.build_configuration(params(kubeconfig=KUBECONFIG))
    assert cfg.host == "https://a.example:6443"
    assert connection._auth_header(cfg) == "Bearer tok-a"
    cfg = connection.build_configuration(params(kubeconfig=KUBECONFIG, context="b"))
    assert cfg.host == "https://b.example:6443" and connection._auth_header(cfg) == "Bearer tok-b"
    # validate_certs (default true) wins over insecure-skip-tls-verify
    assert cfg.verify_ssl is True
    assert connection.build_configuration(params(kubeconfig=KUBECONFIG, context="b", validate_certs=False)).verify_ssl is False


def test_explicit_host_and_api_key_override(tmp_path):
    cfg = connection.build_configuration(params(host="https://h:6443/", api_key="secret", ca_cert="/ca.crt",
                                                proxy="http://proxy:3128"))
    assert cfg.host == "https://h:6443"
    assert connection._auth_header(cfg) == "Bearer secret"
    assert cfg.ssl_ca_cert == "/ca.crt" and cfg.proxy == "http://proxy:3128"
    assert cfg.retries is False
    cfg = connection.build_configuration(params(kubeconfig=KUBECONFIG, api_key="other"))
    assert connection._auth_header(cfg) == "Bearer other"


def test_kubeconfig_file_errors(tmp_path):
    with pytest.raises(connection.ConnectionConfigError) as err:
        connection.build_configuration(params(kubeconfig=str(tmp_path / "missing")))
    assert "does not exist" in str(err.value)
    path = tmp_path / "config"
    path.write_text("apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\ncurrent-context: x\n")
    with pytest.raises(connection.ConnectionConfigError) as err:
        connection.build_configuration(params(kubeconfig=str(path), context="nope"))
    assert "context nope" in str(err.value)


def test_secret_values_of_kubeconfig_dict():
    assert connection.secret_values(KUBECONFIG) == {"tok-a", "tok-b"}


def test_impersonation_headers_repeat_groups():
    conn = connection.Connection(params(host="https://h:6443", api_key="t", impersonate_user="alice",
                                        impersonate_groups=["g1", "g2"]))
    headers = conn._headers("application/json")
    assert headers["Impersonate-User"] == "alice"
    assert headers.getlist("Impersonate-Group") == ["g1", "g2"]
    assert headers["Authorization"] == "Bearer t"
    assert headers["User-Agent"].startswith("capi.rollout")


def test_env_fallbacks_declared():
    spec = args.AUTH_ARG_SPEC
    assert spec["api_key"]["no_log"] is True
    assert spec["validate_certs"]["aliases"] == ["verify_ssl"] and spec["validate_certs"]["default"] is True
    assert spec["validate_certs"]["fallback"][1] == ["K8S_AUTH_VALIDATE_CERTS", "K8S_AUTH_VERIFY_SSL"]
    assert spec["ca_cert"]["fallback"][1] == ["K8S_AUTH_CA_CERT", "K8S_AUTH_SSL_CA_CERT"]
    assert spec["client_cert"]["aliases"] == ["cert_file"] and spec["client_key"]["aliases"] == ["key_file"]
    for option in ("kubeconfig", "context", "host", "proxy", "impersonate_user", "impersonate_groups"):
        assert spec[option]["fallback"][1] == [f"K8S_AUTH_{option.upper()}"]
