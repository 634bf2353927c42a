"""The informer cache: the latest known version of every watched object, shared by watch threads and the worker.

Writes by the controller are put here as soon as the API answers (write-through), so the next reconcile sees what
this process just did even before the watch event arrives; that is what keeps a freshly created MachineSet from
being created twice (the upstream multiple-MachineSets bug, #12551). Events older than the cached version are
ignored (resourceVersions of one etcd compare as integers).
"""

import threading

from . import model as m


def _rv(obj):
    try:
        return int(m.resource_version(obj) or 0)
    except ValueError:
        return 0


class Store:
    def __init__(self):
        self._lock = threading.Lock()
        self._kinds = {}

    def upsert(self, obj):
        """Store ``obj`` unless an equal-or-newer version is cached; returns (previous, stored_or_None)."""
        key = (m.namespace(obj), m.name(obj))
        with self._lock:
            items = self._kinds.setdefault(obj["kind"], {})
            previous = items.get(key)
            if previous is not None and _rv(previous) > _rv(obj):
                return previous, None
            items[key] = obj
            return previous, obj

    def remove(self, kind, ns, name):
        with self._lock:
            return self._kinds.get(kind, {}).pop((ns, name), None)

    def replace_kind(self, kind, objects, list_version):
        """A fresh list (initial sync or after 410 Gone) replaces what is known about a kind, except objects this
        process wrote after the list's snapshot was taken (a list racing a create must not hide the new object)."""
        with self._lock:
            newer = {k: o for k, o in self._kinds.get(kind, {}).items() if _rv(o) > int(list_version or 0)}
            self._kinds[kind] = {(m.namespace(o), m.name(o)): o for o in objects}
            self._kinds[kind].update(newer)

    def get(self, kind, ns, name):
        with self._lock:
            return self._kinds.get(kind, {}).get((ns, name))

    def list(self, kind, ns=None):
        with self._lock:
            items = list(self._kinds.get(kind, {}).values())
        return [o for o in items if ns is None or m.namespace(o) == ns]

    def controlled_by(self, kind, owner):
        """Objects of ``kind`` in the owner's namespace whose controller ownerReference is ``owner``."""
        return [o for o in self.list(kind, m.namespace(owner)) if m.is_controlled_by(o, owner)]

    def by_uid(self, kind, ns, uid):
        return next((o for o in self.list(kind, ns) if m.uid(o) == uid), None)

    def controller_of(self, obj, kind):
        """The cached controller owner of ``obj`` when it is of ``kind``."""
        ref = m.controller_ref(obj)
        if not ref or ref.get("kind") != kind:
            return None
        return self.by_uid(kind, m.namespace(obj), ref.get("uid"))
