"""SIGKILL to an ansible-playbook run and every process under it, as when its machine or container dies.

Its process group is not enough: ansible-core's workers start sessions of their own (WorkerProcess._detach,
os.setsid), and they and the module calls they run would go on (an action plugin such as capi_rollout_wait's keeps
calling its module).
"""

import os
import signal


def descendants(pid):
    """The processes below ``pid`` (from /proc), children before their own."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="utf-8") as handle:
                    ppid = int(handle.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(0), []):
            out.append(child)
            todo.append(child)
    return out


def _signal(pid, sig):
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def kill_tree(pid):
    """SIGKILL ``pid`` and its descendants; the tree is frozen first (SIGSTOP) so that none forks meanwhile. The
    caller reaps ``pid``."""
    frozen = []
    for _round in range(2):  # a process forked while the first round ran is caught by the second
        for member in [pid] + descendants(pid):
            if member not in frozen:
                _signal(member, signal.SIGSTOP)
                frozen.append(member)
    for member in frozen:
        _signal(member, signal.SIGKILL)
