"""``nbgrader zip_collect`` by the course's rules: the extractor and file-name collector plugins
that the course's ``nbgrader_config.py`` sets (``ZipCollectApp.extractor_plugin`` and
``collector_plugin``).

An LMS download holds what students named and what an archive says about itself; neither is
trusted. :class:`CourseExtractor` unpacks ``downloaded/<assignment>/archive/`` into ``extracted/``:

- a cap on each file's uncompressed size (``max_file_bytes``, 20 MiB: a bigger notebook is not
  graded anyway), on each archive of archive/ (one student's upload: ``max_upload_bytes``, by
  default the assignment's number of notebooks times ``max_file_bytes``, and ``max_upload_members``,
  100 members), and on the whole extraction (``max_total_bytes``, 16 GiB, the disk's last guard;
  each file counts at least a 4 KiB disk block). Sizes are counted as the bytes come out, whatever
  the archive claims: a member that inflates past a cap is stopped there, removed and skipped; what
  an upload holds past its caps is skipped with one warning and the next upload is extracted as if
  it had not been there; once the total cap is reached nothing more is extracted. A tar (read
  through to reach each member) is read only as far as the upload's cap. The LMS's own download of
  the whole class has only the total cap: an archive whose name gives no student (the collector's
  ``named_regexp``; an LMS names every upload after its student, so only the staff put such a file
  there), or one named in ``lms_archives``. A student's archive inside it (Canvas keeps an uploaded
  zip whole) is opened as that student's upload, with its caps, and removed;
- a member with an absolute path or a ``..`` in it (``/`` and ``\\`` both count as separators), a
  member of the LMS's download inside a folder (a ``/`` in an uploaded name would otherwise give the
  file to whoever the part after it names; ``member_folders`` allows them for a ``named_regexp`` that
  reads the folder), a link, a device, an archive inside a student's archive, a name with a control
  character: each is skipped. A student's own archive is theirs folders and all: a member in a
  folder is taken by its file name, and what is neither a notebook nor an archive, or inside a
  hidden or ``__MACOSX`` folder, is left out quietly without counting against the upload's caps;
- only zip and tar archives (``ExtractorPlugin.zip_ext`` says which names are archives); a plain
  file is copied under the caps per file and in all, never through a link.

:class:`CourseCollector` reads each extracted file's name with nbgrader's ``named_regexp``. A file
that came out of an archive is the student's whom the archive's own name gives, read by the same
``named_regexp`` as if it were a notebook of that name (``alice_upload.zip`` as ``alice_upload.ipynb``:
alice's): a member named only ``build.ipynb`` is that student's build notebook (LMSs wrap an upload
this way), and one whose own name gives another student is skipped; a member never displaces a file
the student uploaded directly, which wins over a copy of the same notebook inside an archive. A
member of the LMS's download goes by its own name. A notebook named as the release names it but for
its case or a copy's number (``Build.ipynb``, ``build-1.ipynb``, ``build (1).ipynb``) is collected
under the release's name. :class:`CanvasCollector` reads Canvas's names. The collector then
refuses a student id that is empty, ``.`` or ``..``, hidden (a leading ``.``), holds ``/``, ``\\``, a
control character or one of ``[ ] * ?`` (nbgrader's own commands read those as patterns), or does
not fit a folder name; a notebook name that is absolute or holds ``..``; a time that does not
parse; a second file for the same notebook of the same student when neither has a time (nbgrader
would stop the whole collection there).

Everything skipped gets one warning naming the file and why, and a summary at the end, then one
naming each student whose upload gave nothing collected; the rest of the class is collected.
Nothing skipped stops the collection.
"""
from __future__ import annotations

import errno
import os
import re
import stat
import tarfile
import zipfile
from typing import IO, TYPE_CHECKING, Any

from nbgrader.plugins import ExtractorPlugin, FileNameCollectorPlugin
from nbgrader.utils import find_all_notebooks, parse_utc
from traitlets import Bool, Integer, List, Unicode

from autograder.grader_side.submitted import CONTROL, LMS_LATE, MAX_BYTES, shown

if TYPE_CHECKING:
    from _typeshed import SupportsRead
    from nbgrader.apps.zipcollectapp import ZipCollectApp

# What the collector reads of a file's name: named_regexp's groups (student_id, file_id,
# timestamp...), each a string, or None for a group the name does not fill. Any: nbgrader's own
# ``collect`` (untyped) makes them too.
Groups = dict[str, Any]

BLOCK = 4096
_PATTERN = re.compile(r"[\[\]*?]")


