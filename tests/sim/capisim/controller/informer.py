"""List+watch of one resource into the shared Store, like a client-go informer (one daemon thread per kind).

list -> remember its resourceVersion -> watch from there; every event updates the Store and calls ``on_event``.
A stream the server ends (timeoutSeconds) is resumed from the last seen resourceVersion (bookmarks included);
410 Gone means that version was compacted away, so the kind is listed again. Connection errors back off and retry.
"""

import logging
import threading
import time

from ..kubeapi import ApiError

WATCH_SECONDS = 60

log = logging.getLogger("capisim.controller")


class Informer:
    def __init__(self, api, kind, path, store, on_event, stop):
        self.api, self.kind, self.path = api, kind, path
        self.store, self.on_event, self.stop = store, on_event, stop
        self.synced = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"watch-{kind}", daemon=True)

    def start(self):
        self._thread.start()

    def _list(self):
        listed = self.api.list(self.path)
        items = listed.get("items") or []
        for item in items:
            # Lists carry no kind per item.
            item["kind"] = self.kind
            item.setdefault("apiVersion", listed.get("apiVersion"))
        previous = {(o["metadata"].get("namespace"), o["metadata"]["name"]) for o in self.store.list(self.kind)}
        self.store.replace_kind(self.kind, items, listed["metadata"]["resourceVersion"])
        for item in items:
            self.on_event("SYNC", None, item)
        current = {(o["metadata"].get("namespace"), o["metadata"]["name"]) for o in self.store.list(self.kind)}
        for ns, name in previous - current:
            self.on_event("DELETED", None, {"kind": self.kind, "metadata": {"namespace": ns, "name": name}})
        return listed["metadata"]["resourceVersion"]

    def _run(self):
        backoff = 0.5
        version = None
        while not self.stop.is_set():
            try:
                if version is None:
                    version = self._list()
                    self.synced.set()
                for event_type, obj in self.api.watch(self.path, version, timeout_seconds=WATCH_SECONDS):
                    if self.stop.is_set():
                        return
                    version = obj.get("metadata", {}).get("resourceVersion") or version
                    if event_type == "BOOKMARK":
                        continue
                    self._apply(event_type, obj)
                backoff = 0.5
            except ApiError as err:
                if err.status == 410:
                    log.info("watch %s: resourceVersion %s expired, listing again", self.kind, version)
                    version = None
                    continue
                log.warning("watch %s failed: %s", self.kind, err)
                time.sleep(backoff)
                backoff = min(backoff * 2, 5.0)
            except Exception as err:  # pylint: disable=broad-except  # connection drops: retry like client-go
                if self.stop.is_set():
                    return
                log.warning("watch %s interrupted: %s", self.kind, err)
                time.sleep(backoff)
                backoff = min(backoff * 2, 5.0)
                version = None

    def _apply(self, event_type, obj):
        obj.setdefault("kind", self.kind)
        meta = obj["metadata"]
        if event_type == "DELETED":
            old = self.store.remove(self.kind, meta.get("namespace"), meta["name"])
            self.on_event("DELETED", old, obj)
            return
        old, stored = self.store.upsert(obj)
        if stored is not None:
            self.on_event(event_type, old, obj)
