# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import base64
import datetime
import http.server
import ipaddress
import json
import os
import ssl
import stat
import subprocess
import sys
import threading
import types

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.flows import args
from ansible_collections.capi.rollout.plugins.module_utils.client import connection, errors, identity, kubeconfig

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
    ca_cert = tmp_path / "ca.crt"
    ca_cert.write_text("PEM", encoding="ascii")
    cfg = connection.build_configuration(params(host="https://h:6443/", api_key="secret", ca_cert=str(ca_cert),
                                                proxy="http://proxy:3128"))
    assert cfg.host == "https://h:6443"
    assert connection._auth_header(cfg) == "Bearer secret"
    assert cfg.ssl_ca_cert == str(ca_cert) and cfg.proxy == "http://proxy:3128"
    assert cfg.retries is False
    cfg = connection.build_configuration(params(kubeconfig=KUBECONFIG, api_key="other"))
    assert connection._auth_header(cfg) == "Bearer other"


def test_certificate_files_that_do_not_exist_are_named():
    with pytest.raises(connection.ConnectionConfigError, match=r"^ca_cert /no/ca.crt and client_key /no/c.key: no such file"):
        connection.build_configuration(params(host="https://h:6443/", api_key="secret", ca_cert="/no/ca.crt", client_key="/no/c.key"))


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


# ----- the light path (client/kubeconfig.py) and the kubernetes client fallback -----

def b64(data):
    return base64.b64encode(data if isinstance(data, bytes) else data.encode("utf-8")).decode("ascii")


def one_context(cluster, user, name="c"):
    return {"apiVersion": "v1", "kind": "Config", "current-context": name,
            "clusters": [{"name": name, "cluster": cluster}], "users": [{"name": name, "user": user}],
            "contexts": [{"name": name, "context": {"cluster": name, "user": name}}]}


def write_yaml(path, content):
    path.write_text(json.dumps(content))  # JSON is YAML
    return str(path)


@pytest.fixture
def pki(tmp_path_factory):
    """CA, server certificate (SAN 127.0.0.1 and localhost) and client certificate (CN alice), as PEM."""
    x509 = pytest.importorskip("cryptography.x509")
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)

    def name(common):
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])

    def cert(subject, key, issuer, issuer_key, ca=False, san=None):
        builder = (x509.CertificateBuilder().subject_name(name(subject)).issuer_name(name(issuer)).public_key(key.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
                   .not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if ca:  # Python 3.13 verifies strictly (VERIFY_X509_STRICT): key identifiers and key usage
            builder = builder.add_extension(x509.KeyUsage(
                digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
            builder = builder.add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        else:
            builder = builder.add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()),
                                            critical=False)
        if san:
            builder = builder.add_extension(x509.SubjectAlternativeName(san), critical=False)
        return builder.sign(issuer_key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)

    def key_pem(key):
        return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())

    ca_key, srv_key, cli_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1()), \
        ec.generate_private_key(ec.SECP256R1())
    out = {"ca.crt": cert("test-ca", ca_key, "test-ca", ca_key, ca=True),
           "server.crt": cert("server", srv_key, "test-ca", ca_key,
                              san=[x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]),
           "server.key": key_pem(srv_key),
           "client.crt": cert("alice", cli_key, "test-ca", ca_key), "client.key": key_pem(cli_key)}
    directory = tmp_path_factory.mktemp("pki")
    for filename, data in out.items():
        (directory / filename).write_bytes(data)
    out["dir"] = directory
    return out


