"""Files the sessions' group may not read, where no mount namespace can hide them.

Without namespaces (a container that refuses them) a session still runs as its dedicated uid
when the grader is root, but it sees the machine's real files. Every such session runs in one
group of its own (``lifecycle.weak_group``), and the grader denies that group, for the whole run
and before any session starts, the folders it must not read (the course, the hidden references,
the submissions, the grader's home) with POSIX ACL entries for exactly that group: nobody else's
access changes.

A hidden folder that holds something the sessions need (the course folder, or the kit's
checkout, holding the ``.venv`` they run in) cannot be denied as a whole. It becomes a *passage*:
the group may only search it (``--x``, never list it), every other entry in it is denied, and a
default ACL (``system.posix_acl_default``) denies the group whatever is created in it during the
run (``autograded/``, the gradebook's journal, a results file), so a name guessed or read in a
command line leads nowhere. A folder the group cannot search hides everything below it, also
what is created there later. :class:`Denial` applies all of it and takes it all back at the end,
including the entries files created during the run inherited.

Two graders on one machine deny their own groups (``lifecycle.weak_group``), possibly the same
folder (the kit's checkout): their entries stand side by side, each takes back only its own, and
a default ACL a grader made is marked (``user.course_autograde.default_acl``) so whichever takes
the last entry out removes it.

The ACLs are written as the ``system.posix_acl_access`` and ``system.posix_acl_default``
attributes (version 2: a header, then entries of tag, permissions and id, sorted by tag and id),
so no tool needs installing. Where a default ACL is created, its owner, group and other entries
follow the grader's umask, so files made during the run get the modes they would have had.
"""
from __future__ import annotations

import errno
import os
import stat
import struct
from collections.abc import Iterable

_ACCESS = "system.posix_acl_access"
_DEFAULT = "system.posix_acl_default"
_MADE = "user.course_autograde.default_acl"     # set on a folder whose default ACL a grader made
_VERSION = 2
_USER_OBJ, _USER, _GROUP_OBJ, _GROUP, _MASK, _OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
_UNDEFINED = 0xFFFFFFFF
_ENTRY = struct.Struct("<HHI")
_SEARCH = 0o001


def layout(hidden: list[str], needed: list[str]) -> tuple[list[str], list[str]]:
    """(folders and files to deny, passages): each of ``hidden`` is denied, or, when it holds
    something ``needed``, it is a passage and its other entries are laid out the same way
    (recursively); links are left alone (what they point to is what counts)."""
    needed = [os.path.realpath(p) for p in needed]
    denied: list[str] = []
    passages: list[str] = []

    def visit(path: str) -> None:
        try:
            info = os.lstat(path)
        except OSError:
            return
        if stat.S_ISLNK(info.st_mode):
            return
        if not any(n == path or n.startswith(path.rstrip("/") + "/") for n in needed):
            denied.append(path)
        elif stat.S_ISDIR(info.st_mode) and path not in needed:
            passages.append(path)
            try:
                names = sorted(os.listdir(path))
            except OSError:
                return
            for name in names:
                visit(os.path.join(path, name))

    for path in hidden:
        visit(os.path.realpath(path))
    return sorted(set(denied)), sorted(set(passages))


