# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of capi_rollout_wait: run the module in slices and print its progress in between.

A module cannot write to the job output while it runs. This plugin calls the module repeatedly
(each call waits at most ``progress_interval`` seconds, and returns early when an object's state
changed, after gathering the changes of a few more seconds: client.waiter.PROGRESS_GATHER_SECONDS),
prints the new progress lines as they come - or, after a call without any, a heartbeat line
saying what is still waited for, so a job's output never sits silent for a whole ``stall_timeout`` -
and carries the wait state (``tracking``) and the time the wait has left (``time_left``, by the API
server's clock, less the time since the call returned) from one call to the next: every request of a
later call ends by the wait's end (plus a grace), as those of the first. The lock (``lease``) is renewed
by the module, in the first call and in the next call after every third of the lease's duration, so its
renewal is bounded by the same deadline.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime
import time

from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.capi.rollout.plugins.module_utils.core import settings

display = Display()

WAIT_MODULE = "capi.rollout.capi_rollout_wait"
# Calls in a row that return neither progress nor a finished wait before giving up (a safety net
# against a module that keeps returning at once).
MAX_IDLE_CALLS = 100000


class ActionModule(ActionBase):

    TRANSFERS_FILES = False

    def _show(self, host, lines, verbosity):
        if display.verbosity < verbosity:
            return
        for line in lines:
            display.display(f"{host} | {line}")

    @staticmethod
    def heartbeat(out):
        """One line for a call that brought no progress: how many objects are done, what the first other waits for."""
        resources = out.get("resources") or []
        waiting = [entry for entry in resources if not entry.get("done")]
        # the API server's time, as every time the wait reports; the Ansible host's only when it never answered
        stamp = out.get("server_time") or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        text = f"{stamp} still waiting ({out.get('phase') or 'rollout'}): {len(resources) - len(waiting)} of {len(resources)} complete"
        if waiting:
            text += f"; {waiting[0].get('message') or waiting[0].get('ref')}"
        return text

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        task_vars = task_vars or {}
        task_args = dict(self._task.args)
        host = task_vars.get("inventory_hostname", "localhost")
        # options that are not whole numbers go to the module as given: it refuses them, naming them, before any request
        verbosity = settings.whole_number(task_args.get("progress_verbosity")) or 0
        lease = task_args.get("lease") if isinstance(task_args.get("lease"), dict) else None
        interval = settings.whole_number(task_args.get("progress_interval", 60))
        duration = settings.whole_number((lease or {}).get("lease_duration_seconds", 300))
        renew_every = None
        if lease and lease.get("holder") and duration is not None and duration >= 1:
            renew_every = max(duration / 3.0, 1.0)
            if interval is not None and interval >= 1:
                task_args["progress_interval"] = max(1, min(interval, int(renew_every)))

        progress = []
        deleted = []  # the Machines of OnDelete pools each call deleted (on_delete=replace)
        requests = 0
        renewals = 0
        tracking = task_args.pop("tracking", None)
        time_left = task_args.pop("time_left", None)
        last_renewal = None
        calls = 0
        while True:
            module_args = dict(task_args, tracking=tracking, time_left=time_left)
            called = time.monotonic()
            renew = renew_every is not None and (last_renewal is None or called - last_renewal >= renew_every)
            if lease and not renew and calls:
                module_args.pop("lease")  # renewed by an earlier call, less than a third of its duration ago
            out = self._execute_module(module_name=WAIT_MODULE, module_args=module_args, task_vars=task_vars)
            returned = time.monotonic()
            calls += 1
            lines = list(out.get("progress") or [])
            self._show(host, lines or ([] if out.get("failed") or out.get("finished_call", True) else [self.heartbeat(out)]),
                       verbosity)
            progress.extend(lines)
            deleted.extend(out.get("deleted") or [])
            requests += int(out.get("api_requests") or 0)
            if out.get("lease_renewals"):
                renewals += int(out["lease_renewals"])
                last_renewal = called
            if out.get("failed") or out.get("finished_call", True) or calls >= MAX_IDLE_CALLS:
                break
            tracking = out.get("tracking")
            if out.get("time_left") is not None:
                time_left = float(out["time_left"]) - (time.monotonic() - returned)
        out["progress"] = progress
        out["api_requests"] = requests
        out["lease_renewals"] = renewals
        out["deleted"] = deleted
        out["changed"] = bool(deleted) or bool(out.get("drain_timeouts_restored"))
        out.pop("tracking", None)
        out["tracking"] = {}
        result.update(out)
        return result
