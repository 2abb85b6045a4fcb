"""The house rules of normlib, checked mechanically (DESIGN.md, "normlib: the helper package").

* every module imports (a syntax error in a module no chapter-free test imports would
  otherwise reach the book build first);
* ``import normlib`` needs numpy alone: it imports neither torch nor matplotlib nor myst-nb;
* every public function has a numpydoc docstring: every parameter documented, a Returns
  section, and a Notes section that names the chapter (``book/<name>.md``, which exists);
* ``eps`` is keyword-only wherever it appears;
* no ``print``, no global seeding, no module-level draws from ``np.random``, no
  module-level import of the heavy optional packages;
* results are frozen dataclasses; normlib's own dependency pins are loose;
* the docstring examples run.
"""

from __future__ import annotations

import ast
import dataclasses
import doctest
import importlib
import inspect
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import normlib

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "normlib"
BOOK = ROOT / "book"
MODULE_NAMES = sorted(p.stem for p in PKG.glob("*.py") if p.stem != "__init__")
HEAVY = ("torch", "matplotlib", "myst_nb", "IPython", "pandas", "transformers")


def _module(name: str):
    return importlib.import_module(f"normlib.{name}")


# ----------------------------------------------------------------------------- imports


@pytest.mark.parametrize("name", MODULE_NAMES)
def test_every_module_imports(name):
    """Each normlib/*.py compiles and imports (book.py once shipped with a SyntaxError)."""
    assert _module(name).__name__ == f"normlib.{name}"


def _run(code: str, *flags: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *flags, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True
    )


_LIGHT_MODULES = [m for m in MODULE_NAMES if m not in ("transformer",)]  # torch lives only in a transformer module


def test_import_normlib_does_not_import_heavy_packages():
    """A fresh interpreter: ``import normlib`` (and every numpy module) leaves torch, matplotlib, myst-nb unloaded."""
    imports = "; ".join(f"import normlib.{m}" for m in _LIGHT_MODULES)
    code = (
        "import json, sys, normlib; "
        f"after_pkg = sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})); "
        f"{imports}; "
        f"after_all = sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})); "
        "sys.stdout.write(json.dumps([after_pkg, after_all]))"
    )
    after_pkg, after_all = json.loads(_run(code).stdout)
    assert after_pkg == [], f"import normlib pulled in {after_pkg}"
    assert after_all == [], f"importing normlib's numpy modules pulled in {after_all}"


def test_import_normlib_importtime_log_has_no_torch():
    """The same through ``python -X importtime``: no heavy top-level package appears in the import log."""
    log = _run("import normlib", "-X", "importtime").stderr
    names = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in log.splitlines() if line.startswith("import time:")}
    assert "normlib" in names  # the log is the one we think it is
    assert names.isdisjoint(HEAVY), sorted(names & set(HEAVY))


# ----------------------------------------------------------------------------- public functions


def _public_functions():
    """(qualified name, function) for normlib.__all__ and every public function of normlib's modules."""
    seen = {}
    for name in normlib.__all__:
        obj = getattr(normlib, name)
        if inspect.isfunction(obj):
            seen[f"normlib.{name}"] = obj
    for m in MODULE_NAMES:
        if m.startswith("_"):  # private modules (input validation) are not public API
            continue
        mod = _module(m)
        names = getattr(mod, "__all__", [n for n in vars(mod) if not n.startswith("_")])
        for name in names:
            obj = getattr(mod, name)
            fn = getattr(obj, "__wrapped__", obj)  # e.g. an lru_cache'd function
            if inspect.isfunction(fn) and fn.__module__ == mod.__name__ and obj not in seen.values():
                seen[f"{mod.__name__}.{name}"] = obj
    return sorted(seen.items())


PUBLIC_FUNCTIONS = _public_functions()
PUBLIC_IDS = [q for q, _ in PUBLIC_FUNCTIONS]