class Denial:
    """What one run denies the group ``gid``: ``apply`` before the first session, ``undo`` after
    the last one has ended."""

    def __init__(self, hidden: list[str], needed: list[str], gid: int):
        self.gid = gid
        self.denied, self.passages = layout(hidden, needed)
        self._made_default: set[str] = set()     # passages that had no default ACL before
        self._made_mask: dict[str, int] = {}     # path -> its group bits, where we added the mask
        self.applied = False

    def apply(self) -> str | None:
        """Deny everything; returns the first path the file system would not take an ACL on
        (and that others may read), or None."""
        self.applied = True
        for path in self.denied:
            if not self._entry(path, 0) and os.lstat(path).st_mode & 0o005:
                return path
        for path in self.passages:
            search = os.lstat(path).st_mode & _SEARCH      # never more than other users have
            if not self._entry(path, search) or not self._default(path):
                return path
        return None

    def undo(self) -> None:
        """Take every entry back (best effort: a folder may be gone), also from what was created in
        the passages during the run."""
        if not self.applied:
            return
        skip = set(self.denied) | set(self.passages)
        for path in self.passages:
            self._scrub_children(path, skip)
            self._remove(path, _DEFAULT)
        for path in [*self.denied, *self.passages]:
            self._remove(path, _ACCESS)
        self.applied = False

    # -- the entries ------------------------------------------------------------------------------

    def _entry(self, path: str, perm: int) -> bool:
        try:
            entries = _read(path, _ACCESS)
        except OSError:
            return False
        entries = [e for e in entries if not (e[0] == _GROUP and e[2] == self.gid)] + [(_GROUP, perm, self.gid)]
        if not any(tag == _MASK for tag, _, _ in entries):
            group = next(p for tag, p, _ in entries if tag == _GROUP_OBJ)
            self._made_mask[path] = group
            entries.append((_MASK, group | perm, _UNDEFINED))
        elif perm:
            entries = [(tag, p | perm if tag == _MASK else p, i) for tag, p, i in entries]
        return _write(path, _ACCESS, entries)

    def _default(self, path: str) -> bool:
        try:
            entries = _read(path, _DEFAULT, missing_ok=True)
        except OSError:
            return False
        if not entries:
            self._made_default.add(path)
            _mark(path)
            umask = _umask()
            user, group, other = (7 & ~(umask >> 6)), (7 & ~(umask >> 3)), (7 & ~umask)
            entries = [(_USER_OBJ, user, _UNDEFINED), (_GROUP_OBJ, group, _UNDEFINED), (_MASK, group, _UNDEFINED),
                       (_OTHER, other, _UNDEFINED)]
        entries = [e for e in entries if not (e[0] == _GROUP and e[2] == self.gid)] + [(_GROUP, 0, self.gid)]
        return _write(path, _DEFAULT, entries)

    def _remove(self, path: str, which: str) -> None:
        try:
            entries = _read(path, which, missing_ok=True)
            if not entries:
                return
            kept = [e for e in entries if not (e[0] == _GROUP and e[2] == self.gid)]
            named = any(tag in (_USER, _GROUP) for tag, _, _ in kept)
            if which == _DEFAULT and not named and (path in self._made_default or _marked(path)):
                os.removexattr(path, which, follow_symlinks=False)
                _unmark(path)
            elif which == _ACCESS and not named and (path in self._made_mask or not _had_own_acl(entries, self.gid)):
                group = next(p for tag, p, _ in kept if tag == _GROUP_OBJ)
                group &= next((p for tag, p, _ in kept if tag == _MASK), 7)   # what the group had in effect
                os.removexattr(path, which, follow_symlinks=False)     # back to the plain mode bits
                mode = stat.S_IMODE(os.lstat(path).st_mode)
                os.chmod(path, (mode & ~0o070) | (group << 3))
            elif len(kept) != len(entries):
                _write(path, which, kept)
        except OSError:
            pass

    def _scrub_children(self, folder: str, skip: set[str]) -> None:
        """Take back the entry every file created in ``folder`` during the run inherited."""
        try:
            names = os.listdir(folder)
        except OSError:
            return
        for name in names:
            path = os.path.join(folder, name)
            if path in skip:
                continue
            try:
                info = os.lstat(path)
                inherited = any(tag == _GROUP and ident == self.gid for tag, _, ident in _read(path, _ACCESS))
            except OSError:
                continue
            if stat.S_ISLNK(info.st_mode) or not inherited:
                continue
            if stat.S_ISDIR(info.st_mode):
                self._made_default.add(path)
                self._scrub_children(path, skip)
                self._remove(path, _DEFAULT)
            self._made_mask.setdefault(path, 0)
            self._remove(path, _ACCESS)


def _mark(path: str) -> None:
    """Note on the folder that a grader made its default ACL, so whichever grader takes the last
    entry out removes it (another grader on the machine may deny its own group the same folder)."""
    try:
        os.setxattr(path, _MADE, b"1", follow_symlinks=False)
    except OSError:
        pass      # no user attributes here: this Denial alone remembers it


def _marked(path: str) -> bool:
    try:
        return os.getxattr(path, _MADE, follow_symlinks=False) == b"1"
    except OSError:
        return False


def _unmark(path: str) -> None:
    try:
        os.removexattr(path, _MADE, follow_symlinks=False)
    except OSError:
        pass


def _had_own_acl(entries: Iterable[tuple[int, int, int]], gid: int) -> bool:
    """Whether an access ACL held named entries other than ours (then it is kept)."""
    return any(tag in (_USER, _GROUP) and not (tag == _GROUP and ident == gid) for tag, _, ident in entries)


def _umask() -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


def _read(path: str, which: str = _ACCESS, missing_ok: bool = False) -> list[tuple[int, int, int]]:
    """The entries of ``path``'s ACL; without one, the access ACL its mode bits make (or, with
    ``missing_ok``, none)."""
    try:
        data = os.getxattr(path, which, follow_symlinks=False)
    except OSError as e:
        if e.errno not in (errno.ENODATA, errno.ENOTSUP, errno.EOPNOTSUPP):
            raise
        if missing_ok:
            return []
        mode = os.lstat(path).st_mode
        return [(_USER_OBJ, (mode >> 6) & 7, _UNDEFINED), (_GROUP_OBJ, (mode >> 3) & 7, _UNDEFINED),
                (_OTHER, mode & 7, _UNDEFINED)]
    version, = struct.unpack_from("<I", data)
    if version != _VERSION:
        raise OSError(errno.EINVAL, f"unknown ACL version {version} on {path}")
    return [_ENTRY.unpack_from(data, 4 + i * _ENTRY.size) for i in range((len(data) - 4) // _ENTRY.size)]


def _write(path: str, which: str, entries: Iterable[tuple[int, int, int]]) -> bool:
    data = struct.pack("<I", _VERSION) + b"".join(_ENTRY.pack(*e) for e in sorted(entries, key=lambda e: (e[0], e[2])))
    try:
        os.setxattr(path, which, data, follow_symlinks=False)
    except OSError as e:
        if e.errno in (errno.ENOTSUP, errno.EOPNOTSUPP, errno.EROFS):
            return False
        raise
    return True
