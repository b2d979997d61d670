# Two commands on a fresh machine: `make demo` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast test-unit lint image-deps browser sandbox postgresql release bench figures clean

# pip compiles every installed module one at a time; compileall does the same on every core. (The
# one file it skips is torch's test helper written in Python 3.12 syntax.)
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-compile -e '.[test]'
	$(BIN)/python -m compileall -q -j 0 -x py312_intrinsics $(VENV)/lib >/dev/null
	touch $(STAMP)

# What grading needs (the Dockerfile builds its image with exactly this): .venv and the sandbox's
# system packages. `make test` and `make demo` make it first, so the image's steps are tested here.
image-deps: $(STAMP) sandbox

demo: image-deps
	$(BIN)/course demo

# The test files run side by side, one process per core; a file's tests stay in one process, so
# a module's graded class is built once.
PYTEST := $(BIN)/python -m pytest -n auto --dist loadfile

test: image-deps browser postgresql lint
	$(PYTEST)

# Seconds, not minutes: the pipeline, scoring, feedback and report on the toy set, in this process
# (no nbgrader command, no sandbox), and the grader's pure parts (the free-text matcher, the
# references, the route judge's spellings). One process: xdist's workers would each import torch
# and build the toy set again, which costs more than they save (15 s here against 30 s with -n auto).
test-unit: $(STAMP)
	$(BIN)/python -m pytest -q -p no:xdist -m "unit and not sandboxed"

# Style and types of the grader.
lint: $(STAMP)
	$(BIN)/ruff check autograder tests
	$(BIN)/mypy autograder
	$(BIN)/mypy --disallow-untyped-defs autograder/grader_side autograder/nbgrader

# The quick loop while working: everything but the suites marked slow.
test-fast: image-deps browser postgresql
	$(PYTEST) -m "not slow"

# The page tests render feedback and the report in Debian's headless Chromium.
browser:
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || \
	  echo "chromium is missing and cannot be installed here: the browser tests will be skipped"

# course autograde runs student code inside bubblewrap, under a seccomp filter built with libseccomp.
sandbox:
	@{ command -v bwrap && $(PYTHON) -c "import ctypes; ctypes.CDLL('libseccomp.so.2')"; } >/dev/null 2>&1 || \
	  { [ "$$(id -u)" = 0 ] && apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap libseccomp2 >/dev/null; } || \
	  echo "bubblewrap or libseccomp2 is missing and cannot be installed here: course autograde will refuse to grade"

# The gradebook tests start a PostgreSQL server (Debian's package: initdb and pg_ctl, run by the test
# as an unprivileged user in a temporary folder).
postgresql:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null || \
	  { [ "$$(id -u)" = 0 ] && apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; } || \
	  echo "postgresql is missing and cannot be installed here: the PostgreSQL tests will be skipped"

# Every week of course/schedule.toml, released again (git shows what changed).
release: $(STAMP)
	$(BIN)/python -c "from autograder import api; [api.release(w['assignment']) for w in api.schedule()]"

# A class, then one submission on its own (course grade, Gradescope's run): there start-up is the cost.
bench: $(STAMP)
	$(BIN)/python bench/autograde_speed.py
	$(BIN)/python bench/one_submission.py

figures: $(STAMP)
	$(BIN)/python course/figures.py

clean:
	rm -rf $(VENV) submitted autograded feedback gradebook.db out .pytest_cache autograder.zip
