# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""capi_rollout_lock: the lock of a management cluster over the API. Read the Lease, plan with core.lease, write with the
resourceVersion that was read. A conflict (409: another writer won, or the Lease was created meanwhile)
means reading again and planning again, so the loser of a race sees the winner.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.client.errors import ApiError, TransportError, api_error, transport_error
from ansible_collections.capi.rollout.plugins.module_utils.client.requests import resource_path
from ansible_collections.capi.rollout.plugins.module_utils.core import inputs
from ansible_collections.capi.rollout.plugins.module_utils.core import lease as leases
from ansible_collections.capi.rollout.plugins.module_utils.core import settings
from ansible_collections.capi.rollout.plugins.module_utils.core.errors import RolloutError
from ansible_collections.capi.rollout.plugins.module_utils.flows.run import Run

RESOURCE = {"group": leases.GROUP, "plural": leases.PLURAL}
# Conflicts in a row before giving up (each one means another writer won a race).
MAX_CONFLICTS = 5


class LockFailed(RolloutError):
    """The lock could not be taken (held by another holder after the wait, or endless conflicts);
    ``result`` holds the module result fields."""

    def __init__(self, msg, result, reason, hint=None):
        super(LockFailed, self).__init__(msg, hint=hint, reason=reason)
        self.result = result


class Lock(object):
    """One Lease on one API server."""

    def __init__(self, api, name, namespace, now=None, sleep=None, clock=None):
        self.api = api
        self.name = name
        self.namespace = namespace
        # Server time by default: holders on hosts whose clocks disagree must agree on staleness.
        self.now = now or api.server_now
        # the API's pauses and monotonic clock by default: the wait for another holder and the deadline of the requests
        # are measured alike
        self.sleep = sleep or api.sleep
        self.clock = clock or api.clock_seconds
        self.collection = resource_path(leases.GROUP, leases.VERSION, leases.PLURAL, namespace)
        self.path = resource_path(leases.GROUP, leases.VERSION, leases.PLURAL, namespace, name)
        self.ref = f"lease/{namespace}/{name}"

    def _error(self, err, verb):
        return api_error(err, ref=self.ref, verb=verb, resource=RESOURCE, namespace=self.namespace, host=self.api.host)

    def read(self):
        try:
            return self.api.get(self.path)
        except ApiError as err:
            if err.status == 404:
                return None
            raise self._error(err, "get")

    def write(self, plan):
        """Create or update; None when another writer won the race (409), else the written Lease."""
        if plan["action"] == leases.CREATE:
            method, path, verb = "POST", self.collection, "create"
        else:
            method, path, verb = "PUT", self.path, "update"
        try:
            if verb == "create" and not self.api.dry_run:
                # A Lease is created once per management cluster: a dry run first finds a missing namespace
                # (404) without a write that fails.
                self.api.request(method, path, body=plan["body"], verb=verb, dry_run=True)
            return self.api.request(method, path, body=plan["body"], verb=verb)
        except ApiError as err:
            if err.status == 409:
                return None
            if err.status == 404 and verb == "create":
                raise RolloutError(f"namespace {self.namespace} does not exist", ref=self.ref, reason="not_found",
                                   hint="give the namespace of the lock (it must exist), for example the one of the "
                                        "Cluster objects")
            raise self._error(err, verb)

    @staticmethod
    def _result(plan, holder, **extra):
        out = {"changed": False, "action": plan["action"], "holder": holder, "held_by": plan["view"]["holder"],
               "previous_holder": plan.get("previous_holder", plan["view"]["holder"]), "message": plan["message"],
               "lease": plan["view"], "waited_seconds": 0, "acquired": False}
        out.update(extra)
        return out

    def acquire(self, holder, duration, wait_timeout=0, poll_interval=5, force=False, info=None, check_mode=False):
        """Take or renew the lock for ``holder``; returns the result fields, raises LockFailed."""
        started = self.clock()
        deadline = started + max(wait_timeout or 0, 0)
        conflicts = 0
        while True:
            plan = leases.plan_acquire(self.read(), holder, self.now(), duration, name=self.name, namespace=self.namespace,
                                       force=force, info=info)
            waited = int(self.clock() - started)
            if check_mode:
                could = plan["action"] != leases.HELD
                if could and self.write(plan) is None:
                    conflicts += 1
                    if conflicts < MAX_CONFLICTS:
                        continue
                    could = False
                state = leases.describe(plan["view"], self.name, self.namespace)
                return self._result(plan, holder, changed=could, would_acquire=could, waited_seconds=waited,
                                    message=f"{state}; {holder} {'could' if could else 'could not'} take it now (check mode)")
            if plan["action"] == leases.HELD:
                left = deadline - self.clock()
                if left <= 0:
                    stale_in = max(plan["view"]["seconds_left"] or 0, 0)
                    raise LockFailed(
                        f"{plan['message']}; waited {waited}s",
                        self._result(plan, holder, would_acquire=False, waited_seconds=waited), "lock_held",
                        hint="another run is rolling this management cluster; wait for it to finish, or raise wait_timeout. "
                             f"If that run is known to be dead, its lock goes stale {stale_in}s from now (or use force=true)")
                self.sleep(min(max(poll_interval or 1, 1), left))
                continue
            if self.write(plan) is None:
                conflicts += 1
                if conflicts >= MAX_CONFLICTS:
                    raise LockFailed(f"{self.ref}: kept changing while taking the lock ({conflicts} conflicts)",
                                     self._result(plan, holder, would_acquire=False, waited_seconds=waited), "conflict",
                                     hint="run the task again")
                continue
            return self._result(plan, holder, changed=True, acquired=True, would_acquire=True, held_by=holder,
                                waited_seconds=waited)

    def release(self, holder, check_mode=False):
        """Give the lock up if ``holder`` holds it; returns the result fields."""
        conflicts = 0
        while True:
            plan = leases.plan_release(self.read(), holder, self.now(), name=self.name, namespace=self.namespace)
            if plan["action"] != leases.RELEASE:
                return self._result(plan, holder)
            if self.write(plan) is not None:
                if check_mode:
                    return self._result(plan, holder, changed=True)
                return self._result(plan, holder, changed=True, held_by=None, previous_holder=holder)
            conflicts += 1
            if conflicts >= MAX_CONFLICTS:
                raise LockFailed(f"{self.ref}: kept changing while releasing the lock", self._result(plan, holder),
                                 "conflict", hint="run the task again")


