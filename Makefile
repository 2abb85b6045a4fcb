# The two commands of the README: `make book` and `make test`.
# Each creates .venv when it is missing and installs the pinned environment when the
# contents of requirements.txt or pyproject.toml changed since the last install (the
# stamp's name is their hash; file dates play no part, so a fresh checkout of the same
# files does not re-run pip).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
REQ_HASH := $(shell cat requirements.txt pyproject.toml | sha256sum | cut -c1-16)
STAMP  := $(VENV)/.installed-$(REQ_HASH)
# pytest-xdist workers for `make test` (chapters are distributed whole, one per worker)
JOBS   ?= 2
# every command imports this checkout's normlib (tests/conftest.py asserts it), never
# another copy an editable install may point to; no code path may reach a model hub
export PYTHONPATH := $(CURDIR)$(if $(PYTHONPATH),:$(PYTHONPATH))
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: help setup requirements book book-zh html-en pdf-en pdf-zh locale-update test chapter pages ledger pdf bench bench-build determinism determinism-kernels determinism-threads downloads-check clean

help:
	@echo "make book     build the HTML book into _build/html (executes every chapter)"
	@echo "make test     unit/property tests of normlib + nbval over every chapter"
	@echo "make chapter CH=rmsnorm   run one chapter under nbval"
	@echo "make pages CH=rmsnorm     build one chapter and its evidence page alone (_build/pages; for reading)"
	@echo "make ledger   rewrite the claims ledger's rows (book/ledger.md) from normlib/claims.toml"
	@echo "make book-zh  the Chinese edition into _build/html/zh (reuses the execution cache of make book)"
	@echo "make locale-update   refresh locales/zh_CN catalogs from the English sources"
	@echo "make pdf      each edition as one PDF (_build/pdf/book.pdf, book-zh.pdf; needs chromium, fonts-noto-cjk)"
	@echo "make determinism   two cold builds must glue identical values (slow)"
	@echo "make determinism-kernels   every executed page (lectures and evidence) under default and other kernels (slow)"
	@echo "make determinism-threads   every executed page with one and with two threads (slow)"
	@echo "make downloads-check   every downloaded notebook of the built site, alone in an empty folder with the wheel (slow; before a release)"
	@echo "make bench    run the benchmark scripts (speed and memory figures)"
	@echo "make bench-build   build-time figures: cold/warm book, make test, per chapter"
	@echo "make requirements  regenerate requirements.txt from requirements.in (pip-tools)"

# pip compiles the bytecode (no --no-compile): where PYTHONDONTWRITEBYTECODE=1 is set, as on the
# developers' machines, every process (each chapter's kernel, each Sphinx build) would otherwise
# compile torch, Sphinx, ... from source again (measured: slower CI overall).
$(STAMP):
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --disable-pip-version-check -q -r requirements.txt
	$(BIN)/python -m pip install --disable-pip-version-check -q --no-deps --no-build-isolation -e .
	rm -f $(VENV)/.installed-*
	touch $@

setup: $(STAMP)

# Regenerate requirements.txt (exact pins of the whole environment) from the direct
# dependencies in requirements.in with pip-tools, in a throwaway venv. Pins already in
# requirements.txt are kept unless requirements.in forces a change; UPGRADE=1
# re-resolves everything. The CPU torch wheel resolves as 2.13.0+cpu: it is written as
# ==2.13.0, which the CPU build satisfies.
requirements:
	test -x _build/piptools/bin/pip-compile || ($(PYTHON) -m venv _build/piptools && _build/piptools/bin/pip install -q pip-tools==7.6.2)
	CUSTOM_COMPILE_COMMAND="make requirements" _build/piptools/bin/pip-compile --quiet --strip-extras \
	  --no-emit-find-links --no-emit-index-url --allow-unsafe $(if $(UPGRADE),--upgrade) -o requirements.txt requirements.in
	sed -i 's/^torch==\([0-9.]*\)+cpu$$/torch==\1/' requirements.txt

