"""Key material for one local management cluster: a CA, a serving certificate, a service-account key.

Our own CA (instead of the apiserver's self-signed loopback certificate) lets every client verify
TLS. ECDSA P-256 keys: generated in milliseconds, accepted by kube-apiserver 1.20 for serving and
for signing service-account tokens.
"""

import datetime
import ipaddress
import os

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

_VALIDITY = datetime.timedelta(days=365)


def _write(path, data, private=False):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o644)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def _key_pem(key):
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


def _cert(subject, issuer, public_key, signing_key, ca, extensions):
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(public_key)
               .serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + _VALIDITY)
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    for ext, critical in extensions:
        builder = builder.add_extension(ext, critical=critical)
    return builder.sign(signing_key, hashes.SHA256())


def write_pki(directory, cluster_name):
    """Create ca.crt/ca.key, apiserver.crt/.key (SAN 127.0.0.1, localhost) and sa.key/sa.pub; return their paths."""
    os.makedirs(directory, exist_ok=True)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"capisim-ca-{cluster_name}")])
    ca_cert = _cert(ca_name, ca_name, ca_key.public_key(), ca_key, True, [
        (x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                       key_encipherment=False, data_encipherment=False, key_agreement=False,
                       encipher_only=False, decipher_only=False), True),
        (x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False),
    ])
    srv_key = ec.generate_private_key(ec.SECP256R1())
    san = x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")])
    srv_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")])
    srv_cert = _cert(srv_name, ca_name, srv_key.public_key(), ca_key, False, [
        (san, False),
        (x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), False),
        (x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False),
    ])
    sa_key = ec.generate_private_key(ec.SECP256R1())
    paths = {name: os.path.join(directory, name) for name in
             ("ca.crt", "ca.key", "apiserver.crt", "apiserver.key", "sa.key", "sa.pub")}
    _write(paths["ca.crt"], ca_cert.public_bytes(serialization.Encoding.PEM))
    _write(paths["ca.key"], _key_pem(ca_key), private=True)
    _write(paths["apiserver.crt"], srv_cert.public_bytes(serialization.Encoding.PEM))
    _write(paths["apiserver.key"], _key_pem(srv_key), private=True)
    _write(paths["sa.key"], _key_pem(sa_key), private=True)
    sa_pub = sa_key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    _write(paths["sa.pub"], sa_pub)
    return paths
