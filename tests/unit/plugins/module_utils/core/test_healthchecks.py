# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core import healthchecks

V1, V2 = "v1beta1", "v1beta2"


def md(name="c1-md-0", cluster="c1", labels=None):
    return {"metadata": {"name": name}, "spec": {"clusterName": cluster, "template": {
        "metadata": {"labels": labels if labels is not None else {"pool": "workers"}}}}}


def mhc(name="workers", cluster="c1", selector=None, version=V1, annotations=None, **limits):
    spec = {"clusterName": cluster, "selector": selector or {"matchLabels": {"pool": "workers"}}}
    if version == V1:
        spec.update(limits)
    elif limits:
        spec["remediation"] = {"triggerIf": limits}
    return {"metadata": {"name": name, "annotations": annotations or {}}, "spec": spec}


def machine(name, deployment="c1-md-0", annotations=None, version=V1, remediated=None):
    status = {}
    if remediated:
        condition = {"type": remediated, "status": "False", "reason": "WaitingForRemediation", "message": "MHC workers"}
        # v1beta1 objects: v1beta1 conditions in status.conditions; v1beta2: metav1 ones in status.conditions
        status["conditions"] = [condition]
    return {"metadata": {"name": name, "labels": {"cluster.x-k8s.io/deployment-name": deployment},
                         "annotations": annotations or {}}, "status": status}


@pytest.mark.parametrize("version, limits, shown", [
    (V1, {"maxUnhealthy": "40%", "unhealthyRange": "[1-3]"}, {"maxUnhealthy": "40%", "unhealthyRange": "[1-3]"}),
    (V2, {"unhealthyLessThanOrEqualTo": 2}, {"unhealthyLessThanOrEqualTo": 2}),
])
def test_a_health_check_covers_a_pool_whose_machine_template_labels_it_selects_in_its_cluster(version, limits, shown):
    checks = [mhc(version=version, **limits), mhc("other-cluster", cluster="c2", version=version),
              mhc("other-pool", selector={"matchLabels": {"pool": "gpu"}}, version=version)]
    found = healthchecks.coverage(md(), checks, [], version)
    assert found == {"health_checks": [{"name": "workers", "limits": shown, "paused": False}], "in_flight": [], "skipped": []}
    assert healthchecks.blocker(found) is None
    assert healthchecks.summary(found) == "workers (" + ", ".join(f"{k} {v}" for k, v in sorted(shown.items())) + ")"


def test_no_health_check_no_coverage():
    found = healthchecks.coverage(md(labels={}), [mhc()], [], V1)
    assert found["health_checks"] == [] and healthchecks.summary(found) == "-"


@pytest.mark.parametrize("version", [V1, V2])
def test_a_machine_waiting_for_remediation_blocks_its_pool_and_others_do_not(version):
    machines = [machine("c1-md-0-a", version=version, remediated="OwnerRemediated"), machine("c1-md-0-b", version=version),
                machine("c1-md-1-a", deployment="c1-md-1", version=version, remediated="OwnerRemediated")]
    found = healthchecks.coverage(md(), [mhc(version=version)], machines, version)
    assert [item["machine"] for item in found["in_flight"]] == ["c1-md-0-a"]
    assert healthchecks.blocker(found) == (
        "remediation in flight: Machine c1-md-0-a (OwnerRemediated False: WaitingForRemediation, MHC workers); wait until "
        "its owner has replaced it (the Machine gone or the condition True), then re-run")
    assert healthchecks.summary(found).endswith("; remediating c1-md-0-a")


def test_a_paused_health_check_and_machines_that_skip_remediation_are_shown():
    machines = [machine("a", annotations={"cluster.x-k8s.io/skip-remediation": ""}),
                machine("b", annotations={"cluster.x-k8s.io/paused": ""}), machine("c"),
                machine("d", remediated="ExternallyRemediated")]
    found = healthchecks.coverage(md(), [mhc(annotations={"cluster.x-k8s.io/paused": ""})], machines, V1)
    assert found["health_checks"][0]["paused"] is True and found["skipped"] == ["a", "b"]
    assert healthchecks.summary(found) == "workers paused; 2 Machine(s) skip remediation; remediating d"
    # a remediation through a remediation template (ExternallyRemediated) is in flight too
    assert "Machine d (ExternallyRemediated False" in healthchecks.blocker(found)
