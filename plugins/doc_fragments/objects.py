# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type


class ModuleDocFragment(object):
    # Which MachineDeployments / KubeadmControlPlanes a task acts on.
    DOCUMENTATION = r'''
options:
  kind:
    description:
      - Kind of the objects, V(MachineDeployment) or V(KubeadmControlPlane).
      - Case-insensitive; plurals and the short names V(md) and V(kcp) are accepted too.
    type: str
    default: MachineDeployment
  namespace:
    description:
      - Namespace of the objects.
    type: str
    default: default
  name:
    description:
      - Name of one object.
      - Mutually exclusive with O(names), O(cluster_name) and O(label_selectors).
    type: str
  names:
    description:
      - Names of several objects, all handled in one task with a constant number of API requests.
      - Every name must exist; a missing one fails the task before anything is changed.
      - Mutually exclusive with O(name), O(cluster_name) and O(label_selectors).
    type: list
    elements: str
  cluster_name:
    description:
      - Select the objects that belong to this CAPI Cluster (C(spec.clusterName), the
        C(cluster.x-k8s.io/cluster-name) label or the Cluster owner reference).
      - Can be combined with O(label_selectors).
    type: str
  label_selectors:
    description:
      - Label selectors (for example V(env=prod) or V(tier in (a,b))); an object must match all of them.
      - Can be combined with O(cluster_name).
    type: list
    elements: str
'''

    WAIT = r'''
options:
  wait:
    description:
      - Wait until the rollout of every selected object is complete.
      - Waiting uses one watch stream on the API server (re-opened when the server ends it), not polling.
      - Complete means the controller observed the latest spec, every replica is up to date, available and
        no old replica remains (and, with CAPI v1.9+, the C(RollingOut) condition is C(False)).
      - Each change of an object's state is recorded as a timestamped line in RV(progress).
    type: bool
    default: false
  wait_timeout:
    description:
      - How many seconds to wait in total before failing, from V(1) to V(604800) (a week).
      - With O(wait=true) it bounds every request of the task too, so that an API server that hangs (accepts
        connections, answers nothing) cannot hold the task longer. No request ends more than 5 seconds after
        O(wait_timeout) from the start of the task, or, once the wait has started, from the start of the wait - the
        connection, the TLS handshake, the reads, the writes and the watches included. A wait that runs out of time
        that way fails with C(reason=wait_timeout) and names the objects; a request before it, with
        C(reason=unreachable).
    type: int
    default: 1200
  stall_timeout:
    description:
      - Fail when no replica count or condition of the waited-for objects has changed for this many seconds (V(1) to
        V(86400)).
      - Cluster API has no progress deadline of its own; this detects rollouts that are stuck, for example
        machines that never become ready. The failure message says what is stuck.
    type: int
    default: 600
'''

    ATTRIBUTES = r'''
attributes:
  action_group:
    description: Use C(group/capi.rollout.rollout) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - capi.rollout.rollout
'''
