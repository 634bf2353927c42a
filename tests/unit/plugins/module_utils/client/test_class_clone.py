# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""client.templates.create_class_clone: the creates of a ClusterClass clone and its template (topology path (c))."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.client import templates
from ansible_collections.capi.rollout.plugins.module_utils.client.requests import Api
from ansible_collections.capi.rollout.plugins.module_utils.core import topology
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.client.fakes import DRY_RUN, WRITE, FakeConnection
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core.test_topology_rebase import TEMPLATES, _class

TEMPLATES_PATH = "/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/default/dockermachinetemplates"
CLASSES_PATH = "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/clusterclasses"


class Discovery(object):
    def plural(self, group, version, kind, ref=None):
        return kind.lower() + "s"


def _clone():
    return topology.clone_class(_class(), "small", TEMPLATES["small"], {"customImage": "img:2"})


def _run(conn, clone, dry_run=False):
    return templates.create_class_clone(Api(conn, sleep=lambda _s: None), Discovery(), clone, "machinedeployment/default/md",
                                        dry_run=dry_run)


def test_the_template_then_the_class_are_created_as_capi_rollout():
    clone, conn = _clone(), FakeConnection()
    conn.add("POST", TEMPLATES_PATH, status=201, body=clone["template"]["object"])
    conn.add("POST", CLASSES_PATH, status=201, body=clone["object"])
    assert _run(conn, clone) == (True, True)
    assert [(sent["method"], sent["path"], sent["query"]) for sent in conn.sent] == [
        ("POST", TEMPLATES_PATH, WRITE), ("POST", CLASSES_PATH, WRITE)]
    assert conn.sent[1]["body"]["metadata"]["name"] == clone["name"]
    # as dry runs (before any write of the task, and in check mode)
    conn = FakeConnection()
    conn.add("POST", TEMPLATES_PATH, status=201, body=clone["template"]["object"])
    conn.add("POST", CLASSES_PATH, status=201, body=clone["object"])
    _run(conn, clone, dry_run=True)
    assert [sent["query"] for sent in conn.sent] == [DRY_RUN, DRY_RUN]


def test_existing_clones_are_taken_when_they_are_the_planned_ones_and_refused_otherwise():
    clone, conn = _clone(), FakeConnection()
    conn.add("POST", TEMPLATES_PATH, status=409, body={"reason": "AlreadyExists"})
    conn.add("GET", f"{TEMPLATES_PATH}/{clone['template']['name']}", body=clone["template"]["object"])
    conn.add("POST", CLASSES_PATH, status=409, body={"reason": "AlreadyExists"})
    conn.add("GET", f"{CLASSES_PATH}/{clone['name']}", body=clone["object"])
    assert _run(conn, clone) == (False, False)
    # a re-run after a failed create of the class: the template is taken, the class made (check mode: would be)
    conn = FakeConnection()
    conn.add("POST", TEMPLATES_PATH, status=409, body={"reason": "AlreadyExists"})
    conn.add("GET", f"{TEMPLATES_PATH}/{clone['template']['name']}", body=clone["template"]["object"])
    conn.add("POST", CLASSES_PATH, status=201, body=clone["object"])
    assert _run(conn, clone, dry_run=True) == (False, True)
    other = copy.deepcopy(clone["object"])
    other["metadata"]["annotations"]["rollout.capi-rollout.dev/spec-hash"] = "00000000"
    conn = FakeConnection()
    conn.add("POST", TEMPLATES_PATH, status=201, body=clone["template"]["object"])
    conn.add("POST", CLASSES_PATH, status=409, body={"reason": "AlreadyExists"})
    conn.add("GET", f"{CLASSES_PATH}/{clone['name']}", body=other)
    with pytest.raises(RolloutError) as err:
        _run(conn, clone)
    assert err.value.reason == "template_conflict" and "the Cluster was not changed" in err.value.msg


def test_a_field_the_api_server_drops_is_refused():
    clone, conn = _clone(), FakeConnection()
    pruned = copy.deepcopy(clone["template"]["object"])
    del pruned["spec"]["template"]["spec"]["customImage"]
    conn.add("POST", TEMPLATES_PATH, status=201, body=pruned)
    with pytest.raises(RolloutError) as err:
        _run(conn, clone, dry_run=True)
    assert err.value.reason == "pruned_fields" and "spec.template.spec.customImage" in err.value.msg
    assert [sent["path"] for sent in conn.sent] == [TEMPLATES_PATH]  # the class is not sent


def test_a_forbidden_create_names_the_clusterclass():
    clone, conn = _clone(), FakeConnection()
    conn.add("POST", TEMPLATES_PATH, status=201, body=clone["template"]["object"])
    conn.add("POST", CLASSES_PATH, status=403, body={"reason": "Forbidden", "message": "cannot create clusterclasses"})
    with pytest.raises(RolloutError) as err:
        _run(conn, clone, dry_run=True)
    assert err.value.reason == "forbidden" and err.value.ref == f"clusterclass/default/{clone['name']}"
