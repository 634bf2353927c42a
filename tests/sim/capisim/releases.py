"""The CAPI releases the simulator reproduces: one row per fleet-spec ``capi_version``.

Each row says which CRDs are installed (tests/crds/<crds>), which API version the management cluster
serves, which controller logic the simulator follows and which upstream bugs it reproduces. The
upstream file and tag behind every choice is in docs/simulator-fidelity.md.

- ``logic``: "v1.10" (v1.10.x and v1.11.x MachineDeployment controller: revision annotations, rolling
  update without the planner; v1.10 keeps revisionHistoryLimit old MachineSets, v1.11 on v1beta2 none, as
  v1.11.11 internal/controllers/machinedeployment/machinedeployment_sync.go cleanupDeployment) or "v1.14"
  (v1.12+ controller: rollout planner, no revision history, old MachineSets deleted).
  v1.12.3 and v1.13.5 follow the same MachineDeployment/MachineSet logic as v1.14.0 for everything
  simulated (internal/controllers/machinedeployment/machinedeployment_rolling.go at those tags).
- ``status_versions``: MachineSet, MachineDeployment and KubeadmControlPlane report ``status.versions``
  (v1.14.0 ``api/core/v1beta2/machinedeployment_types.go``; not in the v1.12.3 and v1.13.5 APIs).
- ``kubelet_up_to_date``: a Machine whose Node's kubelet version differs from its ``spec.version`` is not up
  to date (UpToDate=False, reason Updating: v1.14.0 core/reconcilers/machine/machine_controller_status.go
  setUpToDateCondition; not at v1.10.10-v1.13.5), and ``status.versions`` counts the kubelet versions
  (v1.14.0 internal/util/version/version.go).
- ``refuses_zero_surge``: the MachineDeployment admission webhook refuses an integer maxSurge 0 together with
  an integer maxUnavailable 0 (v1.11.11 internal/webhooks/machinedeployment.go, v1.14.0
  core/webhooks/admission/machinedeployment.go validateRolloutStrategy; not at v1.10.10). No webhook runs
  here: capisim.crds.install_crds adds the rule to the CRD schema, so the API server refuses it itself.
- ``bug_13182``: the Machines of a MachineSet created in the rolloutAfter second stay UpToDate=False
  while the field is set (``!ms.CreationTimestamp.After(rolloutAfter)``: v1.10.10
  internal/controllers/machineset/machineset_controller.go, v1.12.3
  internal/controllers/machine/machine_controller_status.go; ``Before`` since v1.12.4 and v1.13.0).
- ``topology_rollout_after``: the topology controller copies Cluster ``spec.topology.controlPlane.rollout.after`` and
  ``workers.machineDeployments[].rollout.after`` into the KubeadmControlPlane / MachineDeployment (v1.13.5
  exp/topology/desiredstate/desired_state.go, PR #13391; the fields do not exist in the Cluster API before v1.13).
- ``in_place_updates``: the ``InPlaceUpdates`` feature gate exists (v1.12.3 feature/feature.go, alpha, off by default)
  and the MachineDeployment rollout planner may move Machines to the new MachineSet and update them in place
  (v1.12.3 internal/controllers/machinedeployment/machinedeployment_rollout_rollingupdate.go
  reconcileInPlaceUpdateIntent); a fleet spec may turn it on with ``features: [InPlaceUpdates]``.
"""

import collections

Release = collections.namedtuple("Release", "crds api_version logic bug_13182 status_versions kubelet_up_to_date "
                                            "refuses_zero_surge topology_rollout_after in_place_updates")

RELEASES = {
    "v1.10": Release("capi-v1.10.10", "v1beta1", "v1.10", True, False, False, False, False, False),
    "v1.11": Release("capi-v1.11.11", "v1beta2", "v1.10", True, False, False, True, False, False),
    "v1.12.3": Release("capi-v1.12.3", "v1beta2", "v1.14", True, False, False, True, False, True),
    # v1.12.4 and later v1.12 patches: #13182 fixed; their CRDs differ from v1.12.3's in one maxItems only
    "v1.12": Release("capi-v1.12.3", "v1beta2", "v1.14", False, False, False, True, False, True),
    "v1.13": Release("capi-v1.13.5", "v1beta2", "v1.14", False, False, False, True, True, True),
    "v1.14": Release("capi-v1.14.0", "v1beta2", "v1.14", False, True, True, True, True, True),
}
