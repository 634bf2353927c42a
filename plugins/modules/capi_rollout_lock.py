#!/usr/bin/python
# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: capi_rollout_lock
short_description: Take, renew or release a lock on a Cluster API management cluster (a Lease)
version_added: 0.1.0
description:
  - Keeps two runs (two AWX jobs, a scheduled job and a person at a terminal) from rolling the machines of the
    same management cluster at the same time. The lock is one C(coordination.k8s.io/v1) C(Lease) object.
  - O(state=acquired) takes the lock for O(holder), or renews it when O(holder) holds it already. The lease is
    valid for O(lease_duration_seconds) after each renewal; a run that works longer must renew it in time (the
    C(capi.rollout.hardware_refresh) role renews it between steps and while it waits).
  - A lease whose holder stopped renewing it (C(renewTime) + C(leaseDurationSeconds) in the past) is stale and is
    taken over. A valid lease of another holder makes the task wait up to O(wait_timeout) seconds for it to be
    released or to go stale, and then fail with a message that names the holder, what it is doing and when its
    lease expires.
  - O(state=released) gives the lock up. Only the holder releases; a lease held by someone else is left alone.
  - Every write carries the C(resourceVersion) that was read. When two runs try at the same moment, exactly one
    wins; the other gets a conflict, reads the lease again and sees the winner.
  - The layout is that of Kubernetes leader election (C(spec.holderIdentity), C(spec.renewTime),
    C(spec.leaseDurationSeconds), C(spec.acquireTime), C(spec.leaseTransitions)), so C(kubectl get lease -o yaml)
    shows who holds the lock. O(info) is kept in the annotation C(rollout.capi-rollout.dev/lock-info).
author:
  - capi.rollout contributors (@capi-rollout)
options:
  name:
    description:
      - Name of the Lease.
    type: str
    default: capi-rollout-lock
  namespace:
    description:
      - Namespace of the Lease. It must exist.
    type: str
    default: default
  state:
    description:
      - V(acquired) takes or renews the lock, V(released) gives it up.
    type: str
    choices: [acquired, released]
    default: acquired
  holder:
    description:
      - Who holds the lock, for example V(awx-job-4711) or V(alice@laptop/4f2a). It must be the same for every
        call of one run (renewals and the release) and different between runs.
    type: str
    required: true
  lease_duration_seconds:
    description:
      - How long the lock stays valid after each renewal. A run that dies without releasing the lock blocks
        others for at most this long.
      - Renew at least every third of this time. From V(1) to V(86400) (a day).
    type: int
    default: 300
  wait_timeout:
    description:
      - How many seconds to wait for a lock that another holder has. V(0) fails at once; at most V(86400).
      - A positive value bounds every request of the task too, so that an API server that hangs (accepts
        connections, answers nothing) cannot hold the task longer. No request ends more than 5 seconds after
        O(wait_timeout) from the start of the task - the connection and the TLS handshake included. Then the task
        fails with C(reason=unreachable) and names the Lease.
    type: int
    default: 0
  poll_interval:
    description:
      - Seconds between two reads of a lock that another holder has, from V(1) to V(3600).
    type: int
    default: 5
  force:
    description:
      - Take the lock even though another holder's lease is valid. Use it only when that holder is known to be
        dead (for example a cancelled job on a lost execution node) and waiting for its lease to expire is too long.
    type: bool
    default: false
  info:
    description:
      - Facts about this run (for example the refresh id and who started it) that other runs show when they find
        the lock taken. Values are cut to 200 characters.
    type: dict
notes:
  - Needs C(get), C(create) and C(update) on C(leases) in API group C(coordination.k8s.io); see C(docs/rbac.yml).
  - The clocks of the machines that share a lock should agree to well within O(lease_duration_seconds).
extends_documentation_fragment:
  - capi.rollout.connection
  - capi.rollout.objects.attributes
attributes:
  check_mode:
    description: The take or release is sent as a server-side dry run (C(dryRun=All)), so RBAC refusals show, and
      nothing is stored or waited for; RV(acquired) stays false, RV(would_acquire) says whether the lock could be
      taken now and RV(lease) who holds it.
    support: full
  diff_mode:
    description: Nothing to show.
    support: none
seealso:
  - module: capi.rollout.capi_rollout_wait
    description: Renews the lock while it waits.
  - name: Kubernetes Leases
    description: The object this module uses as a lock.
    link: https://kubernetes.io/docs/concepts/architecture/leases/
'''

EXAMPLES = r'''
- name: Take the lock of this management cluster, waiting up to 10 minutes for another run
  capi.rollout.capi_rollout_lock:
    namespace: capi-system
    holder: "awx-job-{{ awx_job_id }}"
    lease_duration_seconds: 300
    wait_timeout: 600
    info:
      refresh_id: hw-2026-11
  register: lock

- name: Renew it between two steps
  capi.rollout.capi_rollout_lock:
    namespace: capi-system
    holder: "awx-job-{{ awx_job_id }}"

