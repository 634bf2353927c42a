# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type


class ModuleDocFragment(object):
    # The fleet report data model (report format 1), the input of the rollout_report_* filters.
    # docs/report.md describes the same model with a complete example.
    DOCUMENTATION = r'''
options:
  _input:
    description:
      - The fleet report of one hardware refresh run, as written to C(report.json) (report format 1).
      - Every field except O(_input.management_clusters[].name) and the object O(_input.management_clusters[].objects[].name)
        is optional. Missing times (a planned run has none), missing waves, unknown results and
        unparsable values are tolerated; the renderers show an em dash or derive what they can
        (for example a management cluster's result from its objects).
      - Times are RFC 3339 strings (V(2026-11-30T06:00:00Z); offsets are converted to UTC) or epoch seconds.
      - Strings come from users and clusters; every renderer escapes them. Jinja2 opening
        delimiters in them are written as the character reference C(&#123;) so a rendered report
        stored in a variable is never templated again.
    type: dict
    required: true
    suboptions:
      report_version:
        description: Format of the report. Only V(1) exists.
        type: int
        default: 1
      refresh_id:
        description: Identifier of the refresh run; a re-run with the same id resumes it.
        type: str
      mode:
        description:
          - V(apply) for a real run, V(check) for a dry run (the report then holds a plan).
          - When missing, V(check) is assumed if every management cluster has result V(planned).
        type: str
        choices: [apply, check]
      started:
        description: When the run started.
        type: str
      finished:
        description: When the run finished.
        type: str
      result:
        description:
          - Overall result. When missing it is derived from the management clusters in this order
            V(failed), V(stopped_window), V(partial), V(running), V(succeeded), V(planned), V(skipped).
        type: str
      run_by:
        description: Who or what ran the refresh, for example an AWX job.
        type: str
      window:
        description: The maintenance window; its end is drawn on the timelines.
        type: dict
        suboptions:
          start:
            description: Start of the window.
            type: str
          end:
            description: End of the window.
            type: str
      management_clusters:
        description: One entry per management cluster, in the order they were handled.
        type: list
        elements: dict
        suboptions:
          name:
            description: Name of the management cluster (inventory host).
            type: str
            required: true
          capi_version:
            description: Cluster API version found on it, for example V(v1.10.10).
            type: str
          api_version:
            description: Served API version used, V(cluster.x-k8s.io/v1beta1) or V(cluster.x-k8s.io/v1beta2).
            type: str
          result:
            description:
              - V(succeeded), V(failed) (a rollout or health gate failed; what was switched in the
                failing wave was undone), V(partial) (some objects not done, without failure),
                V(stopped_window) (stopped because the maintenance window ends), V(running),
                V(planned) (check mode) or V(skipped) (for example the lock is held by another run).
              - Derived from the objects when missing.
            type: str
          failure_reason:
            description:
              - Why the management cluster did not succeed (also used for V(stopped_window) and V(skipped)).
              - A trailing sentence starting with C(Next step:) is split off into O(_input.management_clusters[].next_step)
                when that is not given.
            type: str
          next_step:
            description: What a person should do next; shown prominently next to the reason.
            type: str
          started:
            description: When work on this management cluster started.
            type: str
          finished:
            description: When work on this management cluster finished.
            type: str
          lock:
            description: The refresh lock on this management cluster.
            type: dict
            suboptions:
              holder:
                description: Who held the lock, for example V(awx-job-4711).
                type: str
              acquired:
                description: When it was acquired.
                type: str
              released:
                description: When it was released (missing while still held).
                type: str
          notes:
            description: Free-form remarks shown under the management cluster's summary.
            type: list
            elements: str
          waves:
            description: The waves in the order they ran. The control plane usually is wave V(0).
            type: list
            elements: dict
            suboptions:
              index:
                description: Wave number (defaults to the position in the list).
                type: int
              name:
                description: Wave name, for example V(canary).
                type: str
              objects:
                description:
                  - References C(Kind/namespace/name) of the objects in the wave (matched case-insensitively).
                  - Objects can name their wave with O(_input.management_clusters[].objects[].wave) instead.
                type: list
                elements: str
              started:
                description: When the first rollout of the wave started.
                type: str
              rollout_finished:
                description: When the last rollout of the wave finished; the soak starts here.
                type: str
              soak_finished:
                description: When the soak (health gates) after the rollouts ended.
                type: str
              finished:
                description: When the wave ended (after the soak or the undo).
                type: str
              result:
                description: Result of the wave, with the values of an object result.
                type: str
          objects:
            description: The MachineDeployments and KubeadmControlPlanes selected on this management cluster.
            type: list
            elements: dict
            suboptions:
              kind:
                description: V(MachineDeployment) (default) or V(KubeadmControlPlane).
                type: str
              namespace:
                description: Namespace of the object.
                type: str
              name:
                description: Name of the object.
                type: str
                required: true
              cluster:
                description: The workload cluster (CAPI Cluster) the object belongs to.
                type: str
              replicas:
                description: Number of machines.
                type: int
              wave:
                description: Index of the wave the object is in.
                type: int
              before:
                description: Machine template and version before the run (the current one in check mode).
                type: dict
                suboptions:
                  infrastructure_ref:
                    description: The infrastructure machine template, C({kind, name}) or a string C(Kind/name).
                    type: raw
                  version:
                    description: Kubernetes version.
                    type: str
              after:
                description: Machine template and version after the run (the target in check mode).
                type: dict
                suboptions:
                  infrastructure_ref:
                    description: The infrastructure machine template, C({kind, name}) or a string C(Kind/name).
                    type: raw
                  version:
                    description: Kubernetes version.
                    type: str
              action:
                description:
                  - V(switch) (move to the target template), V(unchanged) (already on target, for example
                    after a resumed run), V(skip), V(undo) (a run that reverts a refresh) or V(plan).
                type: str
              result:
                description:
                  - V(succeeded), V(failed) (its own rollout or health gate failed; see O(_input.management_clusters[].objects[].undo)
                    for the rollback), V(undone) (rolled back because another object of its wave failed),
                    V(running), V(pending) (not started), V(skipped) or V(planned) (check mode).
                  - Defaults to V(planned) for action V(plan), else V(pending).
                type: str
              started:
                description: When its rollout started.
                type: str
              finished:
                description: When its rollout finished or failed.
                type: str
              failure_reason:
                description:
                  - Why it failed, was undone or skipped; should say which machine or node is stuck and why.
                  - A trailing sentence starting with C(Next step:) is split off as for management clusters.
                type: str
              next_step:
                description: What a person should do next.
                type: str
              stuck_machines:
                description: Machines that kept the rollout from finishing.
                type: list
                elements: dict
                suboptions:
                  name:
                    description: Machine name.
                    type: str
                  node:
                    description: Node name, missing when the machine never got a node.
                    type: str
                  reason:
                    description: Condition or message explaining why it is stuck.
                    type: str
              undo:
                description: The rollback of this object after a failure.
                type: dict
                suboptions:
                  started:
                    description: When the undo started.
                    type: str
                  finished:
                    description: When the undo finished.
                    type: str
                  result:
                    description: V(succeeded) or V(failed).
                    type: str
                  failure_reason:
                    description: Why the undo failed.
                    type: str
                  next_step:
                    description: What to do about the failed undo.
                    type: str
              blockers:
                description: Reasons the object cannot be switched (check mode), for example a paused object.
                type: list
                elements: str
'''
