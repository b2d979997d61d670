"""Files a session's uid may not read, where no mount namespace can hide them.

Without namespaces (a container that refuses them) a session still runs as its dedicated uid
when the grader is root, but it sees the machine's real files. The grader then denies that uid
the folders it must not read (the course, the hidden references, the submissions, the grader's
home) with a POSIX ACL entry of no permissions for exactly that uid: nobody else's access
changes, and a folder the uid cannot search hides everything below it. A folder that holds what
sessions need (the Python installation, the packages they import) is not denied itself; its
other entries are, recursively.

The ACL is written as the ``system.posix_acl_access`` attribute (version 2: a header, then
entries of tag, permissions and id, sorted by tag and id), so no tool needs installing.
"""
from __future__ import annotations

import errno
import os
import stat
import struct

_XATTR = "system.posix_acl_access"
_VERSION = 2
_USER_OBJ, _USER, _GROUP_OBJ, _GROUP, _MASK, _OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
_UNDEFINED = 0xFFFFFFFF
_ENTRY = struct.Struct("<HHI")


def protected(hidden: list[str], needed: list[str]) -> list[str]:
    """The folders to deny: each of ``hidden``, or, when it holds something ``needed``, its other
    entries (recursively), never a link."""
    needed = [os.path.realpath(p) for p in needed]
    out: list[str] = []

    def visit(path: str) -> None:
        try:
            info = os.lstat(path)
        except OSError:
            return
        if stat.S_ISLNK(info.st_mode):
            return
        if not any(n == path or n.startswith(path.rstrip("/") + "/") for n in needed):
            out.append(path)
        elif stat.S_ISDIR(info.st_mode) and path not in needed:
            try:
                names = sorted(os.listdir(path))
            except OSError:
                return
            for name in names:
                visit(os.path.join(path, name))

    for path in hidden:
        visit(os.path.realpath(path))
    return sorted(set(out))


def deny(path: str, uid: int) -> bool:
    """Give ``uid`` no access to ``path`` (its other entries unchanged); False where the file
    system keeps no ACLs or is read-only."""
    entries = _read(path)
    if (_USER, uid) in {(tag, ident) for tag, _, ident in entries}:
        return True
    entries.append((_USER, 0, uid))
    if not any(tag == _MASK for tag, _, _ in entries):
        group = next(perm for tag, perm, _ in entries if tag == _GROUP_OBJ)
        entries.append((_MASK, group, _UNDEFINED))
    return _write(path, entries)


def allow_again(path: str, uid: int) -> None:
    """Remove the entry ``deny`` added (best effort: the folder may be gone)."""
    try:
        entries = [e for e in _read(path) if not (e[0] == _USER and e[2] == uid)]
        if not any(tag in (_USER, _GROUP) for tag, _, _ in entries):
            os.removexattr(path, _XATTR, follow_symlinks=False)    # back to the plain mode bits
        else:
            _write(path, entries)
    except OSError:
        pass


def _read(path: str) -> list[tuple[int, int, int]]:
    try:
        data = os.getxattr(path, _XATTR, follow_symlinks=False)
    except OSError as e:
        if e.errno not in (errno.ENODATA, errno.ENOTSUP, errno.EOPNOTSUPP):
            raise
        mode = os.lstat(path).st_mode
        return [(_USER_OBJ, (mode >> 6) & 7, _UNDEFINED), (_GROUP_OBJ, (mode >> 3) & 7, _UNDEFINED),
                (_OTHER, mode & 7, _UNDEFINED)]
    version, = struct.unpack_from("<I", data)
    if version != _VERSION:
        raise OSError(errno.EINVAL, f"unknown ACL version {version} on {path}")
    return [_ENTRY.unpack_from(data, 4 + i * _ENTRY.size) for i in range((len(data) - 4) // _ENTRY.size)]


def _write(path: str, entries) -> bool:
    data = struct.pack("<I", _VERSION) + b"".join(_ENTRY.pack(*e) for e in sorted(entries, key=lambda e: (e[0], e[2])))
    try:
        os.setxattr(path, _XATTR, data, follow_symlinks=False)
    except OSError as e:
        if e.errno in (errno.ENOTSUP, errno.EOPNOTSUPP, errno.EROFS):
            return False
        raise
    return True