- name: Release it
  capi.rollout.capi_rollout_lock:
    namespace: capi-system
    holder: "awx-job-{{ awx_job_id }}"
    state: released

- name: Could we take the lock now? (nothing is written)
  capi.rollout.capi_rollout_lock:
    holder: dry-run
  check_mode: true
  register: probe

- name: Say who has it
  ansible.builtin.debug:
    msg: "{{ probe.message }}"
  when: not probe.would_acquire
'''

RETURN = r'''
changed:
  description: Whether the Lease was (in check mode, would be) written.
  returned: always
  type: bool
  sample: true
action:
  description:
    - What was (would be) done - V(create) (no Lease existed), V(renew) (the holder had it), V(acquire) (it was
      released), V(take_over) (the other holder's lease was stale, or O(force)), V(held) (another holder has it;
      check mode only, otherwise the task fails), V(release), V(not_held) (release asked, another holder or no
      holder has it) or V(absent) (release asked, no Lease).
  returned: always
  type: str
  sample: create
acquired:
  description: Whether O(holder) holds the lock after the task (always false in check mode and after a release).
  returned: always
  type: bool
  sample: true
would_acquire:
  description: Whether the lock could be taken (or renewed) now.
  returned: when O(state=acquired)
  type: bool
  sample: true
holder:
  description: O(holder).
  returned: always
  type: str
  sample: awx-job-4711
held_by:
  description: Who holds the lock after the task; null when nobody does.
  returned: always
  type: str
  sample: awx-job-4711
previous_holder:
  description: Who held the lock before the task (for V(take_over), the holder that lost it).
  returned: always
  type: str
  sample: awx-job-4698
message:
  description: What was done, or who holds the lock.
  returned: always
  type: str
  sample: "lease default/capi-rollout-lock created, held by awx-job-4711"
waited_seconds:
  description: Seconds spent waiting for another holder.
  returned: always
  type: int
  sample: 0
lease:
  description: The lock as read last (before the task's own write), or after a failed wait the other holder's.
  returned: always
  type: dict
  contains:
    exists:
      description: Whether the Lease exists.
      type: bool
    holder:
      description: Its holder; null when released.
      type: str
    held:
      description: Whether it has a holder whose lease has not expired.
      type: bool
    stale:
      description: Whether it has a holder whose lease expired.
      type: bool
    acquire_time:
      description: When the holder took it (UTC).
      type: str
    renew_time:
      description: When it was renewed last (UTC).
      type: str
    expires:
      description: When it expires unless renewed (UTC).
      type: str
    seconds_left:
      description: Seconds until it expires; negative when stale.
      type: int
    lease_duration_seconds:
      description: Its duration.
      type: int
    transitions:
      description: How often the holder changed.
      type: int
    info:
      description: The holder's O(info).
      type: dict
    resource_version:
      description: The Lease's resourceVersion.
      type: str
  sample: {exists: true, holder: awx-job-4698, held: true, stale: false, acquire_time: "2026-03-01T11:00:00Z",
           renew_time: "2026-03-01T11:59:30Z", expires: "2026-03-01T12:04:30Z", seconds_left: 270,
           lease_duration_seconds: 300, transitions: 3, info: {refresh_id: hw-2026-11}, resource_version: "4242"}
progress:
  description: Progress lines of the task; none for the lock (it waits silently, see O(wait_timeout)).
  returned: always
  type: list
  elements: str
  sample: []
server_time:
  description:
    - The API server's clock when the task ended (UTC), read from the C(Date) headers of its answers; null when
      no answer came. The C(capi.rollout.hardware_refresh) role judges the maintenance window by it, not by the
      Ansible host's clock.
  returned: always
  type: str
  sample: "2026-03-01T12:00:05Z"
api_requests:
  description: Number of HTTP requests this task sent to the API server.
  returned: always
  type: int
  sample: 2
problems:
  description: The options refused before any request, one entry each (C(option), C(value), C(reason), C(msg)); the first one's reason is the task's C(reason).
  returned: when an option is refused before any request (the input gate)
  type: list
  elements: dict
'''

from ansible_collections.capi.rollout.plugins.module_utils.flows import args
from ansible_collections.capi.rollout.plugins.module_utils.flows.run import RolloutModule
from ansible_collections.capi.rollout.plugins.module_utils.flows.lock import run_lock


def main():
    module = RolloutModule(
        argument_spec=args.argument_spec(
            args.AUTH_ARG_SPEC, args.LEASE_ARG_SPEC,
            state={"type": "str", "choices": ["acquired", "released"], "default": "acquired"},
            wait_timeout={"type": "int", "default": 0},
            poll_interval={"type": "int", "default": 5},
            force={"type": "bool", "default": False},
            info={"type": "dict"},
        ),
        supports_check_mode=True,
    )
    run_lock(module)


if __name__ == "__main__":
    main()
