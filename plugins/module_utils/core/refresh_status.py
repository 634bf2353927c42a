# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the hardware_refresh role records about a management cluster itself, not about its objects: the status of a
run that stops ({result, failure_reason, next_step}) for the lock, an unexpected failure and a closed window, the
note of a lock not released, the CAPI release gate, a wave's report entry and the counts published to AWX. Each is written
here only (filter rollout_refresh_status); a failed wave's status is report/refresh_steps's, the plan's
core.refresh.stop_after_plan's, and all of them say how to go on with ``rerun``.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re


def rerun(refresh_id):
    """The one wording of how a stopped refresh goes on: the same refresh id continues where a run stopped."""
    return f"re-run with refresh_id {refresh_id}"


def sentence(text):
    """``text`` with its first letter upper-case (the wordings above start sentences too)."""
    return text[:1].upper() + text[1:]


def status(result, failure_reason, next_step):
    """A management cluster's status as the report keeps it (every writer of one builds it here)."""
    return {"result": result, "failure_reason": failure_reason, "next_step": next_step}


def lock_failed(message, refresh_id, lock_duration):
    """Another run holds the lock (or it could not be taken): nothing was changed."""
    return status(
        "failed", f"lock: {message or 'the lock could not be taken'}; nothing was changed",
        "Another run is rolling this management cluster. Let it finish, or set lock_wait_timeout "
        f"(hardware_refresh_lock_wait_timeout) to wait for it; {rerun(refresh_id)} afterwards. If that run is known to be "
        f"dead (killed, its controller gone), its lock goes stale {lock_duration}s after its last renewal and is then "
        "taken over, or set lock_force=true (hardware_refresh_lock_force) to take it at once.")


def task_failed(task_name, failed_result, refresh_id):
    """A task of the role failed outside a wave (the wave's own failures are report/refresh_steps's)."""
    failed_result = failed_result if isinstance(failed_result, dict) else {"msg": str(failed_result)}
    message = failed_result.get("msg", failed_result)
    return status("failed", f"{task_name or 'a task'} failed: {message}",
                  f"Fix the cause, then {rerun(refresh_id)}; it continues where this run stopped.")


def window_closed(not_after, refresh_id, wave=None):
    """The maintenance window closed before the first wave (``wave`` None) or before wave ``wave``."""
    if wave is None:
        return status("stopped_window", f"the maintenance window closed at {not_after}; no wave was started",
                      f"{sentence(rerun(refresh_id))} in the next maintenance window.")
    return status("stopped_window",
                  f"the maintenance window closed at {not_after}; wave {wave} and later waves were not started",
                  f"{sentence(rerun(refresh_id))} in the next maintenance window; it continues with the objects not yet "
                  "switched.")


def lock_not_released(release, refresh_id, lock_duration):
    """The note of a run whose lock was not released at its end (``release``: the release call's result), None when it
    was."""
    release = release or {}
    if release.get("action") == "release":
        return None
    note = f"lock: not released by this run: {release.get('msg') or release.get('message') or 'unknown error'}"
    if release.get("failed"):
        note += f"; it stays held until it goes stale after {lock_duration}s, or a {rerun(refresh_id)} takes it over"
    return note


def _release(text):
    """(major, minor, patch) of a Cluster API release such as ``v1.10.3`` or ``1.11.0-rc.1``; None when it is none."""
    found = re.match(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-+].*)?$", str(text).strip())
    return tuple(int(part or 0) for part in found.groups()) if found else None


def capi_version_blockers(capi_version, minimum):
    """The blocker of a management cluster whose Cluster API release (host variable ``capi_version``; not set: no
    blocker, the release is then only known once read) is older than ``minimum`` or is no release at all."""
    if capi_version is None or str(capi_version).strip() == "":
        return []
    if _release(capi_version) is None:
        return [f"capi_version {capi_version!r} of this host is no Cluster API release (like v1.10.3): set it right, or "
                "leave it unset"]
    if _release(capi_version) < (_release(minimum) or (0, 0, 0)):
        return [f"CAPI {capi_version} is older than {minimum}, the oldest release this role supports"]
    return []


def wave_entry(wave, started, wait, result, soak_seconds, now):
    """The report entry of a wave that ran (``result`` succeeded or failed), from the registered result of its wait
    (``wait``, {} when it did not run); ``now`` stands in for the end of a wave that failed before its wait ended."""
    wait = wait or {}
    entry = {"index": wave.get("index"), "name": wave.get("name"), "objects": wave.get("objects"), "started": started,
             "rollout_finished": wait.get("rollout_finished"), "finished": wait.get("ended") or now, "result": result}
    if result == "succeeded":
        entry["soak_finished"] = wait.get("soak_finished") if int(soak_seconds or 0) > 0 else None
    return entry
