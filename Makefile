# The two commands of the README: `make book` and `make test`.
# Each creates .venv when it is missing and installs the pinned environment when
# requirements.txt or pyproject.toml changed since the last install.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
REQ_HASH := $(shell cat requirements.txt pyproject.toml | sha256sum | cut -c1-16)
STAMP  := $(VENV)/.installed-$(REQ_HASH)

.PHONY: help setup book test chapter bench clean

help:
	@echo "make book     build the HTML book into _build/html (executes every chapter)"
	@echo "make test     unit/property tests of normlib + nbval over every chapter"
	@echo "make chapter CH=rmsnorm   run one chapter under nbval"
	@echo "make bench    run the benchmark scripts"

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --disable-pip-version-check -q -r requirements.txt
	$(BIN)/python -m pip install --disable-pip-version-check -q --no-deps --no-build-isolation -e .
	rm -f $(VENV)/.installed-*
	touch $@

setup: $(STAMP)

book: setup
	$(BIN)/jupyter-book build . -W -n --keep-going
	@echo "The book is in _build/html: open _build/html/index.html in a browser."

test: setup
	$(BIN)/python -m pytest

chapter: setup
	$(BIN)/python -m pytest tests/conftest.py book/$(CH).md

bench: setup
	for f in benchmarks/*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf _build