def member_parts(name: str) -> tuple[list[str], str]:
    """(the folders and file name an archive member's path names, or []; why it is not extracted, or "")."""
    if CONTROL.search(name):
        return [], "its name holds a control character"
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name):
        return [], "it has an absolute path"
    pieces = re.split(r"[/\\]", name)
    if ".." in pieces:
        return [], "its path holds '..' (it would land outside the extracted folder)"
    parts = [p for p in pieces if p not in ("", ".")]
    return (parts, "") if parts else ([], "it has no name")


def student_id_problem(sid: object) -> str:
    """Why ``sid`` cannot be a student id (a folder in submitted/), or ""."""
    if not isinstance(sid, str) or not sid.strip():
        return "the student id is empty"
    if sid in (".", ".."):
        return f"the student id would be {sid!r}, a folder outside the student's own"
    if sid.startswith("."):
        return "the student id starts with '.': a hidden folder, which the graders skip"
    if "/" in sid or "\\" in sid:
        return "the student id holds a '/' or '\\': it would be a folder inside another"
    if CONTROL.search(sid):
        return "the student id holds a control character"
    if _PATTERN.search(sid):
        return "the student id holds one of [ ] * ?, which nbgrader's own commands read as a pattern"
    if len(sid.encode("utf-8", errors="replace")) > 255:
        return "the student id is too long for a folder name"
    return ""


def file_id_problem(fid: object) -> str:
    """Why ``fid`` cannot name a submitted file inside the student's assignment folder, or ""."""
    if not isinstance(fid, str) or not fid.strip():
        return "the notebook name is empty"
    parts, why = member_parts(fid)
    if why:
        return f"the notebook name is refused: {why}"
    if "\\" in fid:
        return "the notebook name holds a '\\'"
    if any(len(p.encode("utf-8", errors="replace")) > 255 for p in parts):
        return "the notebook name is too long for a file name"
    return ""


def _rejected_list(app: ZipCollectApp | None) -> list[str]:
    """The list of what this run of zip_collect skipped, shared by the two plugins (kept on the app,
    whose ``process_extracted_files`` then ends with the summary)."""
    if app is None or not hasattr(app, "process_extracted_files"):
        return []
    if not hasattr(app, "_course_rejected"):
        app._course_rejected = []
        start = app.process_extracted_files

        def process_extracted_files() -> None:   # nbgrader's, then the summary of everything skipped
            start()
            _summary(app)
            collector = getattr(app, "collector_plugin_inst", None)
            if isinstance(collector, CourseCollector):
                collector.after_transfer()
        app.process_extracted_files = process_extracted_files
    return app._course_rejected


def _summary(app: ZipCollectApp) -> None:
    rejected = app._course_rejected
    if rejected:
        names = ", ".join(rejected[:20]) + (f" and {len(rejected) - 20} more" if len(rejected) > 20 else "")
        app.log.warning("zip_collect left out %d file(s), each named in a warning above: %s", len(rejected), names)


class _Full(Exception):
    """The extraction reached its total cap (nothing more is extracted) or the upload's (nothing more
    of that archive); ``why`` says which."""

    def __init__(self, why: str):
        super().__init__(why)
        self.why = why


def _uploads(app: ZipCollectApp | None) -> list[tuple[str, str | None]]:
    """(label, student id or None) of every student's upload extracted in this run, kept on the app."""
    if app is None:
        return []
    if not hasattr(app, "_course_uploads"):
        app._course_uploads = []
    return app._course_uploads


def _origins(app: ZipCollectApp | None) -> dict[str, _Upload]:
    """Extracted file (its normalized path) -> the :class:`_Upload` it came out of, for every file
    extracted from an archive; kept on the app, where the collector reads it."""
    if app is None:
        return {}
    if not hasattr(app, "_course_origins"):
        app._course_origins = {}
    return app._course_origins


