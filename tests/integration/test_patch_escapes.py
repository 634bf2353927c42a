"""JSON patch ``test`` operations on annotations whose values hold ``<``, ``>``, ``&`` and non-ASCII text, on a real
kube-apiserver: its json-patch (evanphx/json-patch v4.9.0, patch.go ``lazyNode.equal``) compares a tested string as
the compacted JSON bytes of the stored object (written by Go's encoding/json) and of the patch, so the client must
spell such strings as Go does (client/connection.py ``go_json``)."""

import json

import pytest

pytestmark = pytest.mark.needs_controller

NS = "team-esc"
NAME = "wesc-md-0"
HISTORY = "rollout.capi-rollout.dev/history"
# each character Go writes otherwise than Python's json.dumps: <, >, & (Go escapes them), non-ASCII (Go writes it
# as UTF-8), U+2028 (Go escapes it), and a tab that both escape alike
REASON = "Wartungsfenster für Rack 4 <R&D> -> 20\u00a0% \u2028 Ticket\t#7 ✓"


def test_a_write_passes_its_test_of_a_record_whose_reason_has_html_and_non_ascii_characters(capi):
    capi.add_workload("wesc", NS, "v1.30.4", ["md-0"])
    first_mark = capi.mark()
    first = capi.run("capi_rollout_restart", namespace=NS, name=NAME, rollout_id="ESC-1", reason=REASON)
    assert first["changed"] is True, first
    first_patches = [e for e in capi.writes(first_mark) if e["verb"] == "patch"]

    mark = capi.mark()
    second = capi.run("capi_rollout_restart", namespace=NS, name=NAME, rollout_id="ESC-2", reason=REASON)
    patches = [e for e in capi.writes(mark) if e["verb"] == "patch"]

    # positive control: the first restart's one patch is found the same way
    assert [(e["objectRef"]["name"], e["responseStatus"]["code"]) for e in first_patches] == [(NAME, 200)], first_patches
    assert second["changed"] is True, second
    # the second restart tests the history written by the first: accepted at the first try, no 422 and no retry
    assert [(e["objectRef"]["name"], e["responseStatus"]["code"]) for e in patches] == [(NAME, 200)], patches
    sent = second["objects"][0]["patch"]
    tested = [op["value"] for op in sent if op["op"] == "test" and op["path"].endswith("rollout.capi-rollout.dev~1history")]
    assert len(tested) == 1 and [entry.get("reason") for entry in json.loads(tested[0])][-1] == REASON, sent

    history = json.loads(capi.get("MachineDeployment", NAME, NS)["metadata"]["annotations"][HISTORY])
    assert [(entry.get("rollout_id"), entry.get("reason")) for entry in history if entry.get("rollout_id")] == \
        [("ESC-1", REASON), ("ESC-2", REASON)], history
