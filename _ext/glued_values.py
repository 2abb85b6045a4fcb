"""The book's glued values: extract them from a build, and check two cold builds agree.

Every number the prose states is glued from execution (``myst_nb.glue`` or
``normlib.book.glue_value``). MyST-NB writes each executed chapter, outputs included,
to ``_build/jupyter_execute/book/<chapter>.ipynb``; the glued values are the outputs
that carry ``scrapbook`` metadata.

Usage::

    python _ext/glued_values.py extract [BUILD_DIR] > values.json
    python _ext/glued_values.py compare A.json B.json
    python _ext/glued_values.py determinism        # what `make determinism` runs
    python _ext/glued_values.py kernels book/a.md …  # what `make determinism-kernels` runs

``determinism`` builds the book twice from a cold start (no execution cache, no
doctrees), extracts the glued values of each build and compares them. Values glued with
``machine_dependent=True`` (timings) are reported but allowed to differ; any other
difference fails. Figures are compared by a hash of their image data.

``kernels`` executes each given chapter twice, at the same time, with this machine's
default floating-point kernels and with another set that a reader's CPU may use. On an
AVX-512 machine the other set is PyTorch's AVX2 kernels, MKL's AVX2 code path (PyTorch's
matrix products go through MKL, numpy's through OpenBLAS) and OpenBLAS's Haswell kernels
(``ATEN_CPU_CAPABILITY=avx2 MKL_ENABLE_INSTRUCTIONS=AVX2 OPENBLAS_CORETYPE=Haswell``); on a
machine whose default already is AVX2 (where that set changes nothing, bit for bit), it is
PyTorch's non-vectorized kernels, MKL's SSE4.2 path and OpenBLAS's Sandybridge kernels
(``ATEN_CPU_CAPABILITY=default MKL_ENABLE_INSTRUCTIONS=SSE4_2 OPENBLAS_CORETYPE=Sandybridge``),
which do change the rounding of matrix products, reductions and normalizations. ``NORMLIB_ALT_KERNELS="VAR=value ..."`` overrides the
choice. Both executions must pass every claim check, and every glued number that differs
by more than 0.1% (relative) between them, or glued string that differs, must be glued as
machine-dependent. Figures are not compared (a pixel may move).
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GLUE_PREFIX = "application/papermill.record/"
IMAGE_TYPES = ("image/png", "image/jpeg", "image/svg+xml")


def glued_in_notebook(nb: dict) -> dict[str, dict]:
    """``{key: {"value": str, "machine_dependent": bool}}`` for one executed notebook."""
    return glued_in_outputs(
        o for cell in nb.get("cells", []) if cell.get("cell_type") == "code" for o in cell.get("outputs", [])
    )


def glued_in_gluefile(glue: dict) -> dict[str, dict]:
    """The same for MyST-NB's ``<chapter>.glue.json`` (``{key: output}``).

    MyST-NB (1.x) moves the glued outputs out of the executed notebook it writes to
    ``_build/jupyter_execute`` and into this file, next to it.
    """
    return glued_in_outputs(glue.values())


def glued_in_outputs(outputs) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for o in outputs:
        meta = o.get("metadata", {}) or {}
        scrap = meta.get("scrapbook")
        if not scrap:
            continue
        data = {k.removeprefix(GLUE_PREFIX): v for k, v in (o.get("data") or {}).items()}
        image = next((t for t in IMAGE_TYPES if t in data), None)
        if image:
            raw = data[image]
            raw = "".join(raw) if isinstance(raw, list) else raw
            value = f"{image} sha256:{hashlib.sha256(raw.encode()).hexdigest()[:16]}"
        else:
            text = data.get("text/plain", "")
            value = "".join(text) if isinstance(text, list) else text
        out[scrap["name"]] = {
            "value": value,
            "machine_dependent": bool((meta.get("normlib") or {}).get("machine_dependent")),
        }
    return out


def extract(build_dir: Path = ROOT / "_build") -> dict[str, dict]:
    executed = build_dir / "jupyter_execute"
    if not executed.is_dir():
        raise SystemExit(f"no executed notebooks under {executed}: build the book first")
    values = {}
    for p in sorted(executed.rglob("*.ipynb")):
        doc = p.with_suffix("")
        found = glued_in_notebook(json.loads(p.read_text(encoding="utf-8")))
        glue = doc.parent / f"{doc.name}.glue.json"
        if glue.is_file():
            found.update(glued_in_gluefile(json.loads(glue.read_text(encoding="utf-8"))))
        values[str(doc.relative_to(executed))] = found
    return values


def compare(a: dict, b: dict) -> tuple[list[str], list[str]]:
    """(differences that fail, machine-dependent differences that are allowed)."""
    bad, allowed = [], []
    for doc in sorted(set(a) | set(b)):
        va, vb = a.get(doc, {}), b.get(doc, {})
        for key in sorted(set(va) | set(vb)):
            x, y = va.get(key), vb.get(key)
            if x is None or y is None:
                bad.append(f"{doc}::{key}: glued in one build only")
            elif x["value"] != y["value"]:
                line = f"{doc}::{key}: {x['value']!r} != {y['value']!r}"
                (allowed if x["machine_dependent"] and y["machine_dependent"] else bad).append(line)
    return bad, allowed


def cold_build(tag: str) -> dict:
    for sub in (".jupyter_cache", ".doctrees", "jupyter_execute", "html"):
        shutil.rmtree(ROOT / "_build" / sub, ignore_errors=True)
    jb = ROOT / ".venv" / "bin" / "jupyter-book"
    print(f"== cold build {tag}", flush=True)
    subprocess.run([str(jb), "build", str(ROOT), "-W", "-n", "--keep-going"], check=True, stdout=subprocess.DEVNULL)
    return extract()


def determinism() -> int:
    first, second = cold_build("1"), cold_build("2")
    save = ROOT / "_build" / "determinism"
    save.mkdir(parents=True, exist_ok=True)
    (save / "build1.json").write_text(json.dumps(first, indent=1, sort_keys=True))
    (save / "build2.json").write_text(json.dumps(second, indent=1, sort_keys=True))
    return report(first, second)


def report(first: dict, second: dict) -> int:
    """Print the comparison of two builds' glued values; 0 when they agree, else 1.

    A build with no glued values at all fails too: it means the values were not found
    (e.g. MyST-NB stored them somewhere this script does not read), and "identical"
    would then be vacuous.
    """
    bad, allowed = compare(first, second)
    n = sum(len(v) for v in first.values())
    if n == 0 or sum(len(v) for v in second.values()) == 0:
        print("no glued values found in a build: nothing was compared")
        return 1
    n_md = sum(1 for v in first.values() for g in v.values() if g["machine_dependent"])
    print(f"{n} glued values in {len(first)} documents; {n_md} marked machine-dependent (timings)")
    for line in allowed:
        print("  timing, differs as allowed:", line)
    for line in bad:
        print("  DIFFERS:", line)
    print("identical" if not bad else f"{len(bad)} values differ between two cold builds")
    return 1 if bad else 0


def _torch_capability() -> str:
    """The floating-point kernel set PyTorch picks on this machine by default ("AVX512", "AVX2", ...)."""
    from normlib.kernels import default_capability

    return default_capability()


def alternative_kernels() -> dict:
    """The other kernel set to compare with this machine's default (``normlib.kernels``)."""
    from normlib.kernels import alternative_kernels as alt

    return alt(_torch_capability())


