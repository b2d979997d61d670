"""`nbgrader zip_collect` with the course's extractor and collector (nbgrader_config.py): an LMS
download holding a zip bomb, members with `..` and absolute paths, a link, an archive inside an
archive and names that make odd student ids is collected for everyone else, each file left out is
named in one warning, and nothing lands outside submitted/ or grows past the caps. A student's own
zip gives files only to that student, and has a cap of its own, so no upload crowds out the class.

The caps are set low in the course's configuration (as a TA would set them higher) so that the bomb
is small: a member of 3 MB of spaces, 3 KB compressed, against a 1 MB cap per file.
"""
import io
import json
import os
import tarfile
import zipfile

import pytest

from autograder import api
from autograder.nbgrader.plugins.zip_collect import file_id_problem, member_parts, student_id_problem
from nbgrader_course import ASSIGNMENT, clone_course

pytestmark = pytest.mark.slow

PER_FILE = 1_000_000
TOTAL = 4_000_000


def _notebook(root, name, who):
    nb = json.loads((root / "assignments" / ASSIGNMENT / f"{name}.ipynb").read_text())
    nb["metadata"]["handed_in_by"] = f"answer of {who}"
    return json.dumps(nb).encode()


@pytest.fixture(scope="module")
def collected(course, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("zip-collect")
    root = clone_course(course, tmp / "course")
    with open(root / "nbgrader_config.py", "a") as f:
        f.write(f"\nc.CourseExtractor.max_file_bytes = {PER_FILE}\nc.CourseExtractor.max_total_bytes = {TOTAL}\n"
                # the LMS's downloads of the whole class: each member goes to the student its own name gives
                "c.CourseExtractor.lms_archives = ['a-lms-download.zip', 'b-more.tar.gz', 'z-many.zip']\n")
    archive = root / "downloaded" / ASSIGNMENT / "archive"
    archive.mkdir(parents=True)
    with zipfile.ZipFile(archive / "a-lms-download.zip", "w", zipfile.ZIP_DEFLATED) as z:
        for who in ("alice", "bob"):
            for name in ("concepts", "build"):
                z.writestr(f"{who}_{name}.ipynb", _notebook(root, name, who))
        z.writestr("../../../evil_build.ipynb", _notebook(root, "build", "evil"))   # would land beside the course
        z.writestr("../../..", b"x")                                                # stopped nbgrader's whole run
        z.writestr("/tmp/absolute_build.ipynb", _notebook(root, "build", "absolute"))
        z.writestr(".._build.ipynb", _notebook(root, "build", "dotdot"))           # student id ".."
        z.writestr("mallory_x/bob_build.ipynb", _notebook(root, "build", "mallory"))  # a "/" in mallory's name
        z.writestr("dan\x1b[2J_build.ipynb", _notebook(root, "build", "dan"))      # a control character
        z.writestr("bomb_build.ipynb", b" " * 3_000_000)                            # inflates past the cap
        z.writestr("zed_nested.zip", b"PK")                                         # an archive in an archive
        link = zipfile.ZipInfo("linky_build.ipynb")
        link.external_attr = 0o120777 << 16
        z.writestr(link, "/etc/passwd")
    with tarfile.open(archive / "b-more.tar.gz", "w:gz") as t:
        data = _notebook(root, "build", "erin")
        info = tarfile.TarInfo("erin_build.ipynb")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
        sym = tarfile.TarInfo("frank_build.ipynb")
        sym.type, sym.linkname = tarfile.SYMTYPE, "/etc/passwd"
        t.addfile(sym)
        bomb = tarfile.TarInfo("tarbomb_build.ipynb")   # 5 MB of zeros: more than the total cap to read through
        bomb.size = 5_000_000
        t.addfile(bomb, io.BytesIO(bytes(bomb.size)))
        late = tarfile.TarInfo("gina_build.ipynb")
        late.size = 2
        t.addfile(late, io.BytesIO(b"{}"))
    (archive / "carol_build.ipynb").write_bytes(_notebook(root, "build", "carol"))
    (archive / ".._concepts.ipynb").write_bytes(_notebook(root, "concepts", "dotdot"))
    with zipfile.ZipFile(archive / "z-many.zip", "w", zipfile.ZIP_DEFLATED) as z:   # past the total cap
        for i in range(12):
            z.writestr(f"many{i:02d}_build.ipynb", b" " * 900_000)
    done = api.nbgrader("zip_collect", ASSIGNMENT, "--force", repo=root, check=False)
    return tmp, root, done


def test_the_collection_completes_and_collects_everyone_else(collected):
    tmp, root, done = collected
    assert done.returncode == 0, done.stderr[-3000:]
    submitted = root / "submitted"
    students = sorted(p.name for p in submitted.iterdir())
    assert students[:4] == ["alice", "bob", "carol", "erin"], students
    assert all(s.startswith("many") for s in students[4:]) and 0 < len(students[4:]) < 12, students
    assert sorted(p.name for p in (submitted / "alice" / ASSIGNMENT).iterdir()) == ["build.ipynb", "concepts.ipynb"]
    assert b"answer of bob" in (submitted / "bob" / ASSIGNMENT / "build.ipynb").read_bytes()   # not mallory's
    assert b"answer of erin" in (submitted / "erin" / ASSIGNMENT / "build.ipynb").read_bytes()


def test_nothing_lands_outside_submitted_and_nothing_grows_past_the_caps(collected):
    tmp, root, done = collected
    assert not (root / ASSIGNMENT).exists() and not (root / "submitted" / "..").resolve().joinpath(ASSIGNMENT).exists()
    everything = [p for p in tmp.rglob("*")]
    assert not [p for p in everything if "evil" in p.name or "absolute" in p.name or "dotdot" in p.name]
    assert not os.path.lexists("/tmp/absolute_build.ipynb")
    assert not [p for p in everything if p.is_symlink()]
    extracted = root / "downloaded" / ASSIGNMENT / "extracted"
    sizes = [p.stat().st_size for p in extracted.rglob("*") if p.is_file()]
    assert max(sizes) <= PER_FILE and sum(sizes) <= TOTAL, sizes
    assert not any("bomb" in p.name or "zed" in p.name or "linky" in p.name or "frank" in p.name or "gina" in p.name
                   for p in extracted.rglob("*"))
    for bad in ("..", "ali", "mallory_x", "dan\x1b[2J", "bomb", "linky", "frank", "tarbomb", "gina"):
        assert not (root / "submitted" / bad / ASSIGNMENT).exists(), bad


@pytest.mark.parametrize("name, why", [
    ("../../../evil_build.ipynb", "its path holds '..'"),
    ("a-lms-download.zip: ../../..:", "its path holds '..'"),
    ("/tmp/absolute_build.ipynb", "it has an absolute path"),
    ("mallory_x/bob_build.ipynb", "it is inside a folder of the archive"),
    ("dan\\x1b[2J_build.ipynb", "its name holds a control character"),
    ("bomb_build.ipynb", f"over the cap of {PER_FILE} bytes per file"),
    ("zed_nested.zip", "neither a zip nor a tar archive"),   # a student's zip in the LMS's download: opened
    ("linky_build.ipynb", "it is a link"),
    ("frank_build.ipynb", "it is a link or a special file"),
    ("tarbomb_build.ipynb and every member after it", "more than the total cap of 4000000 bytes"),
    (".._build.ipynb", "the student id would be '..'"),
    (".._concepts.ipynb", "the student id would be '..'"),
    ("z-many.zip", "reached its total cap"),
])
def test_each_file_left_out_gets_one_warning_with_its_reason(collected, name, why):
    tmp, root, done = collected
    lines = [line for line in done.stderr.splitlines() if "Skipped" in line]
    hits = [line for line in lines if name in line and why in line]
    assert len(hits) == 1, (name, why, lines)


def test_the_ta_gets_a_summary_and_no_escape_sequence(collected):
    tmp, root, done = collected
    (summary,) = [line for line in done.stderr.splitlines() if "zip_collect left out" in line]
    assert "dan\\x1b[2J_build.ipynb" in summary and "a-lms-download.zip: ../../.." in summary
    assert "\x1b" not in done.stderr


@pytest.mark.parametrize("sid", ["", " ", ".", "..", ".hidden", "a/b", "a\\b", "a\x07b", "a\nb", "a*", "x" * 300])
def test_odd_student_ids_are_refused(sid):
    assert student_id_problem(sid)


@pytest.mark.parametrize("sid", ["alice", "j_smith", "Zoë Müller", "s1234567", "o'neil"])
def test_ordinary_student_ids_are_kept(sid):
    assert not student_id_problem(sid)


@pytest.mark.parametrize("name", ["/etc/x", "\\x", "C:x", "a/../b", "..\\b", "a\x00b", ""])
def test_unsafe_member_paths_and_notebook_names_are_refused(name):
    assert member_parts(name)[1] or not member_parts(name)[0]
    assert file_id_problem(name)


def test_nbgraders_own_layout_is_kept():
    assert member_parts("./alice_build.ipynb") == (["alice_build.ipynb"], "")
    assert not file_id_problem("build.ipynb") and not file_id_problem("data/build.ipynb")
    assert os.sep == "/"


# ---- one archive per student upload: whose its files are, and a cap for each upload -------------

UPLOAD_FILE = 200_000   # the cap per file here; the assignment has two notebooks, so 400 kB per upload


def _zip(path, members):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members:
            z.writestr(name, data)


@pytest.fixture(scope="module")
def uploads(course, tmp_path_factory):
    """An LMS download unpacked into archive/: each student's files, some of them zips the student
    made, and a zip whose name gives no student (so the staff's: its members go by their own names).
    mallory's zips hold classmates' notebooks (one named to sort before alice's own file), a
    bomb of members each under the cap per file would fill the total cap, and classmates come after it."""
    tmp = tmp_path_factory.mktemp("zip-uploads")
    root = clone_course(course, tmp / "course")
    with open(root / "nbgrader_config.py", "a") as f:   # without a cap per upload the bomb fills the total
        f.write(f"\nc.CourseExtractor.max_file_bytes = {UPLOAD_FILE}\nc.CourseExtractor.max_total_bytes = 3_000_000\n"
                "c.CourseExtractor.max_upload_members = 5\n")
    archive = root / "downloaded" / ASSIGNMENT / "archive"
    archive.mkdir(parents=True)
    nb = lambda name, who: _notebook(root, name, who)   # noqa: E731
    (archive / "alice_build.ipynb").write_bytes(nb("build", "alice"))
    _zip(archive / "aaa_upload.zip", [("alice_build.ipynb", nb("build", "mallory")),    # sorts before alice's own
                                      ("zed_build.ipynb", nb("build", "mallory"))])
    _zip(archive / "mallory_upload.zip", [("alice_build.ipynb", nb("build", "mallory")),
                                          ("zed_build.ipynb", nb("build", "mallory")),
                                          ("build.ipynb", nb("build", "mallory"))])      # her own, as LMSs wrap it
    _zip(archive / "alice_late.zip", [("build.ipynb", nb("build", "alice late")),        # beside her own upload
                                      ("alice_concepts.ipynb", nb("concepts", "alice"))])
    _zip(archive / "class.zip", [("carol_build.ipynb", nb("build", "carol"))])   # names no student: the staff's
    _zip(archive / "bomb_upload.zip", [(f"b{i:02d}_build.ipynb", b" " * 190_000) for i in range(60)])
    with tarfile.open(archive / "tina_upload.tar.gz", "w:gz") as t:   # more than her upload to read through
        for name, data in (("concepts.ipynb", b" " * 190_000), ("zeros.ipynb", bytes(2_000_000)),
                           ("build.ipynb", nb("build", "tina"))):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    _zip(archive / "many_upload.zip", [(f".git/objects/{i:03d}", b"x") for i in range(150)]   # not counted
         + [(f"n{i}.ipynb", b"{}") for i in range(6)] + [("build.ipynb", b"{}")])
    _zip(archive / "dave_upload.zip", [("build.ipynb", nb("build", "dave")),
                                       ("concepts.ipynb", nb("concepts", "dave"))])
    for who in ("erin", "zoe"):
        (archive / f"{who}_build.ipynb").write_bytes(nb("build", who))
    done = api.nbgrader("zip_collect", ASSIGNMENT, "--force", repo=root, check=False)
    return root, done


def _skipped(done, *words):
    return [line for line in done.stderr.splitlines() if "Skipped " in line and all(w in line for w in words)]


def test_a_file_inside_an_archive_is_only_the_uploaders(uploads):
    root, done = uploads
    assert done.returncode == 0, done.stderr[-3000:]
    submitted = root / "submitted"
    assert not (submitted / "zed").exists()
    assert b"answer of carol" in (submitted / "carol" / ASSIGNMENT / "build.ipynb").read_bytes()   # by its own name
    alice = submitted / "alice" / ASSIGNMENT
    assert b"answer of alice" in (alice / "build.ipynb").read_bytes()            # her own upload, not mallory's
    assert b"answer of alice" in (alice / "concepts.ipynb").read_bytes()         # from her own zip
    assert b"answer of mallory" in (submitted / "mallory" / ASSIGNMENT / "build.ipynb").read_bytes()
    for upload, who in (("aaa_upload", "aaa"), ("mallory_upload", "mallory")):
        for other in ("alice", "zed"):
            (line,) = _skipped(done, f"{upload}/{other}_build.ipynb:", f"gives student '{other}'",
                               f"{upload}.zip, the upload of student '{who}'")
    (line,) = _skipped(done, "alice_late/build.ipynb:", "uploaded alice_build.ipynb directly")
    assert not (submitted / "aaa").exists()   # nothing of aaa's own was in the zip


def test_each_upload_has_its_own_cap_and_the_class_after_a_bomb_is_collected(uploads):
    root, done = uploads
    submitted = root / "submitted"
    for who in ("dave", "erin", "zoe"):   # after the bomb, by name
        assert b"answer of " + who.encode() in (submitted / who / ASSIGNMENT / "build.ipynb").read_bytes(), who
    assert b"answer of dave" in (submitted / "dave" / ASSIGNMENT / "concepts.ipynb").read_bytes()
    # the bomb's members name students of their own (b00...): none of them is created
    assert sorted(p.name for p in submitted.iterdir()) == ["alice", "carol", "dave", "erin", "mallory", "many", "tina",
                                                            "zoe"]   # many: the five notebooks within its cap
    (line,) = _skipped(done, "bomb_upload/b01_build.ipynb:", "gives student 'b01'", "upload of student 'bomb'")
    (line,) = _skipped(done, "bomb_upload.zip: b02_build.ipynb and the 57 members after it",
                       "the upload reached its cap of 400000 bytes")
    (line,) = _skipped(done, "tina_upload.tar.gz: zeros.ipynb and every member after it",
                       "more than the cap of 400000 bytes per upload")
    (line,) = _skipped(done, "many_upload.zip: n5.ipynb and the member after it",
                       "the upload reached its cap of 5 members")
    assert not _skipped(done, "total cap")
    assert not (submitted / "many" / ASSIGNMENT / "build.ipynb").exists()
    extracted = root / "downloaded" / ASSIGNMENT / "extracted"
    assert sum(p.stat().st_size for p in (extracted / "bomb_upload").iterdir()) <= 400_000


# ---- Canvas's download, dropped in archive/ as nbgrader's documentation says ----------------------

@pytest.fixture(scope="module")
def canvas(course, tmp_path_factory):
    """Canvas's ``submissions.zip`` as Canvas names its members, dropped in archive/ with nothing
    configured: jsmith is in the gradebook with her Canvas user id, 4022 is not (late, and his file
    renamed on a second upload); mallory's own zip holds a classmate's notebook; zed's zip is a bomb
    of members each under the cap per file; a member inflates past the cap; one climbs out with '..'."""
    tmp = tmp_path_factory.mktemp("zip-canvas")
    root = clone_course(course, tmp / "course")
    with open(root / "nbgrader_config.py", "a") as f:
        f.write(f"\nc.CourseExtractor.max_file_bytes = {UPLOAD_FILE}\n")
    api.nbgrader("db", "student", "add", "jsmith", "--lms-user-id=4021", repo=root)
    archive = root / "downloaded" / ASSIGNMENT / "archive"
    archive.mkdir(parents=True)
    nb = lambda name, who: _notebook(root, name, who)   # noqa: E731
    mallory = io.BytesIO()
    _zip(mallory, [("build.ipynb", nb("build", "mallory")),
                   ("smithjane_4021_88310_concepts.ipynb", nb("concepts", "mallory"))])
    bomb = io.BytesIO()
    _zip(bomb, [(f"b{i:02d}.ipynb", b" " * 190_000) for i in range(60)])
    folder_zip = io.BytesIO()
    _zip(folder_zip, [("hw4/build.ipynb", nb("build", "foldery")), ("hw4/concepts.ipynb", nb("concepts", "foldery")),
                      ("__MACOSX/hw4/._build.ipynb", b"\0\5\26\7"), ("hw4/.git/config", b"[core]")]
         + [(f"hw4/.git/objects/{i:03d}", b"x") for i in range(150)])
    _zip(archive / "submissions.zip", [
        ("smithjane_4021_88310_build.ipynb", nb("build", "jsmith")),
        ("smithjane_4021_88310_concepts.ipynb", nb("concepts", "jsmith")),
        ("doejohn_LATE_4022_88311_build-1.ipynb", nb("build", "john")),
        ("mallorymay_4023_88312_upload.zip", mallory.getvalue()),
        ("zedzed_4024_88313_upload.zip", bomb.getvalue()),
        ("bigbig_4025_88314_build.ipynb", b" " * 3 * UPLOAD_FILE),
        ("../../evilevil_4026_88315_build.ipynb", nb("build", "evil")),
        ("notes_4027_88316_hello.txt", b"not a notebook"),
        ("foldery_4033_88323_hw4.zip", folder_zip.getvalue()),      # macOS's "Compress" of a folder
        ("caps_4041_88331_Build.ipynb", nb("build", "caps")),       # renamed by the student or a download
        ("caps_4041_88331_concepts (1).ipynb", nb("concepts", "caps")),
        ("corrupt_4042_88332_upload.zip", b"PK\x03\x04 not a zip"),
    ])
    done = api.nbgrader("zip_collect", ASSIGNMENT, "--force",
                        "--collector=autograder.nbgrader.plugins.zip_collect.CanvasCollector", repo=root, check=False)
    return root, done


def test_canvas_download_in_archive_collects_everyone_in_it_by_their_ids(canvas):
    root, done = canvas
    assert done.returncode == 0, done.stderr[-3000:]
    submitted = root / "submitted"
    # 4024's zip (the bomb) gives its first members to 4024 alone, under the names it gave them
    assert sorted(p.name for p in submitted.iterdir()) == ["4022", "4023", "4024", "4033", "4041", "jsmith"], \
        done.stderr[-3000:]
    jsmith = submitted / "jsmith" / ASSIGNMENT
    assert sorted(p.name for p in jsmith.iterdir()) == ["build.ipynb", "concepts.ipynb"]
    assert b"answer of jsmith" in (jsmith / "concepts.ipynb").read_bytes()   # not mallory's copy
    john = submitted / "4022" / ASSIGNMENT
    assert sorted(p.name for p in john.iterdir()) == ["build.ipynb", "lms_late.txt"]   # "-1" dropped; late kept
    assert b"answer of john" in (john / "build.ipynb").read_bytes()
    assert not (jsmith / "lms_late.txt").exists()
    (line,) = [line for line in done.stderr.splitlines() if "marked 1 submission(s) late" in line]
    assert "4022" in line
    mallory = submitted / "4023" / ASSIGNMENT
    assert sorted(p.name for p in mallory.iterdir()) == ["build.ipynb"]
    assert b"answer of mallory" in (mallory / "build.ipynb").read_bytes()


def test_canvas_download_still_skips_a_bomb_a_climb_and_a_classmates_file(canvas):
    root, done = canvas
    (line,) = _skipped(done, "mallorymay_4023_88312_upload/smithjane_4021_88310_concepts.ipynb:",
                       "gives student 'jsmith'", "the upload of student '4023'")
    (line,) = _skipped(done, "submissions.zip: zedzed_4024_88313_upload.zip: b02.ipynb and the 57 members after it",
                       "the upload reached its cap of 400000 bytes")
    (line,) = _skipped(done, "submissions.zip: bigbig_4025_88314_build.ipynb", "over the cap of 200000 bytes per file")
    (line,) = _skipped(done, "submissions.zip: ../../evilevil_4026_88315_build.ipynb", "its path holds '..'")
    extracted = root / "downloaded" / ASSIGNMENT / "extracted"
    assert not list(extracted.rglob("*.zip"))   # each student's zip is opened, then removed
    assert sum(p.stat().st_size for p in extracted.rglob("zedzed*/*")) <= 400_000
    assert not [p for p in root.parent.rglob("*") if "evil" in p.name]
    assert not (root / "submitted" / "4025").exists() and not (root / "submitted" / "4027").exists()


def test_an_honest_upload_is_collected_whatever_its_folders_or_copy_numbers(canvas):
    """A zipped folder (its notebooks one folder down, macOS's notes, a repository's .git beside
    them) and notebooks renamed Build.ipynb or "concepts (1).ipynb": collected under the release's
    names, each renaming in a warning."""
    root, done = canvas
    for sid, who in (("4033", "foldery"), ("4041", "caps")):
        folder = root / "submitted" / sid / ASSIGNMENT
        assert sorted(p.name for p in folder.iterdir()) == ["build.ipynb", "concepts.ipynb"], sid
        assert f"answer of {who}".encode() in (folder / "build.ipynb").read_bytes()
    assert [line for line in done.stderr.splitlines() if "as concepts.ipynb of student 4041" in line]
    assert not _skipped(done, "foldery")   # the folder's .git and macOS's notes left out quietly


def test_who_gets_nothing_collected_is_named_and_canvas_ids_reach_the_gradebook(canvas):
    root, done = canvas
    (line,) = [line for line in done.stderr.splitlines() if "Nothing was collected for" in line]
    assert "1 student(s)" in line and "4042 (submissions.zip: corrupt_4042_88332_upload.zip)" in line
    (line,) = [line for line in done.stderr.splitlines() if "matched no student's lms_user_id" in line]
    assert "4022, 4023, 4024, 4033, 4041" in line
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        ids = {st.id: st.lms_user_id for st in gb.students}
    assert ids["4022"] == "4022" and ids["jsmith"] == "4021"
