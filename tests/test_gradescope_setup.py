"""Gradescope's setup.sh on each base image Gradescope offers, run here by bash with stand-ins for
the image (its /etc/os-release, apt-get or dnf, getconf's C library, its Pythons): it takes the
image's own Python when the kit runs on it, installs a supported one from the image's archive when
it has one, and otherwise stops before installing anything, in one line naming the image and what to
choose; torch comes from its CPU index unless the index is emptied."""
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from autograder.tooling import gradescope

pytestmark = pytest.mark.unit

TOOLS = ("awk", "sort", "head", "cut", "du", "chmod", "mkdir", "cp")


@dataclass
class Image:
    name: str                          # PRETTY_NAME
    pm: str | None                     # apt, dnf or none
    glibc: str | None
    pythons: dict = field(default_factory=dict)   # on PATH: command -> (version, has ensurepip)
    archive: tuple = ()                # versions the package archive has


UBUNTU_22 = Image("Ubuntu 22.04.4 LTS", "apt", "2.35", {"python3": ("3.10", False)}, ("3.11",))
IMAGES = {
    "ubuntu-22.04": UBUNTU_22,
    "ubuntu-24.04": Image("Ubuntu 24.04.1 LTS", "apt", "2.39", {"python3": ("3.12", False)}, ("3.12",)),
    "ubuntu-20.04": Image("Ubuntu 20.04.6 LTS", "apt", "2.31", {"python3": ("3.8", False)}, ("3.8", "3.9")),
    "ubuntu-18.04": Image("Ubuntu 18.04.6 LTS", "apt", "2.27", {"python3": ("3.6", False)}, ("3.7", "3.8")),
    "fedora-40": Image("Fedora Linux 40 (Container Image)", "dnf", "2.39", {"python3": ("3.12", True)}),
    "rocky-8": Image("Rocky Linux 8.9 (Green Obsidian)", "dnf", "2.28", {"python3": ("3.6", True)}, ("3.9", "3.11")),
    "no-package-manager": Image("Alpine Linux v3.20", None, None, {"python3": ("3.12", True)}),
}


def _script(path: Path, body: str) -> None:
    path.write_text("#!/bin/bash\n" + body)
    path.chmod(0o755)


def _python(path: Path, version: str, ensurepip: bool, log: Path) -> None:
    """A stand-in interpreter: answers setup.sh's questions, logs what it is asked to run, and makes a
    virtual environment whose python logs its pip commands."""
    _script(path, f"""echo "{path.name} $*" >> {log}
case "$1" in
  -c) case "$2" in *version_info*) echo {version} ;; *ensurepip*) exit {0 if ensurepip else 1} ;; esac ;;
  -m) if [ "$2" = venv ]; then mkdir -p "$3/bin"; printf '#!/bin/bash\\necho "venv-python $*" >> {log}\\n' \
        > "$3/bin/python"; chmod +x "$3/bin/python"; fi ;;
esac
""")


def run_setup(tmp_path: Path, image: Image, **env) -> tuple[subprocess.CompletedProcess, list[str]]:
    bin_, log = tmp_path / "bin", tmp_path / "log"
    bin_.mkdir()
    log.write_text("")
    for tool in TOOLS:
        os.symlink(shutil.which(tool), bin_ / tool)
    for command, (version, ensurepip) in image.pythons.items():
        _python(bin_ / command, version, ensurepip, log)
    archive = tmp_path / "archive"   # what the package archive's pythonX.Y packages install
    archive.mkdir()
    for v in image.archive:
        _python(archive / f"python{v}", v, True, log)
    installer = f'for p in "$@"; do if [ -e {archive}/$p ]; then cp {archive}/$p {bin_}/$p; fi; done\n'
    if image.pm == "apt":
        _script(bin_ / "apt-get", f'echo "apt-get $*" >> {log}\nif [ "$1" = install ]; then\n{installer}fi\n')
        _script(bin_ / "apt-cache", f'echo "apt-cache $*" >> {log}\n'   # pythonX.Y-venv: the archive has X.Y
                                    f'if [ -e {archive}/${{2%-venv}} ]; then exit 0; fi; exit 100\n')
    elif image.pm == "dnf":
        _script(bin_ / "dnf", f'echo "dnf $*" >> {log}\nif [ "$1" = install ]; then\n{installer}fi\n'
                              f'if [ "$2" = list ]; then if [ -e {archive}/$4 ]; then exit 0; fi; exit 1; fi\n')
    if image.glibc:
        _script(bin_ / "getconf", f'echo "glibc {image.glibc}"\n')
    os_release = tmp_path / "os-release"
    os_release.write_text(f'PRETTY_NAME="{image.name}"\nID=test\n')
    root = tmp_path / "autograder"
    (root / "source").mkdir(parents=True)
    setup = tmp_path / "setup.sh"
    setup.write_text(gradescope.scripts("transformer-block")["setup.sh"])
    done = subprocess.run(["/bin/bash", str(setup)], capture_output=True, text=True, timeout=60,
                          env={"PATH": str(bin_), "AUTOGRADER_ROOT": str(root), "COURSE_VENV": str(tmp_path / "venv"),
                               "COURSE_OS_RELEASE": str(os_release), **env})
    return done, log.read_text().splitlines()


