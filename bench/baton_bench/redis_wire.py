"""A minimal RESP2 client over a TCP socket, standard library only.

The harness only needs a handful of commands (PING, PTTL, INFO, CONFIG,
MONITOR), so it speaks the protocol itself instead of depending on a client
library; the peers under test bring their own clients. Replies are decoded to
Python values: simple string -> str, integer -> int, bulk -> bytes (None when
nil), array -> list; an error reply raises redis_error.
"""

from __future__ import annotations

import socket
from typing import Any


class redis_error(RuntimeError):
    """Redis answered with an error reply, or the reply could not be parsed."""


def encode_command(args: tuple[Any, ...]) -> bytes:
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(parts)


class redis_connection:
    """One blocking connection. `timeout` (seconds) bounds every read."""

    def __init__(self, port: int, host: str = "127.0.0.1", timeout: float = 5.0) -> None:
        self._sock = socket.create_connection((host, port), timeout=timeout)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # Our own buffer, not makefile(): after a read timeout a socket file
        # refuses every later read, and MONITOR relies on timing out and reading on.
        self._buffer = bytearray()

    def close(self) -> None:
        self._sock.close()

    def __enter__(self) -> "redis_connection":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send(self, *args: Any) -> None:
        self._sock.sendall(encode_command(args))

    def command(self, *args: Any) -> Any:
        self.send(*args)
        return self.read_reply()

    def set_timeout(self, seconds: float | None) -> None:
        self._sock.settimeout(seconds)

    def read_reply(self) -> Any:
        line = self._read_line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode(errors="replace")
        if kind == b"-":
            raise redis_error(rest.decode(errors="replace"))
        if kind == b":":
            return int(rest)
        if kind == b"$":
            size = int(rest)
            if size < 0:
                return None
            while len(self._buffer) < size + 2:
                self._fill()
            data = bytes(self._buffer[:size])
            del self._buffer[: size + 2]
            return data
        if kind == b"*":
            count = int(rest)
            if count < 0:
                return None
            return [self.read_reply() for _ in range(count)]
        raise redis_error(f"unexpected reply line {line!r}")

    def _fill(self) -> None:
        """Append what the socket has; a timeout (socket.timeout) leaves the buffer intact."""
        chunk = self._sock.recv(65536)
        if not chunk:
            raise redis_error("connection closed by the server")
        self._buffer += chunk

    def _read_line(self) -> bytes:
        while True:
            end = self._buffer.find(b"\r\n")
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 2]
                return line
            if len(self._buffer) > (1 << 24):
                raise redis_error("reply line too long")
            self._fill()

    def info(self, section: str) -> dict[str, str]:
        """INFO <section> as a flat name -> value dict."""
        text = self.command("INFO", section)
        result: dict[str, str] = {}
        for raw in text.decode().splitlines():
            if not raw or raw.startswith("#") or ":" not in raw:
                continue
            name, value = raw.split(":", 1)
            result[name] = value
        return result

    def command_calls(self, field: str = "calls") -> dict[str, int]:
        """INFO commandstats as command name -> calls (or `usec`, the time spent in it)."""
        calls: dict[str, int] = {}
        for name, value in self.info("commandstats").items():
            if not name.startswith("cmdstat_"):
                continue
            fields = dict(item.split("=", 1) for item in value.split(",") if "=" in item)
            calls[name[len("cmdstat_"):]] = int(fields.get(field, "0"))
        return calls