# When every chapter's execution is cached (after `make test`), the two editions build side
# by side (make -j2; --output-sync prints each build's log whole); otherwise the English build
# executes what is missing first. html-en, pdf-en and pdf-zh are the parts.
SUBMAKE := $(MAKE) --no-print-directory
book: setup
	@if $(BIN)/python _ext/locale_tools.py cached; then \
	  echo "every chapter's execution is cached: building the English and Chinese editions side by side"; \
	  $(SUBMAKE) -j2 --output-sync=target html-en book-zh; \
	else \
	  $(SUBMAKE) html-en && $(SUBMAKE) book-zh; \
	fi
	@echo "The book is in _build/html (the Chinese edition in _build/html/zh): open _build/html/index.html in a browser."

# The Chinese edition alone (issue 18): same sources, translated through the gettext
# catalogs in locales/zh_CN/LC_MESSAGES (one .po per page, plus _phrases.po for glued
# wording, _alt.po for figures' alt texts and _ui.po for the theme's strings). It executes
# nothing: it needs the execution cache of `make book` or `make test`, and it refuses to
# build while a catalog is incomplete or breaks the markup (tests/check_catalogs.py --all).
book-zh: setup
	$(BIN)/python _ext/locale_tools.py build-zh

html-en: setup
	$(BIN)/jupyter-book build . -W -n --keep-going

locale-update: setup
	$(BIN)/python _ext/locale_tools.py update
	-$(BIN)/python tests/check_catalogs.py   # lists what is left to translate

# Chapters that pass under nbval are stored in the book's execution cache
# (tests/conftest.py), so a `make book` after `make test` does not run them again.
# Each worker runs whole files, handed out in collection order, which tests/conftest.py
# makes longest first (tests/data/run_seconds.toml); without --no-loadscope-reorder,
# pytest-xdist would re-sort the files by their number of tests instead.
test: setup
	$(BIN)/python -m pytest -n $(JOBS) --dist loadfile --no-loadscope-reorder

# The two PDFs are built side by side (make -j2, each log printed whole).
pdf: setup
	@$(SUBMAKE) -j2 --output-sync=target pdf-en pdf-zh
	@echo "The PDFs are _build/pdf/book.pdf and _build/pdf/book-zh.pdf (needs Debian's fonts-noto-cjk and fonts-wqy-zenhei)"

pdf-en: setup
	$(BIN)/jupyter-book build . --builder singlehtml -W -n --keep-going
	$(BIN)/python _ext/print_pdf.py _build/singlehtml _build/pdf/book.pdf

pdf-zh: setup
	$(BIN)/python _ext/locale_tools.py pdf-zh

chapter: setup
	$(BIN)/python -c 'import normlib, pathlib, sys; f = pathlib.Path(normlib.__file__).resolve(); \
	  sys.exit(0 if f.is_relative_to(pathlib.Path.cwd().resolve()) else f"normlib is imported from {f}, not from this checkout")'
	$(BIN)/python -m pytest tests/conftest.py book/$(CH).md

# one chapter (or several: CH="rmsnorm layernorm") and its evidence page, built alone for reading
pages: setup
	$(BIN)/python _ext/build_pages.py $(CH)

# Every downloaded notebook of the built site (_build/html/_sources/**.ipynb) executed alone
# in an empty folder with the site's normlib wheel (tests/downloaded_notebooks.py); CI's
# rendered checks execute the fast ones only. Needs `make book` first; run it before a release.
downloads-check: setup
	NORMLIB_ALL_DOWNLOADS=1 $(BIN)/python -m pytest -p no:cacheprovider -m rendered -rxs tests/test_downloaded_notebooks.py

ledger: setup
	$(BIN)/python -m normlib.ledger

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

# the same comparison between one thread and two (numpy's BLAS, OpenMP, MKL)
determinism-threads: setup
	$(BIN)/python _ext/glued_values.py kernels --threads

clean:
	rm -rf _build
