# Two commands on a fresh machine: `make demo` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test release bench figures clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/course demo

test: $(STAMP)
	$(BIN)/python -m pytest

release: $(STAMP)
	$(BIN)/course release transformer-block

bench: $(STAMP)
	$(BIN)/python bench/autograde_speed.py

figures: $(STAMP)
	$(BIN)/python course/figures.py

clean:
	rm -rf $(VENV) submitted autograded feedback gradebook.db out .pytest_cache