#: relative difference above which a glued number counts as machine-dependent
REL_TOL = 1e-3


def execute(md: Path, env_extra: dict, out: Path) -> tuple[bool, float, str]:
    """Execute one chapter with extra environment variables; (ok, seconds, error tail)."""
    jupytext = Path(sys.executable).parent / "jupytext"
    env = dict(os.environ, **env_extra)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [str(jupytext), "--to", "ipynb", "--execute", "--run-path", str(md.parent), "-o", str(out), str(md)],
        env=env, capture_output=True, text=True,
    )
    err = re.sub(r"\x1b\[[0-9;]*m", "", proc.stderr or "")
    return proc.returncode == 0, time.perf_counter() - t0, err[-2000:]


def _parse(value: str):
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return value


def kernel_differences(a: dict, b: dict) -> list[str]:
    """Glued values of one chapter that differ between two kernel sets and are not labelled."""
    bad = []
    for key in sorted(set(a) | set(b)):
        x, y = a.get(key), b.get(key)
        if x is None or y is None:
            bad.append(f"{key}: glued in one execution only")
            continue
        if x["machine_dependent"] and y["machine_dependent"]:
            continue  # labelled in both executions (a label in one only exempts nothing)
        if x["value"].startswith("image/") or y["value"].startswith("image/"):
            continue
        u, v = _parse(x["value"]), _parse(y["value"])
        numeric = all(isinstance(t, (int, float)) and not isinstance(t, bool) for t in (u, v))
        if numeric:
            scale = max(abs(u), abs(v))
            if abs(u - v) > REL_TOL * scale:
                bad.append(f"{key}: {u!r} vs {v!r} (relative {abs(u - v) / scale:.2g})")
        elif u != v:
            bad.append(f"{key}: {x['value']!r} vs {y['value']!r}")
    return bad


