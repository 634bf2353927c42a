# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""client.connection.go_json: request bodies spelled as Go's encoding/json spells them, byte for byte.

Every expected value below is what json.Marshal of Go 1.19.8 (the Go the test bed's kube-apiserver v1.20.2 is built
with) wrote for the same value."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.client import connection

GO_1_19 = [
    # HTML characters: Go escapes them, json.dumps does not
    ("<", b'"\\u003c"'),
    (">", b'"\\u003e"'),
    ("&", b'"\\u0026"'),
    # line and paragraph separators: always escaped by Go
    ("\u2028", b'"\\u2028"'),
    ("\u2029", b'"\\u2029"'),
    # other non-ASCII: UTF-8 in Go, \\uXXXX in json.dumps' default
    ("für", '"für"'.encode("utf-8")),
    ("\u00a0", '"\u00a0"'.encode("utf-8")),
    ("\ufeff", '"\ufeff"'.encode("utf-8")),
    ("😀", '"😀"'.encode("utf-8")),
    ("Wartungsfenster für Rack 4 <R&D>", '"Wartungsfenster für Rack 4 \\u003cR\\u0026D\\u003e"'.encode("utf-8")),
    # control characters: Go 1.19 has short escapes for \n, \r, \t only
    ("\b", b'"\\u0008"'),
    ("\f", b'"\\u000c"'),
    ("\n", b'"\\n"'),
    ("\r", b'"\\r"'),
    ("\t", b'"\\t"'),
    ("\x00", b'"\\u0000"'),
    ("\x1f", b'"\\u001f"'),
    ("\x7f", b'"\x7f"'),
    # quote, backslash and what follows an escaped backslash ("\\b" is a backslash and a b, no backspace)
    ('"', b'"\\""'),
    ("\\", b'"\\\\"'),
    ("\\b", b'"\\\\b"'),
    ("\\\\f", b'"\\\\\\\\f"'),
    ("/", b'"/"'),
    # in keys and nested values, with the other JSON types; no spaces (as Go writes, json.Compact keeps it)
    ({"a<b": ["x&y", 1, True, None, {"k": "\u2029"}]}, b'{"a\\u003cb":["x\\u0026y",1,true,null,{"k":"\\u2029"}]}'),
]


@pytest.mark.parametrize("value, go_bytes", GO_1_19, ids=[repr(case[0]) for case in GO_1_19])
def test_bytes_are_those_go_writes_and_decode_to_the_same_value(value, go_bytes):
    sent = connection.go_json(value)
    assert sent == go_bytes
    assert json.loads(sent.decode("utf-8")) == value


def test_a_lone_surrogate_stays_escaped():
    """No UTF-8 spells it: escaped as json.dumps escaped it (the API server reads it as U+FFFD)."""
    sent = connection.go_json({"reason": "a\ud800b"})
    assert sent == b'{"reason":"a\\ud800b"}'
    assert json.loads(sent) == {"reason": "a\ud800b"}


def test_a_test_operation_of_a_record_is_sent_as_the_api_server_stores_the_record():
    """The value of a JSON patch ``test`` (a history annotation holding JSON text) is the stored string's Go bytes."""
    record = json.dumps([{"reason": "Wartungsfenster für Rack 4 <R&D>"}], ensure_ascii=False)
    op = [{"op": "test", "path": "/metadata/annotations/rollout.capi-rollout.dev~1history", "value": record}]
    sent = connection.go_json(op)
    assert sent.decode("utf-8").endswith('"value":"[{\\"reason\\": \\"Wartungsfenster für Rack 4 \\u003cR\\u0026D\\u003e\\"}]"}]')
    assert json.loads(sent) == op


class RecordingPool(object):
    def __init__(self):
        self.bodies = []

    def request(self, method, url, body=None, **kwargs):
        self.bodies.append(body)
        raise ValueError("no server")  # the request is recorded; the answer does not matter here


def test_send_sends_the_go_spelling():
    conn = connection.Connection({"host": "https://h:6443", "api_key": "token", "validate_certs": False})
    conn.pool = RecordingPool()
    with pytest.raises(Exception):
        conn.send("PATCH", "/x", body=[{"op": "test", "path": "/a", "value": "<für>"}], content_type="application/json-patch+json")
    assert conn.pool.bodies == ['[{"op":"test","path":"/a","value":"\\u003cfür\\u003e"}]'.encode("utf-8")]
