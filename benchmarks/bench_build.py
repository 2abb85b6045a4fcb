"""Build-time benchmark: cold book, warm rebuild after a prose edit, make test, the CI path.

Prints (seconds, wall clock, this machine):

1. cold ``make book`` (no execution cache: MyST-NB executes every chapter);
2. warm ``make book`` after a prose-only edit of one chapter (must execute nothing);
3. ``make test`` from a cold cache (nbval executes every chapter, on ``JOBS`` workers,
   and stores the executions in the book's cache);
4. ``make book`` right after it (reuses those executions: the CI path);
5. each chapter's execution time, by MyST-NB (step 1) and by nbval (step 3).

Runs in the checkout itself (the setup must exist: ``make setup``), restores the edited
chapter, and removes ``_build`` before steps 1 and 3. Takes two full executions of the book.
Usage: ``.venv/bin/python benchmarks/bench_build.py``.

``benchmarks/bench_build.py --chapters CLONE`` prints only step 5's nbval column, read from the
execution cache of a checkout that has run ``make test`` (for example a fresh clone after
``.ci/run``, whose last line gives the step times).
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EDITED = ROOT / "book" / "intro.md"


def run(*cmd: str) -> tuple[float, str]:
    t0 = time.perf_counter()
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    return dt, out.stdout + out.stderr


def chapter_times(root: Path = ROOT) -> dict[str, float]:
    """Each page's execution time in the cache, keyed by its path under ``book/`` without
    the suffix (``real-transformer``, ``evidence/real-transformer``: two pages)."""
    from jupyter_cache import get_cache

    book = (root / "book").resolve()
    out = {}
    for r in get_cache(str(root / "_build" / ".jupyter_cache")).list_cache_records():
        path = Path(r.uri).resolve()
        name = path.relative_to(book).with_suffix("").as_posix() if path.is_relative_to(book) else path.stem
        out[name] = float(r.data.get("execution_seconds", float("nan")))
    return out


def print_chapters(root: Path) -> None:
    times = chapter_times(root)
    print(f"chapter execution times under nbval (s), {root}:")
    for name, s in sorted(times.items(), key=lambda kv: -kv[1]):
        print(f"  {name:<32} {s:7.1f}")
    print(f"  {'total':<32} {sum(times.values()):7.1f}")


def main() -> None:
    shutil.rmtree(ROOT / "_build", ignore_errors=True)
    t_cold, _ = run("make", "book")
    by_mystnb = chapter_times()

    original = EDITED.read_text(encoding="utf-8")
    try:
        EDITED.write_text(original + "\n% a prose-only edit made by benchmarks/bench_build.py\n", encoding="utf-8")
        t_warm, log = run("make", "book")
    finally:
        EDITED.write_text(original, encoding="utf-8")
    n_exec = log.count("Executing notebook")

    shutil.rmtree(ROOT / "_build", ignore_errors=True)
    t_test, _ = run("make", "test")
    by_nbval = chapter_times()
    t_book_after, log = run("make", "book")
    n_exec_after = log.count("Executing notebook")

    print(f"cold make book                      {t_cold:7.1f} s")
    print(f"make book after a prose-only edit   {t_warm:7.1f} s   (chapters executed: {n_exec})")
    print(f"make test (cold cache)              {t_test:7.1f} s")
    print(f"make book after make test           {t_book_after:7.1f} s   (chapters executed: {n_exec_after})")
    print(f"CI path, make test + make book      {t_test + t_book_after:7.1f} s")
    print("chapter execution times (s):      MyST-NB   nbval")
    for name in sorted(set(by_mystnb) | set(by_nbval), key=lambda k: -by_mystnb.get(k, 0.0)):
        print(f"  {name:<30} {by_mystnb.get(name, float('nan')):8.1f} {by_nbval.get(name, float('nan')):7.1f}")
    print(f"  {'total':<30} {sum(by_mystnb.values()):8.1f} {sum(by_nbval.values()):7.1f}")


if __name__ == "__main__":
    import sys

    if len(sys.argv) == 3 and sys.argv[1] == "--chapters":
        print_chapters(Path(sys.argv[2]).resolve())
    elif len(sys.argv) == 1:
        main()
    else:
        raise SystemExit(__doc__)