def _sections(doc: str) -> dict[str, list[str]]:
    """numpydoc sections: a title line underlined by dashes of the same length."""
    lines = doc.splitlines()
    out: dict[str, list[str]] = {"": []}
    current = ""
    i = 0
    while i < len(lines):
        if i + 1 < len(lines) and lines[i].strip() and set(lines[i + 1].strip()) == {"-"} and len(
            lines[i + 1].strip()
        ) == len(lines[i].strip()):
            current = lines[i].strip()
            out[current] = []
            i += 2
            continue
        out[current].append(lines[i])
        i += 1
    return out


def _documented_params(section: list[str]) -> set[str]:
    names = set()
    for line in section:
        if line and not line[0].isspace():
            head = line.split(" : ")[0]
            names.update(n.strip().lstrip("*") for n in head.split(","))
    return names


def test_the_docstring_checks_can_fail():
    """Control: the section parser finds a missing parameter and a Notes section without a chapter."""

    def bad(x, *, eps=1e-5):
        """Summary.

        Parameters
        ----------
        x : float

        Notes
        -----
        No chapter here.
        """

    sec = _sections(inspect.getdoc(bad))
    assert _documented_params(sec["Parameters"]) == {"x"}
    assert "Returns" not in sec
    assert not re.search(r"book/[\w-]+\.md", "\n".join(sec["Notes"]))


@pytest.mark.parametrize("qualname, fn", PUBLIC_FUNCTIONS, ids=PUBLIC_IDS)
def test_public_function_has_numpydoc_docstring(qualname, fn):
    """Parameters (every argument), Returns and a Notes section that names an existing chapter."""
    doc = inspect.getdoc(fn)
    assert doc and doc.splitlines()[0].strip(), f"{qualname} has no docstring summary line"
    sec = _sections(doc)
    params = [p.name for p in inspect.signature(fn).parameters.values()]
    if params:
        assert "Parameters" in sec, f"{qualname}: no Parameters section"
        missing = set(params) - _documented_params(sec["Parameters"])
        assert not missing, f"{qualname}: parameters not documented: {sorted(missing)}"
    if qualname != "normlib.plotting.style":  # the one function returning None
        assert "Returns" in sec, f"{qualname}: no Returns section"
    assert "Notes" in sec, f"{qualname}: no Notes section"
    chapters = re.findall(r"book/([\w-]+)\.md", "\n".join(sec["Notes"]))
    assert chapters, f"{qualname}: the Notes section names no chapter (book/<name>.md)"
    for ch in chapters:
        assert (BOOK / f"{ch}.md").is_file(), f"{qualname}: Notes names book/{ch}.md, which does not exist"


EPS_FUNCTIONS = [(q, f) for q, f in PUBLIC_FUNCTIONS if "eps" in inspect.signature(f).parameters]


def test_there_are_functions_taking_eps():
    """Control for the next test: it is not vacuous."""
    names = {q.rsplit(".", 1)[-1] for q, _ in EPS_FUNCTIONS}
    assert {"layer_norm", "rms_norm", "layer_norm_vjp", "simulate_stack", "ln_rescale_residual"} <= names


@pytest.mark.parametrize("qualname, fn", EPS_FUNCTIONS, ids=[q for q, _ in EPS_FUNCTIONS])
def test_eps_is_keyword_only(qualname, fn):
    """``eps`` can never be passed by position (a positional 1e-5 is too easy to misplace)."""
    p = inspect.signature(fn).parameters["eps"]
    assert p.kind is inspect.Parameter.KEYWORD_ONLY, f"{qualname}: eps is {p.kind.description}"
    assert isinstance(p.default, float) and p.default >= 0.0


# ----------------------------------------------------------------------------- source rules

_NP_RANDOM_OK = {"default_rng", "Generator", "SeedSequence", "BitGenerator", "PCG64", "PCG64DXSM", "Philox", "SFC64", "MT19937"}


