"""When a crashed ZooKeeper holder's node goes, seen by watches of the harness's own.

A ZooKeeper lease has no expiry to read: the holder's ephemeral node lives until the server
expires its session. So the harness opens two sessions of its own before the kill, sets an
exists watch on the holder's node from each (baton: the lease node; kazoo: the lowest node of
the recipe's queue) and, after the kill, waits for the server's NodeDeleted notification. The
moment the first is read, on the harness's CLOCK_MONOTONIC, stands for the deletion: the
candidates' watches hear of it about then, so the lag after it is what a candidate spends from
its wake-up to its worker's start line, for baton and kazoo alike. It is an upper bound: a
notification read late (the server tells its watchers one after another; a busy machine) makes
a lag look shorter, by as much.

It speaks ZooKeeper's client protocol itself (jute: big-endian, length-prefixed frames), the
few requests it needs: connect, getChildren, exists with a watch, close.
"""

from __future__ import annotations

import select
import socket
import struct
import time

from .redis_server import harness_error

# Request types and the notifications' xid.
_EXISTS = 3
_GET_CHILDREN = 8
_CLOSE = -11
_NOTIFICATION_XID = -1
_PING_XID = -2
# Watch event types and error codes.
_NODE_DELETED = 2
_ZOK = 0
_ZNONODE = -101
# The harness's session: long enough that it needs no pings during a takeover.
_SESSION_MS = 30000


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack(">i", len(data)) + data


class _reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def int32(self) -> int:
        (value,) = struct.unpack_from(">i", self.data, self.at)
        self.at += 4
        return value

    def int64(self) -> int:
        (value,) = struct.unpack_from(">q", self.data, self.at)
        self.at += 8
        return value

    def string(self) -> str:
        size = self.int32()
        text = self.data[self.at:self.at + max(size, 0)].decode(errors="replace")
        self.at += max(size, 0)
        return text


class zookeeper_watch:
    """One session on 127.0.0.1:port and a watch on the node a holder keeps."""

    def __init__(self, port: int, timeout_s: float = 5.0) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout_s)
        self.xid = 0
        self.path = ""
        self._send(struct.pack(">iqiq", 0, 0, _SESSION_MS, 0) + struct.pack(">i", 16) +
                   bytes(16) + b"\x00")
        reply = _reader(self._frame())
        reply.int32()  # protocol version
        if reply.int32() <= 0:
            raise harness_error(f"zookeeper 127.0.0.1:{port} refused the harness's session")

    def _send(self, body: bytes) -> None:
        self.sock.sendall(struct.pack(">i", len(body)) + body)

    def _frame(self) -> bytes:
        size = struct.unpack(">i", self._exactly(4))[0]
        return self._exactly(size)

    def _exactly(self, size: int) -> bytes:
        chunks = []
        while size > 0:
            data = self.sock.recv(size)
            if not data:
                raise harness_error("zookeeper closed the harness's watch connection")
            chunks.append(data)
            size -= len(data)
        return b"".join(chunks)

    def _call(self, kind: int, body: bytes) -> _reader:
        """A request's answer (its header read: xid, zxid, err), notifications on the way noted."""
        self.xid += 1
        self._send(struct.pack(">ii", self.xid, kind) + body)
        while True:
            reply = _reader(self._frame())
            xid = reply.int32()
            reply.int64()
            err = reply.int32()
            if xid in (_NOTIFICATION_XID, _PING_XID):
                # Before a (re)arm's answer: about the watch this request replaces.
                continue
            if xid != self.xid:
                raise harness_error(f"zookeeper answered xid {xid}, expected {self.xid}")
            reply.err = err  # type: ignore[attr-defined]
            return reply

    def children(self, path: str) -> list[str]:
        reply = self._call(_GET_CHILDREN, _string(path) + b"\x00")
        if reply.err != _ZOK:  # type: ignore[attr-defined]
            return []
        return [reply.string() for _ in range(reply.int32())]

    def watch(self, path: str) -> bool:
        """Sets an exists watch on `path`; False when the node is not there."""
        self.path = path
        reply = self._call(_EXISTS, _string(path) + b"\x01")
        err = reply.err  # type: ignore[attr-defined]
        if err not in (_ZOK, _ZNONODE):
            raise harness_error(f"zookeeper exists {path}: error {err}")
        return err == _ZOK

    def read_event(self) -> int | None:
        """Reads one frame (the socket is readable): when it tells the watched node's
        deletion, the moment it was read (CLOCK_MONOTONIC ns), else None. A change of the
        node's data (a renewal before the kill) consumes the one-shot watch: it is set again;
        a node gone by then dates its deletion to that answer."""
        self.sock.settimeout(5.0)
        reply = _reader(self._frame())
        seen = time.monotonic_ns()
        xid = reply.int32()
        reply.int64()
        reply.int32()
        if xid != _NOTIFICATION_XID:
            return None
        kind = reply.int32()
        reply.int32()
        if reply.string() != self.path:
            return None
        if kind == _NODE_DELETED:
            return seen
        if not self.watch(self.path):
            return time.monotonic_ns()
        return None
    def close(self) -> None:
        try:
            self.sock.settimeout(1.0)
            self.xid += 1
            self._send(struct.pack(">ii", self.xid, _CLOSE))
        except OSError:
            pass
        self.sock.close()


class zookeeper_watches:
    """Two sessions watching the same node, the earlier notification counting: the server
    tells a deletion to its watchers one after another, and in a trial run one watcher heard
    it 17 ms after a candidate had (a server thread preempted on a busy 2-core machine)."""

    def __init__(self, port: int, path_of) -> None:
        """`path_of(watch)`: the node to watch, found on that session (None: no such node)."""
        self.watches: list[zookeeper_watch] = []
        try:
            for _ in range(2):
                watch = zookeeper_watch(port)
                self.watches.append(watch)
                path = path_of(watch)
                if path is None or not watch.watch(path):
                    raise harness_error(f"no node to watch before the kill ({path})")
        except BaseException:
            self.close()
            raise

    def deleted_ns(self, timeout_s: float) -> int | None:
        """When the first watch heard the node's deletion; None when it did not go within
        `timeout_s`."""
        end = time.monotonic() + timeout_s
        socks = {watch.sock: watch for watch in self.watches}
        while (left := end - time.monotonic()) > 0:
            ready, _, _ = select.select(list(socks), [], [], left)
            for sock in ready:
                seen = socks[sock].read_event()
                if seen is not None:
                    return seen
        return None

    def close(self) -> None:
        for watch in self.watches:
            watch.close()
