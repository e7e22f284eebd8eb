# Everything runs from the repo's own virtualenv; the first target that needs it creates it.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: test install

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

install: $(VENV)/.installed

test: $(VENV)/.installed
	$(PY) -m pytest -q