#: the two thread counts compared by ``kernels --threads`` (numpy's BLAS, OpenMP and MKL; a chapter
#: that sets torch's own count keeps it)
THREAD_SETS = {name: {v: str(n) for v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
               for name, n in (("1 thread", 1), ("2 threads", 2))}


def chapter_paths(root: Path = ROOT) -> list[Path]:
    """Every executed page: the lectures, the landing page and appendix pages, and the evidence pages."""
    pages = sorted(root.glob("book/*.md")) + sorted(root.glob("book/evidence/*.md"))
    return [p for p in pages if "jupytext:" in p.read_text(encoding="utf-8")[:2000]]


def page_label(md: Path, root: Path = ROOT) -> str:
    """The page's path under the root (``book/evidence/x.md``), so that a lecture and its evidence page are told apart."""
    try:
        return Path(md).resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return Path(md).as_posix()


def kernels(paths: list[Path], threads: bool = False) -> int:
    if threads:
        KERNEL_SETS = dict(THREAD_SETS)
        print("comparing one thread with two (this machine's default kernels)", flush=True)
    else:
        alt = alternative_kernels()
        KERNEL_SETS = {"default": {}, "other": alt}
        print(f"comparing this machine's default kernels ({_torch_capability()}) with: "
              + " ".join(f"{k}={v}" for k, v in alt.items()), flush=True)
    first, second = KERNEL_SETS
    failures = 0
    with tempfile.TemporaryDirectory(prefix="kernels-") as tmp:
        for md in paths:
            outs = {name: Path(tmp) / f"{page_label(md).replace('/', '+')}.{name}.ipynb" for name in KERNEL_SETS}
            with ThreadPoolExecutor(len(KERNEL_SETS)) as pool:
                runs = dict(zip(KERNEL_SETS, pool.map(lambda n: execute(md, KERNEL_SETS[n], outs[n]), KERNEL_SETS)))
            for name, (ok, secs, err) in runs.items():
                print(f"{page_label(md)} [{name}]: {'passed' if ok else 'FAILED'} in {secs:.0f} s", flush=True)
                if not ok:
                    print(err)
                    failures += 1
            if not all(ok for ok, _, _ in runs.values()):
                continue
            glued = {n: glued_in_notebook(json.loads(outs[n].read_text(encoding="utf-8"))) for n in KERNEL_SETS}
            bad = kernel_differences(glued[first], glued[second])
            n_md = sum(g["machine_dependent"] for g in glued[first].values())
            print(f"{page_label(md)}: {len(glued[first])} glued values, {n_md} labelled machine-dependent, "
                  f"{len(bad)} unlabelled value(s) differ by more than {REL_TOL:.1%}")
            for line in bad:
                print("  DIFFERS:", line)
            failures += bool(bad)
    return 1 if failures else 0


def main(argv: list[str]) -> int:
    if not argv:
        raise SystemExit(__doc__)
    cmd, args = argv[0], argv[1:]
    if cmd == "extract":
        json.dump(extract(Path(args[0]) if args else ROOT / "_build"), sys.stdout, indent=1, sort_keys=True)
        return 0
    if cmd == "compare":
        bad, allowed = compare(*(json.loads(Path(p).read_text()) for p in args))
        for line in allowed:
            print("  timing, differs as allowed:", line)
        for line in bad:
            print("  DIFFERS:", line)
        return 1 if bad else 0
    if cmd == "determinism":
        return determinism()
    if cmd == "kernels":
        threads = "--threads" in args
        paths = [Path(a).resolve() for a in args if a != "--threads"] or chapter_paths()
        return kernels(paths, threads=threads)
    raise SystemExit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
