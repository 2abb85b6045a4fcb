"""Run a downloaded notebook as a reader would: alone in an empty folder, with the wheel.

The site offers every chapter as an executed ``.ipynb`` (``_ext/notebook_downloads.py``),
the normlib wheel and ``requirements-chapter.txt`` (``_ext/site_downloads.py``); the page
"Running the book yourself" promises that these are all a chapter needs. This module
checks that promise for one notebook:

- :func:`run_alone` copies the notebook, and nothing else, into an empty folder, unpacks
  the wheel into a second folder and executes every cell in a fresh kernel whose working
  directory is the empty folder and whose ``PYTHONPATH`` is the unpacked wheel only. A
  first cell (added to the copy, not to the download) takes this checkout off
  ``sys.path`` and removes the editable install's import hook, so ``import normlib``
  can only find the wheel; a last cell fails if any module was imported from this
  checkout. A cell that reads a file of the repository (``book/warmup-lr.md``) fails
  there, as it would for a reader.
- :func:`foreign_imports` lists the modules the notebook's code imports that neither the
  standard library, normlib, nor ``requirements-chapter.txt`` (with the dependencies of
  what it lists) provide: the kernel here runs in the book's full environment, a superset
  of the chapter requirements, so this static check covers the difference.

Standalone: ``python tests/downloaded_notebooks.py NOTEBOOK.ipynb [--wheel W.whl]
[--requirements requirements-chapter.txt] [--timeout S]`` (by default the wheel and the
requirements file of the built site, ``_build/html/downloads/``). Under pytest:
``tests/test_downloaded_notebooks.py`` (``pytest -m rendered``, after a build).
"""

from __future__ import annotations

import argparse
import ast
import functools
import os
import re
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOWNLOADS = ROOT / "_build" / "html" / "downloads"

GUARD_FIRST = """\
# added by tests/downloaded_notebooks.py: normlib may come from the wheel only
import sys
_repo = {repo!r}
sys.path[:] = [p for p in sys.path if not any(p == r or p.startswith(r + "/_ext") for r in _repo)]
sys.meta_path[:] = [f for f in sys.meta_path if "__editable__" not in (getattr(f, "__module__", "") or "")]
for _name in [m for m in sys.modules if m == "normlib" or m.startswith("normlib.")]:
    del sys.modules[_name]
"""

GUARD_LAST = """\
# added by tests/downloaded_notebooks.py: nothing was imported from the repository
import sys
_site = {site!r}
_bad = sorted(
    f"{{name}}: {{getattr(m, '__file__', '')}}" for name, m in list(sys.modules.items())
    if (getattr(m, "__file__", None) or "").startswith(tuple(r + "/" for r in {repo!r}))
    and not (getattr(m, "__file__", None) or "").startswith(tuple(r + "/.venv/" for r in {repo!r}))
)
assert not _bad, "imported from the repository, not the wheel: " + ", ".join(_bad)
import normlib
assert normlib.__file__.startswith(_site), normlib.__file__
"""


def _repo_roots() -> list[str]:
    """This checkout, and the checkout its environment was installed from (a shared .venv)."""
    roots = {str(ROOT)}
    venv = ROOT / ".venv"
    if venv.is_symlink():
        roots.add(str(venv.resolve().parent))
    return sorted(roots)


def find_wheel(downloads: Path = DOWNLOADS) -> Path:
    wheels = sorted(downloads.glob("normlib-*-py3-none-any.whl"))
    if len(wheels) != 1:
        raise FileNotFoundError(f"expected one normlib wheel in {downloads}, found {[w.name for w in wheels]}")
    return wheels[0]


def run_alone(notebook: Path, wheel: Path, *, timeout: int = 600) -> None:
    """Execute ``notebook`` alone in an empty folder with ``wheel`` only (both folders are
    removed afterwards).

    Raises ``nbclient.exceptions.CellExecutionError`` (with the failing cell's traceback)
    when a cell fails.
    """
    import nbformat
    from nbclient import NotebookClient

    work = Path(tempfile.mkdtemp(prefix="nb-alone-"))
    folder, site = work / "reader", work / "site"
    folder.mkdir()
    with zipfile.ZipFile(wheel) as z:
        z.extractall(site)
    target = folder / notebook.name
    shutil.copyfile(notebook, target)
    nb = nbformat.read(target, as_version=4)
    repo = _repo_roots()
    nb.cells.insert(0, nbformat.v4.new_code_cell(GUARD_FIRST.format(repo=repo)))
    nb.cells.append(nbformat.v4.new_code_cell(GUARD_LAST.format(site=str(site), repo=repo)))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP")}
    env.update(PYTHONPATH=str(site), MPLBACKEND="Agg", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    # the kernel's environment (jupyter_client's start_kernel(env=...)), its cwd the empty folder
    try:
        NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=False,
                       resources={"metadata": {"path": str(folder)}}).execute(env=env)
    finally:
        shutil.rmtree(work, ignore_errors=True)


# ---- the static check: imports against requirements-chapter.txt ----------------------------------


def code_imports(nb) -> set[str]:
    """Top-level names of the modules the notebook's code cells import."""
    names = set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        source = "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@functools.lru_cache(maxsize=8)
def requirement_closure(requirements: str) -> frozenset[str]:
    """The distributions ``requirements`` lists, with every dependency installed here (normalized names)."""
    from importlib import metadata

    from packaging.requirements import Requirement

    todo = [_norm(m.group(1)) for m in re.finditer(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s*==", requirements, flags=re.M)]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for r in requires:
            req = Requirement(r)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(_norm(req.name))
    return frozenset(seen)


@functools.lru_cache(maxsize=1)
def _owners() -> dict[str, list[str]]:
    from importlib import metadata

    return metadata.packages_distributions()


def foreign_imports(nb, requirements: str) -> list[str]:
    """Imported modules that the standard library, normlib and ``requirements`` do not provide."""
    provided = requirement_closure(requirements) | {"normlib"}
    owners = _owners()
    bad = []
    for name in sorted(code_imports(nb)):
        if name in sys.stdlib_module_names or name == "normlib" or name.startswith("_"):
            continue
        dists = {_norm(d) for d in owners.get(name, [])}
        if not dists & provided:
            bad.append(f"{name} (from {', '.join(sorted(dists)) or 'no installed distribution'})")
    return bad


def main(argv: list[str] | None = None) -> int:
    import nbformat

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("notebooks", nargs="+", type=Path)
    p.add_argument("--wheel", type=Path)
    p.add_argument("--requirements", type=Path, default=DOWNLOADS / "requirements-chapter.txt")
    p.add_argument("--timeout", type=int, default=900)
    args = p.parse_args(argv)
    wheel = args.wheel or find_wheel()
    failed = 0
    for path in args.notebooks:
        bad = foreign_imports(nbformat.read(path, as_version=4), args.requirements.read_text(encoding="utf-8"))
        if bad:
            print(f"{path}: imports what requirements-chapter.txt does not install: {', '.join(bad)}")
            failed += 1
        try:
            run_alone(path, wheel, timeout=args.timeout)
        except Exception as e:  # noqa: BLE001  (report every notebook)
            print(f"{path}: FAILED in an empty folder\n{e}")
            failed += 1
        else:
            print(f"{path}: ran alone with the wheel")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