class CourseExtractor(ExtractorPlugin):
    """nbgrader's extractor with caps on what comes out and no unsafe path, link or nested archive."""

    max_file_bytes = Integer(MAX_BYTES,
                             help="Largest uncompressed size of one extracted file, in bytes").tag(config=True)
    max_upload_bytes = Integer(0, help="Largest size of what is extracted from one archive in archive/ (one "
                                       "student's upload), in bytes (each file counts at least 4 KiB); 0: the "
                                       "assignment's number of notebooks times max_file_bytes").tag(config=True)
    max_upload_members = Integer(100, help="Most members (files, links and the like; folders not counted) "
                                           "extracted from one archive in archive/").tag(config=True)
    max_total_bytes = Integer(16 << 30, help="Largest size of everything extracted in one run, in bytes (each "
                                             "file counts at least 4 KiB): the disk's last guard").tag(config=True)
    lms_archives = List(Unicode(), help="Archives in archive/ (their names, or paths inside archive/) that the "
                                        "LMS made: its download of the whole class, whose members it named. Each "
                                        "of their members goes to the student its own name gives, and only the "
                                        "total cap applies to them").tag(config=True)
    member_folders = Bool(False, help="Extract archive members inside folders (only for a named_regexp that "
                                      "takes the student id from the folder)").tag(config=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rejected = _rejected_list(self.parent)
        self.origins = _origins(self.parent)
        self.upload: _Upload | None = None

    def upload_cap(self) -> int:
        """What one student's archive may hold, in bytes."""
        if self.max_upload_bytes > 0:
            return self.max_upload_bytes
        try:
            coursedir = self.parent.coursedir
            released = coursedir.format_path(coursedir.release_directory, ".", coursedir.assignment_id)
            notebooks = len(find_all_notebooks(released))
        except Exception:
            notebooks = 0
        return max(notebooks, 1) * self.max_file_bytes

    def extract(self, archive_path: str, extracted_path: str) -> None:
        self.left = self.max_total_bytes
        self.per_upload = self.upload_cap()
        self.root = os.path.realpath(extracted_path)
        if not os.listdir(archive_path):
            self.log.warning("No files found in directory: %s", archive_path)
            return
        for here, dirs, files in os.walk(archive_path):
            dirs.sort()
            rel = os.path.relpath(here, archive_path)
            to = os.path.normpath(os.path.join(extracted_path, rel))
            for name in sorted(dirs):
                if os.path.islink(os.path.join(here, name)):
                    self._skip(os.path.normpath(os.path.join(rel, name)), "it is a link: put the folder itself there")
            for name in sorted(files):
                self._one(os.path.join(here, name), os.path.normpath(os.path.join(rel, name)), to)
        if self.rejected:
            self.log.warning("%d file(s) of %s were not extracted (each named above)", len(self.rejected), archive_path)

    # ---- one file of archive/ ------------------------------------------------------------------

    def _ignored(self, name: str) -> bool:
        """Whether a member of a student's own upload is left out quietly, without counting against
        its caps: no notebook (the collector's ``valid_ext``) or archive, or inside a hidden or
        ``__MACOSX`` folder (a zipped repository's ``.git``, macOS's notes). Only what could be a
        submission counts, so a large upload cannot crowd its notebooks out of the member cap."""
        if self.upload is None or self.upload.lms:
            return False
        parts, why = member_parts(name)
        if why or not parts:
            return False   # skipped with its reason
        collector = getattr(self.parent, "collector_plugin_inst", None)
        wanted = [*getattr(collector, "valid_ext", [".ipynb"]), *self.zip_ext]
        return (any(p.startswith(".") or p == "__MACOSX" for p in parts[:-1]) or parts[-1].startswith("._")
                or os.path.splitext(parts[-1])[1] not in wanted)

    def _names_a_student(self, folder: str) -> bool:
        """Whether the archive unpacked into ``folder`` is named after a student (the collector's
        ``named_regexp``, its name read as a notebook of that name)."""
        if not isinstance(getattr(self.parent, "collector_plugin_inst", None), CourseCollector):
            return True   # another collector: every archive is a student's upload, as before
        return self._owner_id(folder) is not None

    def _owner_id(self, folder: str) -> str | None:
        collector = getattr(self.parent, "collector_plugin_inst", None)
        return collector.archive_owner(folder)[0].get("student_id") if isinstance(collector, CourseCollector) else None

    def _nested(self, where: str, path: str) -> None:
        """A student's archive inside the LMS's download (Canvas keeps an uploaded zip as one member):
        extracted as that student's own upload, with an upload's caps, beside it; then removed."""
        outer = self.upload
        self.origins.pop(os.path.normpath(path), None)
        try:
            self._one(path, where, os.path.dirname(path), nested=True)
        finally:
            self.upload = outer
            os.unlink(path)

    def _one(self, path: str, label: str, to: str, nested: bool = False) -> None:
        if CONTROL.search(label):
            return self._skip(label, "its name holds a control character")
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY)
        except OSError as exc:
            return self._skip(label, "it is a link: put the file itself there" if exc.errno == errno.ELOOP
                              else f"it could not be opened ({exc.strerror})")
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(f.fileno())
            if not stat.S_ISREG(info.st_mode):
                return self._skip(label, "it is not a regular file")
            stem, ext = os.path.splitext(os.path.basename(path))
            if ext not in self.zip_ext:
                try:
                    self._store(label, f, os.path.join(to, os.path.basename(path)), info.st_size)
                except _Full as full:
                    self._skip(label, full.why)
                return
            first, second = os.path.splitext(stem)
            folder = os.path.join(to, first if second == ".tar" else stem)
            named = label in self.lms_archives or os.path.basename(label) in self.lms_archives
            owned = self._names_a_student(folder)
            if nested and not owned:
                return self._skip(label, "it is an archive inside the LMS's download whose name gives no student "
                                         "(named_regexp): unpack it by hand if it is a submission")
            lms = not nested and (named or not owned)   # only the staff put a file there that no student's name gives
            if not lms:
                _uploads(self.parent).append((label, self._owner_id(folder)))
            self.upload = (_Upload(label, folder, True, None, None) if lms else
                           _Upload(label, folder, False, self.per_upload, self.max_upload_members))
            try:
                if zipfile.is_zipfile(f):
                    return self._zip(label, f, folder)
                f.seek(0)
                try:
                    archive = tarfile.open(fileobj=f, mode="r:*")
                except (tarfile.TarError, OSError, EOFError, ValueError):
                    return self._skip(label, "it is neither a zip nor a tar archive")
                with archive:
                    return self._tar(label, archive, folder)
            finally:
                self.upload = None

    def _zip(self, label: str, f: IO[bytes], folder: str) -> None:
        try:
            archive = zipfile.ZipFile(f)
            members = archive.infolist()
        except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError) as exc:
            return self._skip(label, f"it could not be read as a zip archive ({exc})")
        upload = self.upload
        assert upload is not None   # _one sets it for the archive's extent
        with archive:
            for i, info in enumerate(members):
                if self.left <= BLOCK:
                    return self._rest(label, None, len(members) - i, self._full())
                where = f"{label}: {info.filename}"
                mode = info.external_attr >> 16
                if info.is_dir() or self._ignored(info.filename):
                    continue
                why = upload.over()
                if why:
                    return self._rest(label, info.filename, len(members) - i - 1, why)
                upload.members += 1
                if stat.S_ISLNK(mode):
                    self._skip(where, "it is a link")
                    continue
                if info.flag_bits & 0x1:
                    self._skip(where, "it is encrypted")
                    continue
                dest = self._member_dest(where, info.filename, folder)
                if dest is None:
                    continue
                try:
                    with archive.open(info) as stream:
                        written = self._store(where, stream, dest, info.file_size)
                except _Full as full:
                    return self._rest(label, info.filename, len(members) - i - 1, full.why)
                except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError, RuntimeError, EOFError) as exc:
                    self._skip(where, f"it could not be read ({type(exc).__name__}: {exc})")
                    continue
                if written and upload.lms and os.path.splitext(dest)[1] in self.zip_ext:
                    self._nested(where, dest)

    def _tar(self, label: str, archive: tarfile.TarFile, folder: str) -> None:
        passed = 0   # what reaching the next member costs: a tar is read through, skipped members included
        upload = self.upload
        assert upload is not None   # _one sets it for the archive's extent
        try:
            through, cap = ((self.max_total_bytes, "the total cap of %s (CourseExtractor.max_total_bytes)")
                            if upload.cap is None else
                            (upload.cap, "the cap of %s per upload (CourseExtractor.max_upload_bytes)"))
            for member in archive:
                if self.left <= BLOCK:
                    return self._rest(label, None, None, self._full())
                where = f"{label}: {member.name}"
                passed += member.size
                if passed > through:
                    return self._skip(f"{label}: {member.name} and every member after it",
                                      f"the archive holds more than {cap % _size(through)} to read through")
                if member.isdir() or self._ignored(member.name):
                    continue
                why = upload.over()
                if why:
                    return self._rest(label, member.name, None, why)
                upload.members += 1
                if not member.isfile():
                    self._skip(where, "it is a link or a special file" if member.issym() or member.islnk()
                               else "it is not a regular file")
                    continue
                dest = self._member_dest(where, member.name, folder)
                if dest is None:
                    continue
                stream = archive.extractfile(member)
                assert stream is not None   # a regular file (member.isfile() above) always has one
                try:
                    with stream:
                        written = self._store(where, stream, dest, member.size)
                except _Full as full:
                    return self._rest(label, member.name, None, full.why)
                if written and upload.lms and os.path.splitext(dest)[1] in self.zip_ext:
                    self._nested(where, dest)
        except (tarfile.TarError, OSError, EOFError, ValueError) as exc:
            self._skip(label, f"the rest of it could not be read ({type(exc).__name__}: {exc})")

    def _member_dest(self, where: str, name: str, folder: str) -> str | None:
        parts, why = member_parts(name)
        if why:
            self._skip(where, why)
            return None
        if parts[0] == "__MACOSX":   # macOS's notes on the files beside them: nobody's submission
            self.log.debug("Skipping %s", shown(where))
            return None
        student = self.upload is not None and not self.upload.lms
        if len(parts) > 1 and student:   # a student's own upload is theirs, folders and all (macOS zips a folder)
            parts = parts[-1:]
        elif len(parts) > 1 and not self.member_folders:
            self._skip(where, "it is inside a folder of the archive; only files at its top are collected (a '/' "
                              "in an uploaded name would give the file to whoever the part after it names)")
            return None
        if os.path.splitext(parts[-1])[1] in self.zip_ext and not (self.upload and self.upload.lms):
            self._skip(where, "it is an archive inside an archive (from a student): unpack it by hand if it is "
                              "a submission")
            return None
        return os.path.join(folder, *parts)

    # ---- writing, under the caps ----------------------------------------------------------------

    def _per_file(self, size: int) -> str:
        return (f"it is over the cap of {_size(self.max_file_bytes)} per file (CourseExtractor.max_file_bytes)"
                + (f": {_size(size)}" if size else ": it inflates past it"))

    def _full(self) -> str:
        return (f"the extraction reached its total cap of {_size(self.max_total_bytes)} "
                "(CourseExtractor.max_total_bytes)")

    def _store(self, where: str, stream: SupportsRead[bytes], dest: str, claimed: int) -> bool | None:
        """Write ``stream`` to ``dest``, stopping past the caps: True when it was written, None when it
        was skipped (with its warning); _Full when the total cap or the upload's cap stops it."""
        upload = self.upload if self.upload is not None and self.upload.cap is not None else None
        room = self.left if upload is None else min(self.left, upload.left)
        cap = min(self.max_file_bytes, room - BLOCK)
        if claimed > self.max_file_bytes:
            self._skip(where, self._per_file(claimed))
            return None
        if claimed > cap:
            self._stop(claimed)
        parent = os.path.dirname(dest)
        try:
            os.makedirs(parent, exist_ok=True)
            inside = os.path.realpath(parent)
            if inside != self.root and not inside.startswith(self.root + os.sep):
                self._skip(where, "it would land outside the extracted folder")
                return None
            fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except FileExistsError:
            self._skip(where, "a file of that name was extracted already")
            return None
        except OSError as exc:
            self._skip(where, f"it could not be written ({exc.strerror})")
            return None
        written = 0
        try:
            with os.fdopen(fd, "wb") as out:
                while True:
                    chunk = stream.read(min(1 << 20, cap + 1 - written))
                    if not chunk:
                        break
                    written += len(chunk)
                    if written > cap:   # more than it claimed: stop reading here
                        break
                    out.write(chunk)
        except BaseException:
            os.unlink(dest)
            raise
        if written > cap:
            os.unlink(dest)
            if written > self.max_file_bytes:
                self._skip(where, self._per_file(0))
                return None
            self._stop(written)
        self.left -= max(written, BLOCK)
        if self.upload is not None:
            self.origins[os.path.normpath(dest)] = self.upload
            if upload is not None:
                upload.left -= max(written, BLOCK)
        return True

    def _stop(self, size: int) -> None:
        """_Full for a file of ``size`` bytes that does not fit: the total cap stops everything after
        it, an upload's cap the rest of that upload."""
        if size > self.left - BLOCK or self.upload is None or self.upload.cap is None:
            self.left = 0
            raise _Full(self._full())
        self.upload.left = 0
        raise _Full(self.upload.full())

    def _skip(self, where: str, why: str) -> None:
        self.rejected.append(shown(where))
        self.log.warning("Skipped %s: %s", shown(where), why)

    def _rest(self, label: str, first: str | None, after: int | None, why: str) -> None:
        """One warning for what is left of archive ``label`` once a cap is reached."""
        if first is None:
            what = f"all {after} members" if after is not None else "the rest"
        else:
            what = f"{first} and " + ("every member after it" if after is None else "the member after it"
                                      if after == 1 else f"the {after} members after it")
        self.rejected.append(f"{shown(label)}: {shown(what)}")
        self.log.warning("Skipped %s: %s: %s", shown(label), shown(what), why)


