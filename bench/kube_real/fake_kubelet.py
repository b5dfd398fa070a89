"""Plays the kubelet of every fake Node for the real-cluster benchmark.

No kubelet runs here: Nodes are plain API objects. This watches the pods of one
namespace and does what a kubelet would visibly do to the API:
  - a pod bound to a node (spec.nodeName set) and still Pending is reported Running
    and Ready (status subresource, as the kubelet's status manager writes it);
  - a pod being deleted gracefully (deletionTimestamp set) is deleted for good with
    gracePeriodSeconds=0 and a uid precondition, as the kubelet does once its
    containers have stopped.
It also records when each pod was first seen bound (the benchmark's clock).
Writes go through a bounded pool of worker threads, one keep-alive connection each.
"""

import datetime
import queue
import threading
import time

from kube_http import ApiError


def _now_rfc3339():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class FakeKubelet:
    def __init__(self, client, namespace, workers=8, watch_seconds=240):
        self.client = client
        self.path = "/api/v1/namespaces/%s/pods" % namespace
        self.workers = workers
        self.watch_seconds = watch_seconds
        self.lock = threading.Lock()
        self.stop_event = threading.Event()
        self.work = queue.Queue()
        self.queued = set()        # (uid, action) waiting or in flight
        self.bound_at = {}         # uid -> time.monotonic() first seen bound
        self.live = {}             # uid -> (name, nodeName, phase, deleting)
        self.running = set()       # uids this kubelet reported Running
        self.errors = 0
        self.last_error = ""
        self.threads = []
        self.synced = threading.Event()

    # --- public -----------------------------------------------------------------
    def start(self):
        t = threading.Thread(target=self._watch_loop, name="kubelet-watch", daemon=True)
        self.threads.append(t)
        for i in range(self.workers):
            self.threads.append(threading.Thread(target=self._worker, name="kubelet-%d" % i,
                                                 daemon=True))
        for t in self.threads:
            t.start()
        if not self.synced.wait(120):
            raise TimeoutError("fake kubelet: the first pod LIST did not finish in 120 s")

    def stop(self):
        self.stop_event.set()
        for _ in range(self.workers):
            self.work.put(None)
        for t in self.threads:
            t.join(timeout=self.watch_seconds + 40 if t.name == "kubelet-watch" else 30)

    def counts(self):
        """(pods ever bound, pods now existing, bound pods now Running, time the
        bound count last grew)."""
        with self.lock:
            live = len(self.live)
            running = sum(1 for p in self.live.values() if p[2] == "Running")
            last = max(self.bound_at.values()) if self.bound_at else None
            return len(self.bound_at), live, running, last

    def bound_times(self):
        with self.lock:
            return sorted(self.bound_at.values())

    # --- watch ------------------------------------------------------------------
    def _watch_loop(self):
        while not self.stop_event.is_set():
            try:
                items, rv = self.client.list_all(self.path)
                with self.lock:
                    seen = set()
                    for pod in items:
                        seen.add(pod["metadata"]["uid"])
                        self._observe_locked("MODIFIED", pod)
                    for uid in list(self.live):
                        if uid not in seen:
                            del self.live[uid]
                self.synced.set()
                for event in self.client.watch(self.path, rv, self.watch_seconds,
                                               self.stop_event):
                    kind = event.get("type")
                    if kind == "ERROR":  # 410 Gone and the like: relist
                        break
                    if kind == "BOOKMARK":
                        continue
                    with self.lock:
                        self._observe_locked(kind, event["object"])
            except Exception as e:  # noqa: BLE001 - keep watching; counted and reported
                self._error("watch: %s" % e)
                self.stop_event.wait(1.0)

    def _observe_locked(self, kind, pod):
        meta, spec, status = pod["metadata"], pod.get("spec", {}), pod.get("status", {})
        uid = meta["uid"]
        if kind == "DELETED":
            self.live.pop(uid, None)
            return
        node = spec.get("nodeName", "")
        phase = status.get("phase", "Pending")
        deleting = "deletionTimestamp" in meta
        self.live[uid] = (meta["name"], node, phase, deleting)
        if node and uid not in self.bound_at:
            self.bound_at[uid] = time.monotonic()
        if deleting and node:
            self._enqueue_locked(uid, "delete", meta["name"])
        elif node and phase == "Pending" and uid not in self.running:
            self._enqueue_locked(uid, "run", (meta["name"], node, pod.get("spec", {})))

    def _enqueue_locked(self, uid, action, arg):
        if (uid, action) in self.queued:
            return
        self.queued.add((uid, action))
        self.work.put((uid, action, arg))

    # --- writes -----------------------------------------------------------------
    def _worker(self):
        while True:
            item = self.work.get()
            if item is None:
                return
            uid, action, arg = item
            try:
                if action == "run":
                    self._report_running(uid, *arg)
                else:
                    self._delete(uid, arg)
            except Exception as e:  # noqa: BLE001 - one pod's failure must not stop the rest
                self._error("%s %s: %s" % (action, uid, e))
            finally:
                with self.lock:
                    self.queued.discard((uid, action))

    def _report_running(self, uid, name, node, spec):
        now = _now_rfc3339()
        containers = [{"name": c["name"], "image": c.get("image", ""), "imageID": "",
                       "ready": True, "started": True, "restartCount": 0,
                       "state": {"running": {"startedAt": now}}}
                      for c in spec.get("containers", [])]
        conditions = [{"type": t, "status": "True", "lastTransitionTime": now}
                      for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")]
        patch = {"metadata": {"uid": uid},
                 "status": {"phase": "Running", "startTime": now, "hostIP": "127.0.0.1",
                            "conditions": conditions, "containerStatuses": containers}}
        try:
            self.client.merge_patch("%s/%s/status" % (self.path, name), patch)
        except ApiError as e:
            if e.status in (404, 409):  # gone, or a newer pod of the same name
                return
            raise
        with self.lock:
            self.running.add(uid)

    def _delete(self, uid, name):
        body = {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0,
                "preconditions": {"uid": uid}}
        try:
            self.client.delete("%s/%s" % (self.path, name), body)
        except ApiError as e:
            if e.status != 409:  # the uid precondition failed: a newer pod of that name
                raise

    def _error(self, message):
        with self.lock:
            self.errors += 1
            self.last_error = message