class Echo(http.server.BaseHTTPRequestHandler):
    """Answers every GET with the client certificate's CN and the Authorization header."""

    def do_GET(self):  # noqa: N802 - the http.server name
        peer = self.connection.getpeercert() or {}
        subject = dict(pair[0] for pair in peer.get("subject", ()))
        body = json.dumps({"cn": subject.get("commonName"), "auth": self.headers.get("Authorization")}).encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def server(pki):
    """An HTTPS server that asks for a client certificate; its URL."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(pki["dir"] / "server.crt"), str(pki["dir"] / "server.key"))
    context.load_verify_locations(str(pki["dir"] / "ca.crt"))
    context.verify_mode = ssl.CERT_OPTIONAL
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"https://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def get(kubeconfig, **kw):
    conn = connection.Connection(params(kubeconfig=kubeconfig, **kw))
    try:
        return conn.send("GET", "/", timeout=(5.0, 5.0)).data
    finally:
        conn.close()


def test_light_path_tls_with_data_credentials(pki, server):
    config = one_context({"server": server, "certificate-authority-data": b64(pki["ca.crt"])},
                         {"client-certificate-data": b64(pki["client.crt"]), "client-key-data": b64(pki["client.key"]),
                          "token": "tok"})
    assert get(config) == {"cn": "alice", "auth": "Bearer tok"}
    cfg = connection.build_configuration(params(kubeconfig=config))
    assert isinstance(cfg, kubeconfig.Configuration)
    # the CA goes to the ssl module as data; the client certificate and key need files: 0600 in a 0700 directory
    assert cfg.ssl_ca_cert is None and cfg.ca_cert_data == pki["ca.crt"].decode("ascii")
    temp_dir = os.path.dirname(cfg.cert_file)
    assert stat.S_IMODE(os.stat(temp_dir).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(cfg.key_file).st_mode) == 0o600
    assert open(cfg.key_file, "rb").read() == pki["client.key"]
    assert identity.credential_user(types.SimpleNamespace(user=None, configuration=cfg)) == "alice"
    cfg.close()
    assert not os.path.exists(temp_dir)


@pytest.mark.filterwarnings("ignore:Unverified HTTPS request")
def test_light_path_tls_checks(pki, server):
    user = {"token": "tok"}
    ca = b64(pki["ca.crt"])
    assert get(one_context({"server": server, "certificate-authority-data": ca, "tls-server-name": "localhost"}, user))["auth"]
    for cluster, options in (
            ({"server": server, "certificate-authority-data": ca, "tls-server-name": "other.example"}, {}),
            ({"server": server}, {}),  # the system CAs do not know the test CA
            ({"server": server, "insecure-skip-tls-verify": True}, {}),  # validate_certs (default true) wins
    ):
        with pytest.raises(errors.TransportError) as err:
            get(one_context(cluster, user), **options)
        assert err.value.tls, err.value
    insecure = one_context({"server": server, "insecure-skip-tls-verify": True}, user)
    assert get(insecure, validate_certs=None)["auth"] == "Bearer tok"
    assert get(one_context({"server": server}, user), validate_certs=False)["auth"] == "Bearer tok"
    # explicit options override the kubeconfig: ca_cert replaces certificate-authority-data
    wrong_ca = one_context({"server": server, "certificate-authority-data": b64(pki["client.crt"])}, user)
    assert get(wrong_ca, ca_cert=str(pki["dir"] / "ca.crt"))["auth"] == "Bearer tok"


def test_relative_paths_and_merged_files(pki, server, tmp_path, monkeypatch):
    first, second = tmp_path / "first", tmp_path / "second" / "deeper"
    first.mkdir()
    second.mkdir(parents=True)
    (second / "certs").mkdir()
    for filename in ("ca.crt", "client.crt", "client.key"):
        (second / "certs" / filename).write_bytes(pki[filename])
    (first / "token").write_text("from-file\n")
    # first file: the current-context and user "u" (tokenFile relative to first/); no current-context is set
    # by a file before it, and the second file's "u" and current-context lose against the first's.
    one = write_yaml(first / "config", {"current-context": "prod", "users": [{"name": "u", "user": {"tokenFile": "token"}}]})
    two = write_yaml(second / "config", {
        "current-context": "other",
        "clusters": [{"name": "prod", "cluster": {"server": server, "certificate-authority": "certs/ca.crt"}}],
        "contexts": [{"name": "prod", "context": {"cluster": "prod", "user": "u"}},
                     {"name": "other", "context": {"cluster": "prod", "user": "cert"}}],
        "users": [{"name": "u", "user": {"token": "loses"}},
                  {"name": "cert", "user": {"client-certificate": "certs/client.crt", "client-key": "certs/client.key"}}]})
    monkeypatch.chdir(tmp_path)
    assert get(os.pathsep.join([one, two])) == {"cn": None, "auth": "Bearer from-file"}
    assert get(os.pathsep.join([one, two]), context="other") == {"cn": "alice", "auth": None}
    # $KUBECONFIG is the default, merged the same way
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([two, one]))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    assert get(None) == {"cn": "alice", "auth": None}


def test_default_kubeconfig_in_home(tmp_path, monkeypatch):
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(connection.ConnectionConfigError) as err:
        connection.build_configuration(params())
    assert "the default kubeconfig" in str(err.value) and "No configuration found" in str(err.value)
    (tmp_path / ".kube").mkdir()
    write_yaml(tmp_path / ".kube" / "config", KUBECONFIG)
    assert connection.build_configuration(params()).host == "https://a.example:6443"


def test_token_file_and_basic_auth(tmp_path):
    (tmp_path / "tok").write_text("  file-token\n")
    cfg = connection.build_configuration(params(kubeconfig=one_context({"server": "https://h"}, {"tokenFile": str(tmp_path / "tok")})))
    assert connection._auth_header(cfg) == "Bearer file-token"
    # token wins over tokenFile (as kubectl and the kubernetes client)
    cfg = connection.build_configuration(params(kubeconfig=one_context({"server": "https://h"}, {"token": "t", "tokenFile": "/none"})))
    assert connection._auth_header(cfg) == "Bearer t"
    cfg = connection.build_configuration(params(kubeconfig=one_context({"server": "https://h"}, {"username": "carol", "password": "pw"})))
    assert connection._auth_header(cfg) == "Basic " + b64("carol:pw")
    assert identity.credential_user(types.SimpleNamespace(user=None, configuration=cfg)) == "carol"
    with pytest.raises(connection.ConnectionConfigError) as err:
        connection.build_configuration(params(kubeconfig=one_context({"server": "https://h"}, {"tokenFile": str(tmp_path / "gone")})))
    assert "File does not exist" in str(err.value)


def test_context_and_server_errors(tmp_path):
    cases = (
        (dict(KUBECONFIG, **{"current-context": None}), None, "Expected key current-context"),
        (KUBECONFIG, "nope", "context nope"),
        (dict(KUBECONFIG, clusters=[]), "a", "Expected object with name a in clusters list"),
    )
    for config, context, text in cases:
        with pytest.raises(connection.ConnectionConfigError) as err:
            connection.build_configuration(params(kubeconfig=config, context=context))
        assert text in str(err.value)
    no_server = one_context({"certificate-authority-data": "eA=="}, {"token": "t"})
    with pytest.raises(connection.ConnectionConfigError) as err:
        connection.build_configuration(params(kubeconfig=no_server))
    assert "no API server address" in str(err.value)
    (tmp_path / "empty").write_text("")
    with pytest.raises(connection.ConnectionConfigError) as err:
        connection.build_configuration(params(kubeconfig=str(tmp_path / "empty")))
    assert "is empty" in str(err.value)
    with pytest.raises(connection.ConnectionConfigError) as err:
        connection.build_configuration(params(kubeconfig=os.pathsep.join([str(tmp_path / "empty"), str(tmp_path / "gone")])))
    assert str(tmp_path / "gone") + " does not exist" in str(err.value)


def test_proxies(monkeypatch):
    for name in ("https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    cluster = {"server": "https://api.example:6443", "proxy-url": "http://proxy.example:3128"}
    conn = connection.Connection(params(kubeconfig=one_context(cluster, {"token": "t"})))
    assert conn.pool.proxy.host == "proxy.example"
    conn = connection.Connection(params(kubeconfig=one_context({"server": "https://api.example:6443"}, {"token": "t"})))
    assert getattr(conn.pool, "proxy", None) is None
    monkeypatch.setenv("HTTPS_PROXY", "http://env-proxy.example:3128")
    conn = connection.Connection(params(kubeconfig=one_context({"server": "https://api.example:6443"}, {"token": "t"})))
    assert conn.pool.proxy.host == "env-proxy.example"
    for no_proxy in ("example", ".example", "api.example:6443", "*"):
        monkeypatch.setenv("NO_PROXY", no_proxy)
        conn = connection.Connection(params(kubeconfig=one_context(cluster, {"token": "t"})))
        assert getattr(conn.pool, "proxy", None) is None, no_proxy
    monkeypatch.setenv("NO_PROXY", "10.0.0.0/8")
    conn = connection.Connection(params(host="https://10.1.2.3:6443", api_key="t"))
    assert getattr(conn.pool, "proxy", None) is None


def test_fallback_decision(monkeypatch, tmp_path):
    calls = []

    def fake(kubeconfig_, context, reason):
        calls.append((kubeconfig_, context, reason))
        return kubeconfig.Configuration()

    monkeypatch.setattr(connection, "_kubernetes_configuration", fake)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    for key in ("exec", "auth-provider"):
        config = dict(KUBECONFIG, users=[{"name": "a", "user": {key: {"name": "x"}}}])
        with pytest.raises(connection.ConnectionConfigError):  # the fake loads nothing: no server
            connection.build_configuration(params(kubeconfig=config))
        assert calls.pop() == (config, "a", f"the kubeconfig user has {key}")
    # the context chosen by kubectl's rules (first file's current-context) is handed over
    exec_user = write_yaml(tmp_path / "exec", dict(KUBECONFIG, users=[{"name": "b", "user": {"exec": {"command": "x"}}}]))
    other = write_yaml(tmp_path / "other", dict(KUBECONFIG, **{"current-context": "a"}))
    with pytest.raises(connection.ConnectionConfigError):
        connection.build_configuration(params(kubeconfig=os.pathsep.join([exec_user, other]), context="b"))
    assert calls.pop()[1:] == ("b", "the kubeconfig user has exec")
    with pytest.raises(connection.ConnectionConfigError):
        connection.build_configuration(params(kubeconfig={"clusters": "not a list"}))
    assert calls.pop() == ({"clusters": "not a list"}, None, "clusters is not a list")
    # in-cluster: no kubeconfig nor context, the service account environment present
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    with pytest.raises(connection.ConnectionConfigError):
        connection.build_configuration(params())
    assert calls.pop() == (None, None, "the in-cluster service account")
    assert connection.build_configuration(params(kubeconfig=KUBECONFIG)).host == "https://a.example:6443"
    assert not calls


def test_exec_user_loaded_by_kubernetes_client():
    k8s_client = pytest.importorskip("kubernetes.client")
    credential = {"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential",
                  "status": {"token": "exec-token"}}
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": sys.executable,
                     "args": ["-c", f"print({json.dumps(json.dumps(credential))})"]}}
    cfg = connection.build_configuration(params(kubeconfig=one_context({"server": "https://h:6443"}, user)))
    assert isinstance(cfg, k8s_client.Configuration)
    assert connection._auth_header(cfg) == "Bearer exec-token"


LIGHT_SCRIPT = """
import json, sys
sys.modules["kubernetes"] = None  # any import of it fails
from ansible_collections.capi.rollout.plugins.module_utils.client import connection
from ansible_collections.capi.rollout.plugins.module_utils.flows import args
p = {key: None for key in args.AUTH_ARG_SPEC}
p.update(json.loads(sys.argv[1]))
conn = connection.Connection(p)
print(json.dumps(conn.send("GET", "/", timeout=(5.0, 5.0)).data))
"""

FALLBACK_SCRIPT = """
import json, sys
from ansible_collections.capi.rollout.plugins.module_utils.client import connection
from ansible_collections.capi.rollout.plugins.module_utils.flows import args
p = {key: None for key in args.AUTH_ARG_SPEC}
p.update(json.loads(sys.argv[1]))
try:
    connection.Connection(p)