class _Upload:
    """One archive of archive/ while it is extracted: where it came from, and what is left of its caps."""

    def __init__(self, label: str, folder: str, lms: bool, cap: int | None, max_members: int | None):
        self.label, self.folder, self.lms = label, folder, lms   # lms: the LMS's download, no caps of its own
        self.cap, self.max_members = cap, max_members
        self.left = cap if cap is not None else 0
        self.members = 0

    def over(self) -> str:
        """Why the next member is past this upload's caps, or ""."""
        if self.cap is None:
            return ""
        if self.left <= BLOCK:
            return self.full()
        if self.max_members is not None and self.members >= self.max_members:
            return (f"the upload reached its cap of {self.max_members} members "
                    "(CourseExtractor.max_upload_members)")
        return ""

    def full(self) -> str:
        assert self.cap is not None   # an upload without a cap never fills
        return (f"the upload reached its cap of {_size(self.cap)} (CourseExtractor.max_upload_bytes: one "
                "student's archive cannot crowd out the class)")


def _size(n: int) -> str:
    return f"{n // 2**20} MiB" if n >= 2**20 and n % 2**20 == 0 else f"{n} bytes"


class CourseCollector(FileNameCollectorPlugin):
    """nbgrader's file-name collector (its ``named_regexp``), refusing a student id or notebook name
    that could land outside the student's folder or that nbgrader's commands cannot handle, and
    giving a file extracted from a student's archive only to the student the archive's name gives."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rejected = _rejected_list(self.parent)
        self.origins = _origins(self.parent)
        # (student, notebook) -> (first file, timed, direct)
        self.seen: dict[tuple[str, str], tuple[str, bool, bool]] = {}
        self.plan: dict[str, Groups | None] | None = None
        self.owners: dict[str, tuple[Groups, str]] = {}
        self._notebooks: set[str] | None = None

    def collect(self, submitted_file: str) -> Groups | None:
        if self.plan is None:
            self.plan = self._plan()
        key = os.path.normpath(submitted_file)
        if key in self.plan:
            info = self.plan[key]
            return dict(info) if info else None
        return self._decide(submitted_file)

    def _plan(self) -> dict[str, Groups | None]:
        """Every extracted file's fate, decided before nbgrader asks for the first one: the files
        uploaded directly first, then those extracted from archives, so that a copy inside an
        archive never displaces the file the student uploaded."""
        try:
            base = self.parent._format_collect_path(self.parent.extracted_directory)
        except Exception:
            return {}
        files = sorted(os.path.join(here, name) for here, _, names in os.walk(base) for name in names)

        def from_a_student_archive(path: str) -> bool:
            upload = self.origins.get(os.path.normpath(path))
            return upload is not None and not upload.lms

        plan: dict[str, Groups | None] = {}
        for path in sorted(files, key=from_a_student_archive):   # stable: each part stays sorted
            plan[os.path.normpath(path)] = self._decide(path)
        return plan

    def _decide(self, submitted_file: str) -> Groups | None:
        upload = self.origins.get(os.path.normpath(submitted_file))
        if upload is None or upload.lms or os.path.splitext(submitted_file)[1] not in self.valid_ext:
            info = super().collect(submitted_file)
        else:
            info = self._member(submitted_file, upload)
        if not info:
            return info
        label = self._label(submitted_file)
        info = self._released_name(info, label)
        why = student_id_problem(info.get("student_id")) or file_id_problem(info.get("file_id"))
        when = info.get("timestamp")
        if not why and isinstance(when, str) and when:
            try:
                parse_utc(when)
            except (ValueError, OverflowError):
                why = f"its time {shown(when)[:40]!r} is not a time"
        if not why:
            key = (info["student_id"], os.path.splitext(info["file_id"])[0])
            direct = upload is None or upload.lms   # the LMS's own download holds what students uploaded
            first, timed, first_direct = self.seen.setdefault(key, (label, bool(when), direct))
            if first != label and first_direct and upload is not None and not direct:
                why = (f"student {shown(key[0])!r} uploaded {first} directly, and that one is collected, not this "
                       f"copy from inside {shown(upload.label)}")
            elif first != label and not (when and timed):
                why = (f"it is a second {shown(key[1])} of student {shown(key[0])!r} (the first: {first}) and not "
                       "both have a time: only the first is collected; check which one is right")
        if why:
            self._reject(label, why)
            return None
        return info

    def _released_name(self, info: Groups, label: str) -> Groups:
        """``info`` with its notebook named as the release names it, where the name given is that
        name but for its case or a copy's number an LMS or a download added (``Build.ipynb``,
        ``build-1.ipynb``, ``build (1).ipynb``), with a warning naming both."""
        given = info.get("file_id")
        if not isinstance(given, str) or given in self.notebooks():
            return info
        stem, ext = os.path.splitext(given)
        bare = re.sub(r"(-[0-9]+| \([0-9]+\))$", "", stem) + ext
        matches = [nb for nb in self.notebooks() if nb.lower() == bare.lower()]
        if len(matches) != 1:
            return info
        self.log.warning("Collected %s as %s of student %s (the release's name for it)", label, matches[0],
                         shown(str(info.get("student_id"))))
        return {**info, "file_id": matches[0]}

    def notebooks(self) -> set[str]:
        """The release's notebook names (``build.ipynb``, ...)."""
        if self._notebooks is None:
            try:
                coursedir = self.parent.coursedir
                released = coursedir.format_path(coursedir.release_directory, ".", coursedir.assignment_id)
                self._notebooks = set(find_all_notebooks(released))
            except Exception:
                self._notebooks = set()
        return self._notebooks

    def after_transfer(self) -> None:
        """Once nbgrader has copied the files: one warning naming each student whose upload gave
        nothing collected (they have no submission to grade, so no row in the grades)."""
        coursedir = self.parent.coursedir
        missing: list[str] = []
        for label, sid in _uploads(self.parent):
            if not sid or student_id_problem(sid):
                continue
            folder = coursedir.format_path(coursedir.submitted_directory, sid, coursedir.assignment_id)
            if not (os.path.isdir(folder) and any(name.endswith(".ipynb") for name in os.listdir(folder))):
                missing.append(f"{shown(sid)} ({shown(label)})")
        if missing:
            self.log.warning("Nothing was collected for %d student(s), who will have no row in the grades until a "
                             "notebook of theirs is in submitted/ (each skipped file is named above): %s",
                             len(missing), ", ".join(missing))

    def _member(self, path: str, upload: _Upload) -> Groups | None:
        """The info of a notebook extracted from a student's ``upload``: it is the student's whom the
        archive's name gives; a member named only ``<notebook>.ipynb`` is that notebook of theirs, and
        one whose own name gives another student is refused."""
        label = self._label(path)
        owner, why = self._owner(upload)
        if why:
            self._reject(label, f"it is inside {shown(upload.label)}, {why}")
            return None
        own = self.groups(path)
        if own.get("student_id") is None:
            info = {k: v for k, v in owner.items() if k not in ("file_id",)}
            info["file_id"] = os.path.basename(path)
            return info
        if own["student_id"] != owner["student_id"]:
            self._reject(label, (
                f"its name gives student {shown(own['student_id'])!r} but it is inside {shown(upload.label)}, "
                f"the upload of student {shown(owner['student_id'])!r}: a file inside an archive is collected "
                "only for the student the archive's name gives"))
            return None
        return own

    def _owner(self, upload: _Upload) -> tuple[Groups, str]:
        """(the named_regexp's groups for the archive's name; why no student is named, or "")."""
        info, why = self.archive_owner(upload.folder)
        if why:
            why = ("whose name gives no student (named_regexp, read as "
                   f"{shown(os.path.basename(upload.folder))}{self._ext()}): a file inside an archive is collected "
                   "only for the student the archive's name gives") if info.get("student_id") is None else why
        return info, why

    def archive_owner(self, folder: str) -> tuple[Groups, str]:
        """(the named_regexp's groups for the archive unpacked into ``folder``, its name read as a
        notebook of that name, e.g. ``alice_upload.zip`` as ``alice_upload.ipynb``; why no student it
        can be collected for is named, or "")."""
        if folder not in self.owners:
            info = self.groups(folder + self._ext())
            sid = info.get("student_id")
            why = ("its name gives no student" if sid is None else
                   f"whose name gives no student it can be collected for: {student_id_problem(sid)}"
                   if student_id_problem(sid) else "")
            self.owners[folder] = (info, why)
        return self.owners[folder]

    def groups(self, path: str) -> Groups:
        """The named_regexp's groups for the file ``path``, or {} when it does not match."""
        match = re.match(self.named_regexp, path) if self.named_regexp else None
        return match.groupdict() if match else {}

    def _match(self, filename: str) -> Groups | None:
        info = self.groups(filename)
        if not info:
            self.log.warning("Regular expression '%s' did not match anything in: %s", self.named_regexp,
                             shown(filename))
        return info or None

    def _ext(self) -> str:
        return self.valid_ext[0] if self.valid_ext else ".ipynb"

    def _reject(self, label: str, why: str) -> None:
        self.rejected.append(label)
        self.log.warning("Skipped %s: %s", label, why)
        return None

    def _label(self, path: str) -> str:
        try:
            base = self.parent._format_collect_path(self.parent.extracted_directory)
            return shown(os.path.relpath(path, base))
        except Exception:
            return shown(path)


