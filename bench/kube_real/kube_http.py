"""A small Kubernetes REST client for the real-cluster benchmark (stdlib only).

One keep-alive HTTPS connection per thread (what client-go does per host), a bearer
token, the cluster CA. Every request has a timeout and at most a few retries on a
dropped connection; watches are bounded by the server-side timeoutSeconds and a
socket timeout, so nothing here can hang the benchmark.
"""

import http.client
import json
import socket
import ssl
import threading
import time
import urllib.parse


class ApiError(Exception):
    def __init__(self, method, path, status, body):
        self.status = status
        self.body = body
        message = body.get("message", "") if isinstance(body, dict) else str(body)[:300]
        super().__init__("%s %s: HTTP %d %s" % (method, path, status, message))


class Client:
    def __init__(self, server, token, ca_file, timeout=60.0):
        url = urllib.parse.urlsplit(server)
        self.host, self.port = url.hostname, url.port or 443
        self.token = token
        self.timeout = timeout
        self.context = ssl.create_default_context(cafile=ca_file)
        self.local = threading.local()

    def _connect(self, timeout):
        return http.client.HTTPSConnection(self.host, self.port, timeout=timeout,
                                           context=self.context)

    def _connection(self):
        conn = getattr(self.local, "conn", None)
        if conn is None:
            conn = self._connect(self.timeout)
            self.local.conn = conn
        return conn

    def _drop(self):
        conn = getattr(self.local, "conn", None)
        if conn is not None:
            conn.close()
        self.local.conn = None

    def request(self, method, path, body=None, content_type="application/json", query=None,
                allow=(404,)):
        """Returns (status, decoded body). Statuses in `allow` are returned, any other
        non-2xx raises ApiError. A dropped keep-alive connection is retried twice."""
        if query:
            path = path + "?" + urllib.parse.urlencode(query)
        data = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": "Bearer " + self.token, "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = content_type
        for attempt in range(3):
            try:
                conn = self._connection()
                conn.request(method, path, body=data, headers=headers)
                response = conn.getresponse()
                raw = response.read()
                break
            except (http.client.HTTPException, OSError):
                self._drop()
                if attempt == 2:
                    raise
                time.sleep(0.2 * (attempt + 1))
        try:
            decoded = json.loads(raw) if raw else None
        except ValueError:
            decoded = raw.decode(errors="replace")
        if 200 <= response.status < 300 or response.status in allow:
            return response.status, decoded
        raise ApiError(method, path, response.status, decoded)

    def get(self, path, query=None):
        return self.request("GET", path, query=query)

    def create(self, path, obj):
        return self.request("POST", path, obj, allow=(409,))

    def merge_patch(self, path, patch):
        return self.request("PATCH", path, patch, content_type="application/merge-patch+json")

    def delete(self, path, body=None, query=None):
        return self.request("DELETE", path, body, query=query)

    def list_all(self, path, limit=500, max_pages=1000):
        """LIST with pagination; returns (items, resourceVersion)."""
        items, token = [], None
        for _ in range(max_pages):
            query = {"limit": limit}
            if token:
                query["continue"] = token
            _, page = self.get(path, query)
            items.extend(page.get("items", []))
            token = page.get("metadata", {}).get("continue")
            if not token:
                return items, page["metadata"].get("resourceVersion", "")
        raise RuntimeError("LIST %s: more than %d pages" % (path, max_pages))

    def watch(self, path, resource_version, timeout_seconds=300, stop=None):
        """Yields watch events (dicts) until the server ends the watch after
        timeout_seconds, the connection drops, or `stop` (an Event) is set."""
        query = {"watch": "1", "resourceVersion": resource_version,
                 "timeoutSeconds": str(int(timeout_seconds)), "allowWatchBookmarks": "true"}
        conn = self._connect(timeout=timeout_seconds + 30)
        try:
            conn.request("GET", path + "?" + urllib.parse.urlencode(query),
                         headers={"Authorization": "Bearer " + self.token,
                                  "Accept": "application/json"})
            response = conn.getresponse()
            if response.status != 200:
                raise ApiError("WATCH", path, response.status, response.read()[:300])
            while stop is None or not stop.is_set():
                line = response.readline()
                if not line:
                    return
                if line.strip():
                    yield json.loads(line)
        except (socket.timeout, http.client.HTTPException, ConnectionError):
            return
        finally:
            conn.close()


def wait_for(predicate, timeout, what, interval=0.2):
    """Polls predicate() until true; raises TimeoutError naming `what`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise TimeoutError("timed out after %.0f s waiting for %s" % (timeout, what))
