# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type


class ModuleDocFragment(object):
    # The lock a writing module renews before its first request, as the hardware_refresh role's waves do.
    DOCUMENTATION = r'''
options:
  lease:
    description:
      - The lock of the management cluster, as given to M(capi.rollout.capi_rollout_lock) - renewed for
        O(lease.holder) before anything is read or written, as a C(capi_rollout_lock) task just before would renew it,
        without a module start of its own (2 requests). M(capi.rollout.capi_rollout_wait) also renews it while it
        waits, every third of O(lease.lease_duration_seconds).
      - When another holder has a valid lease now (it took the lock over, or forced it), the task fails with
        C(reason=lock_lost) and nothing is written; a free or stale lease is taken. In check mode the renewal is a
        server-side dry run and fails the same way.
    type: dict
    suboptions:
      name:
        description: Name of the Lease.
        type: str
        default: capi-rollout-lock
      namespace:
        description: Namespace of the Lease.
        type: str
        default: default
      holder:
        description: The holder that holds the lock.
        type: str
        required: true
      lease_duration_seconds:
        description: Lease duration written at the renewal, from V(1) to V(86400) seconds.
        type: int
        default: 300
'''