except connection.ConnectionConfigError as err:
    print(err)
print(sys.modules.get("kubernetes") is not None)
"""


def run_python(script, options):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path for path in sys.path if path))
    env.pop("KUBERNETES_SERVICE_HOST", None)
    done = subprocess.run([sys.executable, "-c", script, json.dumps(options)], env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()


def test_light_path_never_imports_kubernetes(pki, server, tmp_path):
    (tmp_path / "token").write_text("tok")
    path = write_yaml(tmp_path / "config", one_context({"server": server, "certificate-authority": str(pki["dir"] / "ca.crt")},
                                                       {"tokenFile": "token"}))
    assert json.loads(run_python(LIGHT_SCRIPT, {"kubeconfig": path})[0]) == {"cn": None, "auth": "Bearer tok"}
    explicit = {"host": server, "api_key": "key", "ca_cert": str(pki["dir"] / "ca.crt")}
    assert json.loads(run_python(LIGHT_SCRIPT, explicit)[0]) == {"cn": None, "auth": "Bearer key"}
    explicit = {"host": server, "client_cert": str(pki["dir"] / "client.crt"), "client_key": str(pki["dir"] / "client.key"),
                "validate_certs": False}
    assert json.loads(run_python(LIGHT_SCRIPT, explicit)[0]) == {"cn": "alice", "auth": None}


def test_exec_user_imports_kubernetes():
    pytest.importorskip("kubernetes")
    plugin = {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": "/nonexistent/credential-plugin"}
    config = one_context({"server": "https://h:6443"}, {"exec": plugin})
    out = run_python(FALLBACK_SCRIPT, {"kubeconfig": config})
    assert out[-1] == "True"
    # without the kubernetes client, the error says what needs it
    out = run_python("import sys\nsys.modules['kubernetes'] = None\n" + FALLBACK_SCRIPT, {"kubeconfig": config})
    assert "kubernetes Python library" in out[0] and "the kubeconfig user has exec" in out[0] and out[-1] == "False"


def _single(cluster, user, token):
    """A management cluster's own kubeconfig, its user entry named ``user``."""
    return {"apiVersion": "v1", "kind": "Config", "current-context": cluster,
            "clusters": [{"name": cluster, "cluster": {"server": f"https://{cluster}.example:6443"}}],
            "users": [{"name": user, "user": {"token": token}}],
            "contexts": [{"name": cluster, "context": {"cluster": cluster, "user": user}}]}