CANVAS = (r".*/(?P<name>[^/]*?)_(?:(?P<late>LATE)_)?(?P<student_id>[0-9]+)_(?P<submission_id>[0-9]+)_"
          r"(?P<file_id>[^/]+)$")


class CanvasCollector(CourseCollector):
    """Canvas's download, as Canvas names each file: ``<name>_[LATE_]<user id>_<submission id>_<file>``
    (``smithjane_LATE_4021_88310_build-1.ipynb``). Chosen with ``--collector``; everything
    :class:`CourseCollector` refuses, it refuses.

    - The student is the one in nbgrader's gradebook whose ``lms_user_id`` is the Canvas user id (the
      id ``course export --lms canvas`` writes back); without one, the Canvas user id itself.
    - ``LATE_`` is Canvas's own mark, and the download gives no time, so no late penalty can apply:
      it is kept as a flag, ``lms_late.txt`` in the student's submission, which ``course autograde``
      lists among the student's flags for the TA.
    - A student the gradebook does not know is collected under the Canvas user id, and recorded in
      the gradebook with it as ``lms_user_id`` (so the Canvas export writes their grade back).
    """

    pattern = Unicode(CANVAS, help="The pattern of Canvas's file names (used instead of named_regexp)").tag(config=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.late: set[str] = set()
        self.unmatched: set[str] = set()   # Canvas user ids no student's lms_user_id is
        self._ids: dict[str, str] | None = None

    def groups(self, path: str) -> Groups:
        match = re.match(self.pattern, path)
        if not match:
            return {}
        info = match.groupdict()
        canvas = info["student_id"]
        info["student_id"] = self.students().get(canvas, canvas)
        if info["student_id"] == canvas:
            self.unmatched.add(canvas)
        return info

    def _decide(self, submitted_file: str) -> Groups | None:
        info = super()._decide(submitted_file)
        if info and info.get("late"):
            self.late.add(info["student_id"])
        return info

    def students(self) -> dict[str, str]:
        """Canvas user id -> nbgrader student id, from the gradebook's ``lms_user_id`` (read once; an
        id two students share maps to neither)."""
        if self._ids is None:
            self._ids = {}
            try:
                url = self.parent.coursedir.db_url
                if not url.startswith("sqlite:///") or os.path.exists(url[len("sqlite:///"):]):
                    from nbgrader.api import Gradebook
                    with Gradebook(url) as gb:
                        pairs = [(str(st.lms_user_id), st.id) for st in gb.students if st.lms_user_id]
                    shared = {lms for lms, _ in pairs if sum(1 for other, _ in pairs if other == lms) > 1}
                    self._ids = {lms: sid for lms, sid in pairs if lms not in shared}
                    for lms in sorted(shared):
                        self.log.warning("Canvas user id %s is the lms_user_id of more than one student: files "
                                         "of that id are collected under the id itself", shown(lms))
            except Exception as exc:   # no gradebook to read: the Canvas user ids themselves
                self.log.warning("The gradebook's lms_user_id could not be read (%s): students are collected "
                                 "under their Canvas user ids", exc)
        return self._ids

    def after_transfer(self) -> None:
        super().after_transfer()
        self.flag_late()
        self.record_canvas_ids()

    def record_canvas_ids(self) -> None:
        """Students collected under their Canvas user id (no student's ``lms_user_id`` is it) go into
        the gradebook with that id as their ``lms_user_id``, so ``course export --lms canvas`` writes
        them; one warning names them."""
        coursedir = self.parent.coursedir
        collected = sorted(sid for sid in self.unmatched if os.path.isdir(
            coursedir.format_path(coursedir.submitted_directory, sid, coursedir.assignment_id)))
        if not collected:
            return
        try:
            from nbgrader.api import Gradebook

            with Gradebook(coursedir.db_url) as gb:
                for sid in collected:
                    gb.update_or_create_student(sid, lms_user_id=sid)
            done = "recorded in the gradebook with that id as lms_user_id"
        except Exception as exc:
            done = f"not recorded in the gradebook ({exc})"
        self.log.warning("%d Canvas user(s) matched no student's lms_user_id and were collected under their Canvas "
                         "user id, %s: %s", len(collected), done, ", ".join(shown(sid) for sid in collected))

    def flag_late(self) -> None:
        """Write the flag into each collected submission Canvas marked late; one line for the TA."""
        coursedir = self.parent.coursedir
        flagged: list[str] = []
        for sid in sorted(self.late):
            folder = coursedir.format_path(coursedir.submitted_directory, sid, coursedir.assignment_id)
            if os.path.isdir(folder) and not os.path.islink(folder):
                with open(os.path.join(folder, LMS_LATE), "w") as f:
                    f.write("Canvas marked this submission late (LATE_ in the download's file names)\n")
                flagged.append(shown(sid))
        if flagged:
            self.log.warning("Canvas marked %d submission(s) late, with no time: %s (each has %s; no late "
                             "penalty applies: check them against the due date)", len(flagged),
                             ", ".join(flagged), LMS_LATE)