def _dotted(node) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _violations(source: str) -> list[str]:
    """print calls, global seeding, np.random.<dist> calls and module-level heavy imports in a source text."""
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            if name == "print":
                found.append(f"line {node.lineno}: print(...)")
            elif name.split(".")[-1] in ("seed", "manual_seed"):
                found.append(f"line {node.lineno}: global seeding {name}(...)")
            elif re.match(r"^(np|numpy)\.random\.", name) and name.split(".")[2] not in _NP_RANDOM_OK:
                found.append(f"line {node.lineno}: global-state draw {name}(...)")
            elif name.startswith("random.") and name != "random.Random":
                found.append(f"line {node.lineno}: stdlib global random {name}(...)")
    # heavy imports outside any function body
    stack = [(n, False) for n in tree.body]
    while stack:
        node, in_func = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for m in mods:
                if m.split(".")[0] in HEAVY:
                    found.append(f"line {node.lineno}: module-level import of {m}")
        stack.extend((c, in_func) for c in ast.iter_child_nodes(node))
    return found


def test_source_scanner_can_fail():
    """Control: the scanner flags each forbidden pattern in a synthetic module, and not the allowed ones."""
    src = (
        "import numpy as np\nimport torch\n"
        "np.random.seed(0)\nx = np.random.normal(size=3)\nprint(x)\n"
        "def f():\n    import matplotlib\n    return np.random.default_rng(0)\n"
    )
    found = _violations(src)
    assert len(found) == 4, found
    assert any("torch" in v for v in found) and not any("matplotlib" in v for v in found)


@pytest.mark.parametrize("name", ["__init__", *MODULE_NAMES])
def test_source_has_no_print_no_global_seeding_no_heavy_imports(name):
    """Library code never prints, never touches global random state, imports torch/matplotlib lazily only."""
    src = (PKG / f"{name}.py").read_text(encoding="utf-8")
    found = _violations(src)
    if name not in _LIGHT_MODULES + ["__init__"]:  # the PyTorch module imports torch (and only torch) at its top
        found = [v for v in found if not re.search(r"module-level import of torch(\.\w+)*$", v)]
    assert found == []


# ----------------------------------------------------------------------------- results, pins, examples


def test_result_dataclasses_are_frozen():
    """Every dataclass normlib defines is frozen: results cannot be edited after the fact."""
    found = []
    for m in MODULE_NAMES:
        mod = _module(m)
        for obj in vars(mod).values():
            if inspect.isclass(obj) and dataclasses.is_dataclass(obj) and obj.__module__ == mod.__name__:
                found.append(obj)
                assert obj.__dataclass_params__.frozen, f"{mod.__name__}.{obj.__name__} is not frozen"
    assert {c.__name__ for c in found} >= {"BatchNormResult", "StackResult", "Timing", "InvarianceCell", "CheckResult"}


def test_normlib_dependency_pins_are_loose():
    """pyproject.toml pins nothing exactly (exact pins belong to requirements.txt, the lock)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    deps = list(project["dependencies"]) + [d for ds in project.get("optional-dependencies", {}).values() for d in ds]
    assert any(d.startswith("numpy") for d in deps)
    exact = [d for d in deps if "==" in d or "<" in d]
    assert exact == [], f"exact or capped pins in pyproject.toml: {exact}"


@pytest.mark.parametrize("name", ["norms", "invariance", "timing", "stack", "attention", "transformer"])
def test_docstring_examples_run(name):
    """The Examples sections are doctests: they run and print what they claim."""
    mod = _module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in doctest.DocTestFinder().find(mod) if t.examples]
    assert tests, f"normlib.{name} has no examples"
    for t in tests:
        runner.run(t, out=lambda s: None)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in normlib.{name}"


def test_random_functions_leave_the_global_numpy_state_alone():
    """At run time too: the functions that draw random numbers use their own generators, never np.random's global one."""
    import numpy as np

    from normlib import invariance, stack

    before = np.random.get_state()
    stack.simulate_stack("pre", 3, width=4, n_seeds=2)
    stack.simulate_stack("post", 3, width=4, n_seeds=2, method="conditional")
    invariance.invariance_table(0, n_cases=4, d_in=3, hidden=4, trials=1)
    after = np.random.get_state()
    assert before[0] == after[0] and before[2:] == after[2:]
    np.testing.assert_array_equal(before[1], after[1])