def _merge_as_kubectl(*documents):
    """`kubectl config view --flatten` over several files: the first entry of each name is kept."""
    out = {"apiVersion": "v1", "kind": "Config", "current-context": documents[0]["current-context"]}
    for section in ("clusters", "users", "contexts"):
        seen = {}
        for doc in documents:
            for item in doc[section]:
                seen.setdefault(item["name"], item)
        out[section] = list(seen.values())
    return out


def _write(tmp_path, name, document):
    path = tmp_path / name
    path.write_text(json.dumps(document), encoding="utf-8")
    return str(path)


def test_a_user_name_two_files_define_differently_is_named_with_a_401(tmp_path):
    west = _write(tmp_path, "west", _single("west", "rollout-operator", "tok-west"))
    east = _write(tmp_path, "east", _single("east", "rollout-operator", "tok-east"))
    cfg = connection.build_configuration(params(kubeconfig=os.pathsep.join([west, east]), context="east"))
    # as kubectl: the first file's token for the second cluster, which the API server will refuse
    assert connection._auth_header(cfg) == "Bearer tok-west"
    assert "rollout-operator of context east is defined differently in more than one kubeconfig file" in cfg.credentials_note
    err = errors.api_error(errors.ApiError(401, {"message": "Unauthorized"}, credentials_note=cfg.credentials_note))
    assert err.reason == "unauthorized" and "docs/awx.md" in err.hint and "rollout-operator" in err.hint
    # positive control: users named per cluster merge without a note, and each context keeps its own token
    west = _write(tmp_path, "west2", _single("west", "rollout-operator@west", "tok-west"))
    east = _write(tmp_path, "east2", _single("east", "rollout-operator@east", "tok-east"))
    cfg = connection.build_configuration(params(kubeconfig=os.pathsep.join([west, east]), context="east"))
    assert connection._auth_header(cfg) == "Bearer tok-east" and cfg.credentials_note is None
    assert errors.api_error(errors.ApiError(401, {})).hint.startswith("check api_key")


