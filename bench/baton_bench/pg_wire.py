"""A minimal PostgreSQL client (protocol 3, trust authentication), standard library only.

The harness needs a few queries against the throwaway server it started itself
(the lease's remaining time, CPU-free counters), so, as with Redis, it speaks
the protocol instead of depending on a driver. Only the simple query protocol
is used; every value comes back as text (or None for NULL). An ErrorResponse
raises pg_error with the server's message.
"""

from __future__ import annotations

import socket
import struct


class pg_error(RuntimeError):
    """The server answered with an error, asked for a password, or sent something unexpected."""


class pg_connection:
    """One blocking session. `timeout` (seconds) bounds every read."""

    def __init__(self, port: int, user: str = "postgres", database: str = "postgres",
                 host: str = "127.0.0.1", timeout: float = 5.0) -> None:
        self._sock = socket.create_connection((host, port), timeout=timeout)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._buffer = bytearray()
        params = b"".join(k.encode() + b"\0" + v.encode() + b"\0" for k, v in (
            ("user", user), ("database", database), ("application_name", "baton-bench")))
        body = struct.pack("!i", 196608) + params + b"\0"
        self._sock.sendall(struct.pack("!i", len(body) + 4) + body)
        while True:
            kind, payload = self._read_message()
            if kind == b"R":
                (method,) = struct.unpack("!i", payload[:4])
                if method != 0:
                    raise pg_error(f"the server asks for authentication method {method}; the "
                                   "harness's servers use trust")
            elif kind == b"E":
                raise pg_error(_error_text(payload))
            elif kind == b"Z":
                return
            # S (parameter status), K (backend key), N (notice): nothing to do.

    def close(self) -> None:
        try:
            self._sock.sendall(b"X" + struct.pack("!i", 4))
        except OSError:
            pass
        self._sock.close()

    def __enter__(self) -> "pg_connection":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def query(self, sql: str) -> list[tuple[str | None, ...]]:
        """Runs one simple query; returns the rows of its last result."""
        body = sql.encode() + b"\0"
        self._sock.sendall(b"Q" + struct.pack("!i", len(body) + 4) + body)
        rows: list[tuple[str | None, ...]] = []
        error = None
        while True:
            kind, payload = self._read_message()
            if kind == b"T":
                rows = []
            elif kind == b"D":
                rows.append(_data_row(payload))
            elif kind == b"E":
                error = _error_text(payload)
            elif kind == b"Z":
                if error is not None:
                    raise pg_error(error)
                return rows

    def scalar(self, sql: str) -> str | None:
        rows = self.query(sql)
        if len(rows) != 1 or len(rows[0]) != 1:
            raise pg_error(f"expected one value from {sql!r}, got {rows!r}")
        return rows[0][0]

    def _read_exact(self, count: int) -> bytes:
        while len(self._buffer) < count:
            chunk = self._sock.recv(65536)
            if not chunk:
                raise pg_error("the server closed the connection")
            self._buffer.extend(chunk)
        data = bytes(self._buffer[:count])
        del self._buffer[:count]
        return data

    def _read_message(self) -> tuple[bytes, bytes]:
        header = self._read_exact(5)
        kind = header[:1]
        (length,) = struct.unpack("!i", header[1:])
        if length < 4:
            raise pg_error(f"malformed message {kind!r} of length {length}")
        return kind, self._read_exact(length - 4)


def _data_row(payload: bytes) -> tuple[str | None, ...]:
    (count,) = struct.unpack("!h", payload[:2])
    offset = 2
    values: list[str | None] = []
    for _ in range(count):
        (size,) = struct.unpack("!i", payload[offset:offset + 4])
        offset += 4
        if size < 0:
            values.append(None)
        else:
            values.append(payload[offset:offset + size].decode())
            offset += size
    return tuple(values)


def _error_text(payload: bytes) -> str:
    fields = {}
    for part in payload.split(b"\0"):
        if part:
            fields[part[:1]] = part[1:].decode(errors="replace")
    return f"{fields.get(b'S', 'ERROR')}: {fields.get(b'M', '?')} (SQLSTATE {fields.get(b'C', '?')})"