def probe(run, name, namespace, holder, duration):
    """What capi_rollout_lock in check mode says of the Lease: whether ``holder`` could take it now (``duration``
    checked by the caller's input gate). A lock that cannot be read is described (``failed``, ``msg``, ``reason``,
    ``hint``), not raised: the caller goes on without."""
    try:
        return Lock(run.api, name, namespace).acquire(holder, duration, check_mode=True)
    except (RolloutError, ApiError, TransportError) as err:
        return dict(run.error(err).to_dict(), failed=True)


def renew(run, lease):
    """Renew ``lease`` (the ``lease`` option of a writing module: name, namespace, holder, lease_duration_seconds)
    before the module writes anything - a wave's writes are guarded by the lock as a separate capi_rollout_lock
    call would guard them, without its module start. Raises RolloutError (reason lock_lost) when another holder has
    it now, so nothing is written; in check mode the renewal is a dry run and fails the same way. Its duration is
    checked by the caller's input gate (the ranges of core.settings)."""
    lock = Lock(run.api, lease["name"], lease["namespace"])
    check_mode = run.module.check_mode
    try:
        result = lock.acquire(lease["holder"], lease["lease_duration_seconds"], check_mode=check_mode)
    except LockFailed as err:
        result = dict(err.result, message=err.msg)
    if not result.get("would_acquire"):
        raise RolloutError(f"lost the lock: {result.get('message')}; nothing was written", ref=lock.ref, reason="lock_lost",
                           hint=f"another run holds the lock of this management cluster now ({result.get('held_by')}); "
                                "let it finish, then re-run")
    return result


def _holder(params):
    if not str(params["holder"]).strip():
        return [inputs.Problem("holder", params["holder"], inputs.INVALID_HOLDER,
                               f"holder must not be empty, got {settings.shown(params['holder'])}: give who takes the lock "
                               "(the run's name, shown to any other run that finds it held)")]
    return []


def _duration(params):
    try:
        leases.validate_duration(params["lease_duration_seconds"])
    except ValueError as err:
        return [inputs.Problem("lease_duration_seconds", params["lease_duration_seconds"], inputs.INVALID_DURATION, str(err))]
    return []


# the holder, the duration, the settings' ranges with the lock's own wait_timeout (core.inputs)
GATE = inputs.Gate((_holder, _duration, inputs.bounds(settings.LOCK_BOUNDS)))


def run_lock(module):
    """The whole capi_rollout_lock task."""
    params = module.params
    run = Run(module, GATE)
    waits = params["state"] == "acquired" and params["wait_timeout"] > 0
    run.connect(wait=(params["wait_timeout"], f"wait_timeout={params['wait_timeout']}s") if waits else None)
    lock = Lock(run.api, params["name"], params["namespace"])
    try:
        if params["state"] == "released":
            result = lock.release(params["holder"], check_mode=module.check_mode)
        else:
            result = lock.acquire(params["holder"], params["lease_duration_seconds"], wait_timeout=params["wait_timeout"],
                                  poll_interval=params["poll_interval"], force=params["force"], info=params["info"],
                                  check_mode=module.check_mode)
    except LockFailed as err:
        module.fail_json(**run.result(msg=err.msg, reason=err.reason, hint=err.hint, **err.result))
    except TransportError as err:
        run.fail(transport_error(err, what=lock.ref), changed=False, acquired=False)
    except (RolloutError, ApiError) as err:
        run.fail(err, changed=False, acquired=False)
    module.exit_json(**run.result(**result))