def _pip(log: list[str]) -> list[str]:
    return [line.removeprefix("venv-python -m pip install --quiet --disable-pip-version-check ")
            for line in log if line.startswith("venv-python -m pip install")]


@pytest.mark.parametrize("key, python, packages", [
    ("ubuntu-22.04", "python3", "bubblewrap libseccomp2 python3.10-venv"),   # the image's own 3.10
    ("ubuntu-24.04", "python3", "bubblewrap libseccomp2 python3.12-venv"),
    ("fedora-40", "python3", "bubblewrap libseccomp"),
    ("rocky-8", "python3.11", "bubblewrap libseccomp python3.11"),           # its 3.6 is too old: the archive's
])
def test_an_image_it_serves_gets_a_supported_python_and_torchs_cpu_build(tmp_path, key, python, packages):
    done, log = run_setup(tmp_path, IMAGES[key])
    assert done.returncode == 0, done.stderr + "\n".join(log)
    (installed,) = [line for line in log if line.split()[1:2] == ["install"]]
    assert installed.endswith(packages), installed
    assert f"{python} -m venv {tmp_path / 'venv'}" in log
    pip = _pip(log)
    assert pip[0] == "--upgrade pip"
    assert pip[1] == f"--index-url {gradescope.TORCH_CPU_INDEX} torch==2.13.0"   # before anything pulls torch
    assert pip[2].startswith("torch==2.13.0 nbgrader>=0.9,<0.10 ") and pip[3] == f"-e {tmp_path / 'autograder/source'}"
    assert f"setup.sh: {IMAGES[key].name}, " in done.stdout and "setup.sh: installed in " in done.stdout


@pytest.mark.parametrize("key, why", [
    ("ubuntu-20.04", "has no Python 3.10 to 3.13 (its python3 is 3.8), nor one in its package archive"),
    ("ubuntu-18.04", "has glibc 2.27, older than the 2.28 torch 2.13.0's wheels need"),
    ("no-package-manager", "has no apt-get, dnf or yum to install the sandbox's packages with"),
])
def test_an_image_it_cannot_serve_stops_it_before_anything_is_installed_in_one_line(tmp_path, key, why):
    done, log = run_setup(tmp_path, IMAGES[key])
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"setup.sh: {IMAGES[key].name} {why}: choose Gradescope's Ubuntu 22.04 base image"), line
    assert not [entry for entry in log if " install" in entry or " -m venv" in entry], log
    assert not (tmp_path / "venv").exists() and done.stdout == ""


def test_an_emptied_torch_index_takes_pypis_torch_and_an_extra_index_is_added(tmp_path):
    done, log = run_setup(tmp_path, UBUNTU_22, COURSE_TORCH_INDEX_URL="",
                          COURSE_EXTRA_INDEX_URL="https://example.org/simple")
    assert done.returncode == 0, done.stderr
    pip = _pip(log)
    assert not [p for p in pip if "--index-url https" in p.split("--extra-index-url")[0]]
    assert all(p.startswith("--extra-index-url https://example.org/simple ") for p in pip), pip
    assert len(pip) == 3   # pip itself, the pins, the kit


def test_the_versions_setup_names_are_pyprojects_and_torchs():
    setup = gradescope.scripts("transformer-block")["setup.sh"]
    assert "python3.13 python3.12 python3.11 python3.10" in setup and "3.13|3.12|3.11|3.10)" in setup
    assert "@" not in setup.replace('"${PIP[@]}"', "").replace('"${PACKAGES[@]}"', "").replace('${EXTRA[@]', "")
