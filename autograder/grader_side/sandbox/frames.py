"""Framing for messages between the grader and a sandboxed child.

A frame is:

    4 bytes   big-endian length N of the header
    N bytes   the header: a UTF-8 JSON object
    ...       the raw bytes of each blob, back to back; header["_blobs"]
              lists their lengths in order

Nothing here ever unpickles or evaluates anything: the receiving side
only parses JSON and copies bytes, and every size is checked against a
limit before memory is set aside for it.  Deadlines are absolute
``time.monotonic()`` values; the socket timeout for each system call is
recomputed from what is left, so a peer that trickles bytes slowly
cannot stretch the deadline.
"""

from __future__ import annotations

import json
import socket
import struct
import time
from collections.abc import Sequence

Buffer = bytes | bytearray | memoryview   # what a frame's pieces may be (anything memoryview() takes)

MAX_HEADER = 1 << 20          # the grader accepts headers of at most 1 MiB
MAX_BLOBS = 100_000           # and at most this many blobs in one frame

_LEN = struct.Struct(">I")


class FrameError(Exception):
    """Base class: the frame could not be received."""


class FrameTimeout(FrameError):
    """The deadline passed before the frame was complete."""


class FrameClosed(FrameError):
    """The peer closed the connection (or it broke) before a complete frame."""


class BadFrame(FrameError):
    """The bytes received do not form a valid frame."""


def encode(header: dict, blobs: Sequence[Buffer] = ()) -> list:
    """Return the pieces of one frame: the length-prefixed header, then the blobs.

    Raises TypeError/ValueError if the header is not a JSON-serialisable dict
    or a blob is not a bytes-like object.
    """
    if not isinstance(header, dict):
        raise TypeError(f"frame header must be a dict, not {type(header).__name__}")
    views = []
    for b in blobs:
        try:
            v = memoryview(b)
        except TypeError:
            raise TypeError(f"blob must be bytes-like, not {type(b).__name__}") from None
        if not v.contiguous:
            raise ValueError("blob must be a contiguous buffer (copy it with bytes(...) first)")
        views.append(v.cast("B") if v.ndim != 1 or v.format != "B" else v)
    head = dict(header)
    head["_blobs"] = [v.nbytes for v in views]
    # ASCII-only output also carries lone surrogates (as \u escapes) safely.
    data = json.dumps(head, separators=(",", ":")).encode("ascii")
    return [_LEN.pack(len(data)) + data, *views]


# Frames up to this size go out in one system call; larger blobs are sent as they are.
JOIN_BELOW = 4 * 1024 * 1024


def send_frame(sock: socket.socket, header: dict, blobs: Sequence[Buffer] = (), deadline: float | None = None) -> None:
    """Send one frame.  Encoding errors are raised before anything is written."""
    send_parts(sock, encode(header, blobs), deadline)


def send_parts(sock: socket.socket, parts: Sequence[Buffer], deadline: float | None = None) -> None:
    """Send the pieces returned by encode()."""
    if sum(memoryview(p).nbytes for p in parts) <= JOIN_BELOW:
        parts = [b"".join(parts)]
    for p in parts:
        _sendall(sock, p, deadline)


_SMALL = 1 << 20


def recv_frame(sock: socket.socket, *, max_blob_bytes: int, max_header: int = MAX_HEADER,
               deadline: float | None = None) -> tuple[dict, list[bytes | bytearray]]:
    """Receive and validate one frame; return (header without "_blobs", blobs as bytes-like objects).

    Raises FrameTimeout, FrameClosed or BadFrame.
    """
    (n,) = _LEN.unpack(_recv_exact(sock, 4, deadline))
    if n > max_header:
        raise BadFrame(f"header of {n} bytes is larger than the {max_header} byte limit")
    raw = _recv_exact(sock, n, deadline)
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise BadFrame(f"header is not UTF-8 JSON ({type(e).__name__}: {str(e)[:100]})") from None
    if not isinstance(header, dict):
        raise BadFrame(f"header is a JSON {type(header).__name__}, not an object")
    sizes = header.pop("_blobs", [])
    if not isinstance(sizes, list) or len(sizes) > MAX_BLOBS:
        raise BadFrame('"_blobs" must be a list of at most %d lengths' % MAX_BLOBS)
    total = 0
    for s in sizes:
        if type(s) is not int or s < 0:
            raise BadFrame('"_blobs" must contain non-negative integers')
        total += s
    if total > max_blob_bytes:
        # never the reply's size: code could set it from a hidden input
        raise BadFrame(f"the reply is over the {max_blob_bytes} byte output limit")
    if total > _SMALL:
        # Each blob straight into its own buffer: the frame never exists twice in memory.
        return header, [_recv_exact(sock, s, deadline) for s in sizes]
    data = _recv_exact(sock, total, deadline)   # small blobs in one read, then cut apart
    blobs: list[bytes | bytearray] = []
    start = 0
    for s in sizes:
        blobs.append(bytes(data[start:start + s]))
        start += s
    return header, blobs


def _remaining(deadline: float | None) -> float | None:
    if deadline is None:
        return None
    left = deadline - time.monotonic()
    if left <= 0:
        raise FrameTimeout("deadline passed")
    return left


def _sendall(sock: socket.socket, data: Buffer, deadline: float | None) -> None:
    try:
        sock.settimeout(_remaining(deadline))
        sock.sendall(data)
    except socket.timeout:
        raise FrameTimeout("deadline passed while sending") from None
    except OSError as e:
        raise FrameClosed(f"connection broke while sending ({e.strerror or e})") from None


def _recv_exact(sock: socket.socket, n: int, deadline: float | None) -> bytearray:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        try:
            sock.settimeout(_remaining(deadline))
            k = sock.recv_into(view[got:], min(n - got, 1 << 20))
        except socket.timeout:
            raise FrameTimeout("deadline passed while receiving") from None
        except InterruptedError:
            continue
        except OSError as e:
            raise FrameClosed(f"connection broke ({e.strerror or e})") from None
        if k == 0:
            raise FrameClosed("connection closed")
        got += k
    view.release()
    return buf
