# The two commands of the README: `make book` and `make test`.
# Each creates .venv when it is missing and installs the pinned environment when
# requirements.txt or pyproject.toml changed since the last install.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
REQ_HASH := $(shell cat requirements.txt pyproject.toml | sha256sum | cut -c1-16)
STAMP  := $(VENV)/.installed-$(REQ_HASH)
# pytest-xdist workers for `make test` (chapters are distributed whole, one per worker)
JOBS   ?= 2

.PHONY: help setup book book-zh locale-update test chapter pdf bench bench-build determinism determinism-kernels clean

help:
	@echo "make book     build the HTML book into _build/html (executes every chapter)"
	@echo "make test     unit/property tests of normlib + nbval over every chapter"
	@echo "make chapter CH=rmsnorm   run one chapter under nbval"
	@echo "make book-zh  the Chinese edition into _build/html/zh (reuses the execution cache of make book)"
	@echo "make locale-update   refresh locales/zh_CN catalogs from the English sources"
	@echo "make pdf      the whole book as one PDF (_build/pdf/book.pdf; needs chromium)"
	@echo "make determinism   two cold builds must glue identical values (slow)"
	@echo "make determinism-kernels   every chapter under default and AVX2 kernels (slow)"
	@echo "make bench    run the benchmark scripts (speed and memory figures)"
	@echo "make bench-build   build-time figures: cold/warm book, make test, per chapter"

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

# The Chinese edition (issue 18): same sources, translated through the gettext catalogs
# in locales/zh_CN/LC_MESSAGES (one .po per page). book-zh executes nothing: it needs the
# execution cache of `make book` or `make test`. Not part of `make book` until every
# catalog is translated (tests/check_catalogs.py --all).
book-zh: setup
	$(BIN)/python _ext/locale_tools.py build-zh

locale-update: setup
	$(BIN)/python _ext/locale_tools.py update
	-$(BIN)/python tests/check_catalogs.py   # lists what is left to translate

# Chapters that pass under nbval are stored in the book's execution cache
# (tests/conftest.py), so a `make book` after `make test` does not run them again.
test: setup
	$(BIN)/python -m pytest -n $(JOBS) --dist loadfile

pdf: setup
	$(BIN)/jupyter-book build . --builder singlehtml -W -n --keep-going
	$(BIN)/python _ext/print_pdf.py _build/singlehtml _build/pdf/book.pdf
	@echo "The PDF is _build/pdf/book.pdf"

chapter: setup
	$(BIN)/python -m pytest tests/conftest.py book/$(CH).md

bench: setup
	for f in benchmarks/bench_*.py; do [ "$$f" = benchmarks/bench_build.py ] && continue; echo "== $$f"; $(BIN)/python $$f || exit 1; done

# cold and warm book builds, make test, and each chapter's run time (two full executions)
bench-build: setup
	$(BIN)/python benchmarks/bench_build.py

determinism: setup
	$(BIN)/python _ext/glued_values.py determinism

# every chapter executed with the default and with another set of floating-point kernels:
# all checks must pass under both, and a glued value that moves must be labelled
determinism-kernels: setup
	$(BIN)/python _ext/glued_values.py kernels

clean:
	rm -rf _build