def test_a_flattened_kubeconfig_whose_contexts_share_a_user_is_named_with_a_401():
    merged = _merge_as_kubectl(_single("west", "rollout-operator", "tok-west"), _single("east", "rollout-operator", "tok-east"))
    cfg = connection.build_configuration(params(kubeconfig=merged, context="east"))
    assert connection._auth_header(cfg) == "Bearer tok-west"
    assert "is the user of 2 API servers" in cfg.credentials_note and "kubectl config view --flatten" in cfg.credentials_note
    # one user for several contexts of the same API server is fine
    same = _single("west", "u", "t")
    same["contexts"].append({"name": "west-ns", "context": {"cluster": "west", "user": "u", "namespace": "ns"}})
    assert connection.build_configuration(params(kubeconfig=same, context="west-ns")).credentials_note is None


# ----- the total time of a request: connection, answer and every read of its body or stream -----

@pytest.fixture
def trickle():
    """A plain-HTTP server on loopback that answers slowly: ``hang`` never answers (a stopped API server: the kernel
    accepts the connection), ``body`` sends a 6-byte JSON body one byte every 0.2 s, ``stream`` a chunked watch
    stream of 6 events, one every 0.2 s. Each read gets data well within 1 s: only a total time ends them early."""
    import socket  # pylint: disable=import-outside-toplevel
    import time  # pylint: disable=import-outside-toplevel

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    open_sockets = [listener]

    def serve():
        while True:
            try:
                sock, _addr = listener.accept()
            except OSError:
                return
            open_sockets.append(sock)
            request = b""
            while b"\r\n\r\n" not in request:
                request += sock.recv(4096)
            path = request.split(b" ")[1].decode()
            try:
                if path.startswith("/hang"):
                    continue
                if path.startswith("/body"):
                    sock.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 6\r\n\r\n")
                    for byte in b'[1234]':
                        time.sleep(0.2)
                        sock.sendall(bytes([byte]))
                else:
                    sock.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: application/json\r\n"
                                 b"Transfer-Encoding: chunked\r\n\r\n")
                    for index in range(6):
                        time.sleep(0.2)
                        line = json.dumps({"type": "MODIFIED", "object": {"n": index}}).encode() + b"\n"
                        sock.sendall(b"%x\r\n%s\r\n" % (len(line), line))
                    sock.sendall(b"0\r\n\r\n")
                sock.close()
            except OSError:
                pass

    threading.Thread(target=serve, daemon=True).start()
    conn = connection.Connection(params(host=f"http://127.0.0.1:{listener.getsockname()[1]}", api_key="t"))
    yield conn
    conn.close()
    for sock in open_sockets:
        sock.close()


