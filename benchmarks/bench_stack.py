"""Benchmark of normlib.stack: the residual amplification model (book/pre-vs-post.md).

Prints
  (a) the exact protocol on the article's full run set (post/pre at L = 64, then
      L = 16, 64, 256 for both; 4 seeds, d = 128) against drawing the same random
      numbers alone with the same generator calls, and their ratio (target <= 1.3);
  (b) the conditional sampler at L = 1000, d = 4096, one seed: time (target <= 1 s)
      and peak traced memory;
  (c) what the exact (weight-drawing) method would need at that size: time
      extrapolated from measured runs at smaller widths, and the memory of its weights.

Run:  .venv/bin/python benchmarks/bench_stack.py [--quick]
The measuring functions live in normlib.stack (time_exact_vs_draws,
measure_conditional, explicit_cost), so a chapter can call quick versions of them.
"""

from __future__ import annotations

import argparse
import platform

import numpy as np

from normlib.stack import ARTICLE_RUNS, explicit_cost, measure_conditional, time_exact_vs_draws


def _bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.1f} {unit}"
        n /= 1000.0
    raise AssertionError  # pragma: no cover


def _duration(s: float) -> str:
    if s < 120:
        return f"{s:.2f} s"
    if s < 7200:
        return f"{s / 60:.1f} min"
    return f"{s / 3600:.1f} h"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, smaller probes")
    parser.add_argument("--repeats", type=int, default=None)
    args = parser.parse_args(argv)
    repeats = args.repeats or (1 if args.quick else 3)

    print(f"numpy {np.__version__}, Python {platform.python_version()}, {platform.machine()}")
    print(f"median of {repeats} repeat(s)\n")

    # (a)
    runs = ARTICLE_RUNS
    t = time_exact_vs_draws(runs, repeats=repeats)
    n_layers = 4 * sum(depth for _, depth in runs)
    print("(a) exact protocol, the article's run set:", ", ".join(f"{p} L={L}" for p, L in runs))
    print(f"    4 seeds, d = 128: {n_layers} layers, {n_layers * 8 * 128 * 128 / 1e6:.0f} M normals")
    print(f"    exact method          {t.exact_s:8.2f} s")
    print(f"    random numbers alone  {t.draws_s:8.2f} s")
    print(f"    ratio                 {t.ratio:8.3f}   (target <= 1.3)\n")

    # (b)
    c = measure_conditional(1000, 4096, repeats=repeats)
    print("(b) conditional sampler, pre-norm, L = 1000, d = 4096, 1 seed")
    print(f"    time                  {c.seconds:8.3f} s   (target <= 1 s)")
    print(f"    peak traced memory    {_bytes(c.peak_bytes):>10}   (the stream and branch outputs: 2 L d float64 = "
          f"{_bytes(2 * 1000 * 4096 * 8)})\n")

    # (c)
    probes = (256, 512) if args.quick else (256, 512, 1024)
    e = explicit_cost(1000, 4096, probe_widths=probes, probe_depth=4, repeats=repeats)
    print("(c) the exact (weight-drawing) method at L = 1000, d = 4096, 1 seed")
    print(f"    measured cost per weight at d = {probes[-1]}: {e.seconds_per_weight * 1e9:.2f} ns "
          f"(draw + matrix-vector products)")
    print(f"    extrapolated time     {_duration(e.seconds):>10}   (∝ L·8d², from d = {', '.join(map(str, probes))})")
    print(f"    weights to store      {_bytes(e.weight_bytes):>10}   (L·8d² float64)")
    print(f"    conditional / exact   {c.seconds / e.seconds:.1e} of the time, "
          f"{c.peak_bytes / e.weight_bytes:.1e} of the memory")


if __name__ == "__main__":
    main()
