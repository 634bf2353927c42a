# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fleet reports for the report filter tests (also rendered by tests/conformance/test_report_render.py).

fleet_report(): an apply run over three management clusters: one succeeded, one failed with an
undo (the failing MachineDeployment and its wave sibling switched back), one stopped because the
maintenance window ends. plan_report(): the check-mode plan for the same fleet, with blockers.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime

T0 = datetime.datetime(2026, 11, 30, 6, 0, 0, tzinfo=datetime.timezone.utc)


def t(minutes, seconds=0):
    return (T0 + datetime.timedelta(minutes=minutes, seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def md(ns, name, cluster, replicas, wave, old, new, started, finished, result="succeeded", **extra):
    obj = {
        "kind": "MachineDeployment", "namespace": ns, "name": name, "cluster": cluster, "replicas": replicas,
        "wave": wave,
        "before": {"infrastructure_ref": {"kind": "Metal3MachineTemplate", "name": old}, "version": "v1.30.6"},
        "after": {"infrastructure_ref": {"kind": "Metal3MachineTemplate", "name": new}, "version": "v1.30.6"},
        "action": "switch", "result": result, "started": started, "finished": finished,
    }
    obj.update(extra)
    return obj


def kcp(ns, name, cluster, started, finished, old, new, result="succeeded"):
    return {
        "kind": "KubeadmControlPlane", "namespace": ns, "name": name, "cluster": cluster, "replicas": 3, "wave": 0,
        "before": {"infrastructure_ref": {"kind": "Metal3MachineTemplate", "name": old}, "version": "v1.30.6"},
        "after": {"infrastructure_ref": {"kind": "Metal3MachineTemplate", "name": new}, "version": "v1.30.6"},
        "action": "switch", "result": result, "started": started, "finished": finished,
    }


def wave(index, name, objects, started, rollout_finished, soak_finished, finished, result):
    return {"index": index, "name": name, "objects": objects, "started": started, "rollout_finished": rollout_finished,
            "soak_finished": soak_finished, "finished": finished, "result": result}


def fleet_report():
    east = {
        "name": "mgmt-east", "capi_version": "v1.14.0", "api_version": "cluster.x-k8s.io/v1beta2",
        "result": "succeeded", "failure_reason": None, "started": t(0, 5), "finished": t(38, 40),
        "lock": {"holder": "awx-job-4711", "acquired": t(0, 2), "released": t(38, 42)},
        "waves": [
            wave(0, "control-plane", ["KubeadmControlPlane/prod-1/prod-1-cp"], t(0, 10), t(9, 40), t(11, 40), t(11, 40), "succeeded"),
            wave(1, "canary", ["MachineDeployment/team-a/prod-1-md-0"], t(11, 45), t(17, 5), t(22, 5), t(22, 5), "succeeded"),
            wave(2, "bulk", ["MachineDeployment/team-a/prod-1-md-1", "MachineDeployment/team-b/prod-1-gpu-md-0",
                             "MachineDeployment/team-c/prod-1-md-2"], t(22, 10), t(33, 30), t(38, 30), t(38, 30), "succeeded"),
        ],
        "objects": [
            kcp("prod-1", "prod-1-cp", "prod-1", t(0, 10), t(9, 40), "prod-1-cp-r640", "prod-1-cp-r760"),
            md("team-a", "prod-1-md-0", "prod-1", 3, 1, "prod-1-md-0-r640", "prod-1-md-0-r760", t(11, 45), t(17, 5)),
            md("team-a", "prod-1-md-1", "prod-1", 6, 2, "prod-1-md-1-r640", "prod-1-md-1-r760", t(22, 10), t(33, 30)),
            md("team-b", "prod-1-gpu-md-0", "prod-1", 2, 2, "prod-1-gpu-r740xd", "prod-1-gpu-xe9680", t(22, 10), t(29, 55)),
            md("team-c", "prod-1-md-2", "prod-1", 4, 2, "prod-1-md-2-r640", "prod-1-md-2-r760", t(22, 10), t(31, 20)),
        ],
    }
    stalled = ("stalled for 300s: 3 of 4 new machines ready; machine edge-2-md-1-7f9c-xk2lp has no node "
               "(InfrastructureReady=False, Metal3 BMC power-on timed out on host r760-rack4-u12).")
    west = {
        "name": "mgmt-west", "capi_version": "v1.10.10", "api_version": "cluster.x-k8s.io/v1beta1",
        "result": "failed",
        "failure_reason": "MachineDeployment/payments/edge-2-md-1: " + stalled,
        "next_step": "Check the BMC of r760-rack4-u12 (power, IPMI credentials), then re-run with refresh_id hw-2026-11; "
                     "switched objects are kept, the undone wave is retried.",
        "started": t(0, 5), "finished": t(41, 10),
        "lock": {"holder": "awx-job-4711", "acquired": t(0, 3), "released": t(41, 12)},
        "waves": [
            wave(0, "control-plane", ["KubeadmControlPlane/edge-2/edge-2-cp"], t(0, 10), t(8, 50), t(10, 50), t(10, 50), "succeeded"),
            wave(1, "canary", ["MachineDeployment/team-a/edge-2-md-0"], t(10, 55), t(15, 40), t(20, 40), t(20, 40), "succeeded"),
            wave(2, "bulk", ["MachineDeployment/payments/edge-2-md-1", "MachineDeployment/payments/edge-2-md-2"],
                 t(20, 45), None, None, t(41, 5), "failed"),
        ],
        "objects": [
            kcp("edge-2", "edge-2-cp", "edge-2", t(0, 10), t(8, 50), "edge-2-cp-r640", "edge-2-cp-r760"),
            md("team-a", "edge-2-md-0", "edge-2", 2, 1, "edge-2-md-0-r640", "edge-2-md-0-r760", t(10, 55), t(15, 40)),
            md("payments", "edge-2-md-1", "edge-2", 4, 2, "edge-2-md-1-r640", "edge-2-md-1-r760", t(20, 45), t(33, 10),
               result="failed", failure_reason=stalled,
               stuck_machines=[{"name": "edge-2-md-1-7f9c-xk2lp", "node": None,
                                "reason": "InfrastructureReady=False: BMC power-on timed out (r760-rack4-u12)"}],
               undo={"started": t(33, 15), "finished": t(41, 0), "result": "succeeded"}),
            md("payments", "edge-2-md-2", "edge-2", 3, 2, "edge-2-md-2-r640", "edge-2-md-2-r760", t(20, 45), t(27, 30),
               result="undone", failure_reason="undone: wave 2 failed (MachineDeployment/payments/edge-2-md-1)",
               undo={"started": t(33, 15), "finished": t(39, 20), "result": "succeeded"}),
        ],
    }
    south = {
        "name": "mgmt-south", "capi_version": "v1.14.0", "api_version": "cluster.x-k8s.io/v1beta2",
        "result": "stopped_window",
        "failure_reason": "Wave 2 (bulk) needs about 14m and the maintenance window ends at 07:25; 2 MachineDeployments "
                          "were not started.",
        "next_step": "Re-run with refresh_id hw-2026-11 in the next window; completed objects are skipped.",
        "started": t(38, 50), "finished": t(60, 30),
        "lock": {"holder": "awx-job-4711", "acquired": t(38, 45), "released": t(60, 32)},
        "waves": [
            wave(0, "control-plane", ["KubeadmControlPlane/dc-3/dc-3-cp"], t(39, 0), t(47, 20), t(49, 20), t(49, 20), "succeeded"),
            wave(1, "canary", ["MachineDeployment/team-a/dc-3-md-0"], t(49, 25), t(55, 25), t(60, 25), t(60, 25), "succeeded"),
            wave(2, "bulk", ["MachineDeployment/team-a/dc-3-md-1", "MachineDeployment/team-b/dc-3-md-2"],
                 None, None, None, None, "pending"),
        ],
        "objects": [
            kcp("dc-3", "dc-3-cp", "dc-3", t(39, 0), t(47, 20), "dc-3-cp-r640", "dc-3-cp-r760"),
            md("team-a", "dc-3-md-0", "dc-3", 3, 1, "dc-3-md-0-r640", "dc-3-md-0-r760", t(49, 25), t(55, 25)),
            md("team-a", "dc-3-md-1", "dc-3", 8, 2, "dc-3-md-1-r640", "dc-3-md-1-r760", None, None, result="pending"),
            md("team-b", "dc-3-md-2", "dc-3", 5, 2, "dc-3-md-2-r640", "dc-3-md-2-r760", None, None, result="pending"),
        ],
    }
    return {
        "report_version": 1,
        "refresh_id": "hw-2026-11",
        "mode": "apply",
        "run_by": "awx-job-4711",
        "started": t(0), "finished": t(60, 40),
        "window": {"start": t(0), "end": t(85)},
        "management_clusters": [east, west, south],
    }


def _plan_obj(kind, ns, name, cluster, replicas, wave, old, new, action="switch", blockers=None, old_version="v1.30.6",
              new_version="v1.30.6"):
    return {
        "kind": kind, "namespace": ns, "name": name, "cluster": cluster, "replicas": replicas, "wave": wave,
        "before": {"infrastructure_ref": {"kind": "Metal3MachineTemplate", "name": old}, "version": old_version},
        "after": {"infrastructure_ref": {"kind": "Metal3MachineTemplate", "name": new}, "version": new_version},
        "action": action, "result": "planned", "blockers": blockers or [],
    }


def plan_report():
    waves = [{"index": 0, "name": "control-plane"}, {"index": 1, "name": "canary"}, {"index": 2, "name": "bulk"}]
    east = {
        "name": "mgmt-east", "capi_version": "v1.14.0", "api_version": "cluster.x-k8s.io/v1beta2", "result": "planned",
        "waves": waves,
        "objects": [
            _plan_obj("KubeadmControlPlane", "prod-1", "prod-1-cp", "prod-1", 3, 0, "prod-1-cp-r640", "prod-1-cp-r760"),
            _plan_obj("MachineDeployment", "team-a", "prod-1-md-0", "prod-1", 3, 1, "prod-1-md-0-r640", "prod-1-md-0-r760"),
            _plan_obj("MachineDeployment", "team-a", "prod-1-md-1", "prod-1", 6, 2, "prod-1-md-1-r640", "prod-1-md-1-r760",
                      blockers=["MachineDeployment is paused (spec.paused=true); resume it or exclude it"]),
            _plan_obj("MachineDeployment", "team-b", "prod-1-gpu-md-0", "prod-1", 2, 2, "prod-1-gpu-xe9680",
                      "prod-1-gpu-xe9680", action="unchanged"),
        ],
    }
    west = {
        "name": "mgmt-west", "capi_version": "v1.10.10", "api_version": "cluster.x-k8s.io/v1beta1", "result": "planned",
        "waves": waves[:2],
        "objects": [
            _plan_obj("KubeadmControlPlane", "edge-2", "edge-2-cp", "edge-2", 3, 0, "edge-2-cp-r640", "edge-2-cp-r760",
                      new_version="v1.31.4"),
            _plan_obj("MachineDeployment", "payments", "edge-2-md-1", "edge-2", 4, 1, "edge-2-md-1-r640", "edge-2-md-1-r760",
                      blockers=["target template Metal3MachineTemplate/edge-2-md-1-r760 not found in namespace payments",
                                "spec.rolloutAfter is in the future (2026-12-01T02:00:00Z)"]),
        ],
    }
    return {"refresh_id": "hw-2026-11", "mode": "check", "started": t(-10), "management_clusters": [east, west]}


def deleted_report():
    """One management cluster whose wave lost a MachineDeployment to a delete: it is deleted (when the wait saw it
    gone), the other one of the wave undone."""
    gone = "deleted while rolling out: MachineDeployment/team-a/edge-1-md-1 no longer exists (seen gone at %s)" % t(3)
    return {"refresh_id": "hw-del", "mode": "apply", "management_clusters": [{
        "name": "mgmt-del", "result": "failed", "failure_reason": "wave canary failed: machinedeployment/team-a/edge-1-md-1: "
                                                                  + gone,
        "next_step": "Find out who deleted it (the Cluster being deleted?); a deleted object is not undone.",
        "started": t(0), "finished": t(6),
        "waves": [wave(1, "canary", ["MachineDeployment/team-a/edge-1-md-0", "MachineDeployment/team-a/edge-1-md-1"],
                       t(0, 10), None, None, t(6), "failed")],
        "objects": [
            md("team-a", "edge-1-md-0", "edge-1", 2, 1, "edge-1-md-0-r640", "edge-1-md-0-r640", t(0, 10), None,
               result="undone", failure_reason="switched back because machinedeployment/team-a/edge-1-md-1 failed in wave canary",
               undo={"started": t(3, 5), "finished": t(6), "result": "succeeded"}),
            md("team-a", "edge-1-md-1", "edge-1", 3, 1, "edge-1-md-1-r640", "edge-1-md-1-r760", t(0, 10), t(3),
               result="deleted", failure_reason=gone),
        ]}]}