def timed(call):
    import time  # pylint: disable=import-outside-toplevel
    started = time.monotonic()
    try:
        return call(), time.monotonic() - started
    except errors.TransportError as err:
        return err, time.monotonic() - started


def test_a_total_bounds_a_request_that_gets_no_answer(trickle):
    failed, took = timed(lambda: trickle.send("GET", "/hang", timeout=(5.0, 5.0), total=0.5))
    assert isinstance(failed, errors.TransportError) and took < 3, (failed, took)


def test_a_total_bounds_the_reads_of_a_body_each_of_which_is_quick(trickle):
    # positive control: each byte comes within the 1 s read timeout, so without a total the body is read whole
    answer, took = timed(lambda: trickle.send("GET", "/body", timeout=(1.0, 1.0)))
    assert answer.data == [1234] and took >= 1.0, (answer, took)
    failed, took = timed(lambda: trickle.send("GET", "/body", timeout=(1.0, 1.0), total=0.5))
    assert isinstance(failed, errors.TransportError) and took < 1.0, (failed, took)


def test_a_total_bounds_the_reads_of_a_watch_stream(trickle):
    def lines(total):
        raw = trickle.send("GET", "/stream", stream=True, timeout=(1.0, 1.0), total=total).raw
        try:
            return b"".join(raw.stream(1024)).splitlines()
        except connection.urllib3.exceptions.HTTPError as err:  # client.requests turns it into a TransportError
            raise errors.TransportError(trickle.host, str(err))
        finally:
            raw.release_conn()

    seen, took = timed(lambda: lines(None))
    assert [json.loads(line)["object"]["n"] for line in seen] == list(range(6)) and took >= 1.0, (seen, took)
    failed, took = timed(lambda: lines(0.5))
    assert isinstance(failed, errors.TransportError) and took < 1.0, (failed, took)
