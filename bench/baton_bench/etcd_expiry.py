"""When a crashed etcd holder's lease expires, read from etcd itself after the kill.

etcd tells a lease's time left in whole seconds, truncated toward zero: 2 while 2-3 s are
left, 1 while 1-2 s, 0 from 1 s before the expiry until etcd revokes the lease. After the
kill nobody renews the lease, so its expiry is fixed: the harness asks for the time left until
the answer turns from 1 to 0, asking as fast as it can once it says 1. The last question
answered 1 was sent no later than 1 s before the expiry, so that send + 1 s is the earliest the
lease can expire: counted from it, a lag is never shorter than the real one (by at most the
time between that question and the first answer of 0, a millisecond or two), as the Redis
kinds count theirs from before their question.
"""

from __future__ import annotations

import base64
import http.client
import json
import time

NS_PER_S = 1_000_000_000


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _prefix_end(prefix: str) -> str:
    data = bytearray(prefix.encode())
    data[-1] += 1
    return data.decode()


class _gateway:
    """One keep-alive connection to etcd's JSON gateway."""

    def __init__(self, port: int) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2.0)

    def post(self, path: str, body: dict) -> dict:
        self.conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        reply = self.conn.getresponse()
        return json.loads(reply.read() or b"{}")

    def close(self) -> None:
        self.conn.close()


def _lease_of(gw: _gateway, key: str, prefix: bool) -> str | None:
    """The lease of `key`, or of the oldest key under the prefix `key` (a lock's holder)."""
    body = {"key": _b64(key)}
    if prefix:
        body.update({"range_end": _b64(_prefix_end(key)), "sort_order": "ASCEND",
                     "sort_target": "CREATE", "limit": 1})
    kvs = gw.post("/v3/kv/range", body).get("kvs", [])
    lease = kvs[0].get("lease") if kvs else None
    return lease if lease and lease != "0" else None


def expiry_after_kill_ns(port: int, key: str, prefix: bool = False,
                         limit_s: float = 10.0) -> int | None:
    """CLOCK_MONOTONIC ns of the earliest moment the lease on `key` can expire; None when it
    cannot be told (no lease, gone already, or already in its last second at the first
    question)."""
    gw = _gateway(port)
    try:
        lease = _lease_of(gw, key, prefix)
        if lease is None:
            return None
        last_one_sent = None
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            sent = time.monotonic_ns()
            ttl = int(gw.post("/v3/lease/timetolive", {"ID": lease}).get("TTL", 0))
            if ttl < 0:
                return None
            if ttl == 0:
                return None if last_one_sent is None else last_one_sent + NS_PER_S
            if ttl == 1:
                last_one_sent = sent
                continue
            # n >= 2 s left: the answer cannot turn to 0 for n - 1 s.
            wake_ns = min(sent + (ttl - 1) * NS_PER_S, int(deadline * NS_PER_S))
            time.sleep(max(0.0, (wake_ns - time.monotonic_ns()) / NS_PER_S))
        return None
    finally:
        gw.close()
