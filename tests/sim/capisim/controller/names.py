"""Generated names and the machine-template-hash label value (reference §2, §3.4)."""

import json
import random

# k8s.io/apimachinery/pkg/util/rand alphabet: no vowels (no words), no confusable 0/1/3.
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_RANDOM_LENGTH = 5
_MAX_BASE = 63 - _RANDOM_LENGTH


def random_suffix(rng=random):
    return "".join(rng.choices(_ALPHABET, k=_RANDOM_LENGTH))


def generate_name(base, rng=random):
    """(name, suffix): ``base`` cut to 58 characters plus 5 random characters, like SimpleNameGenerator."""
    suffix = random_suffix(rng)
    return base[:_MAX_BASE] + suffix, suffix


def fnv32a(data):
    value = 0x811C9DC5
    for byte in data:
        value ^= byte
        value = (value * 0x01000193) & 0xFFFFFFFF
    return value


def template_hash(identity):
    """FNV-32a (decimal) of the rollout identity; upstream hashes a spew dump, only uniqueness matters here."""
    return fnv32a(json.dumps(identity, sort_keys=True).encode("utf-8"))
