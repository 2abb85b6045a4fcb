"""Benchmark of normlib.stack, the residual amplification model (book/pre-vs-post.md).

Prints
  (a) the exact protocol (``simulate_stack(..., method="exact")``) against drawing the
      same random numbers alone, over Post and Pre at L = 16, 64, 256 with 4 seeds and
      d = 128 (the article's depth row). Each side runs in a **fresh process** (what a
      reader who runs the chapter pays, page faults of new memory included), the two
      alternate, and the medians over the repeats are compared (target: ratio <= 1.2);
  (b) the conditional sampler at L = 1000, d = 4096, one seed: time (target <= 1 s)
      and peak traced memory;
  (c) what the exact (weight-drawing) method would need at that size: time
      extrapolated from measured runs at smaller widths, and the memory of its weights.

Run:  .venv/bin/python benchmarks/bench_stack.py [--quick] [--repeats N]
Timings describe one machine at one moment (and a shared machine is noisy): nothing
here is asserted, and no claim of the book depends on these numbers.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import subprocess
import sys
import time
import tracemalloc
from dataclasses import dataclass

import numpy as np

from normlib._validate import check_choice, check_int
from normlib.stack import HIDDEN_FACTOR, PLACEMENTS, simulate_stack

#: The article's depth row (C5.7): Post and Pre at L = 16, 64, 256.
DEPTH_ROW = tuple((p, L) for p in ("post", "pre") for L in (16, 64, 256))
WIDTH = 128
N_SEEDS = 4


# ----------------------------------------------------------------------------- results


@dataclass(frozen=True)
class ExactTiming:
    """Times (s) of the exact protocol and of drawing its random numbers alone, one per repeat.

    ``*_s`` are wall-clock times, ``*_cpu_s`` the CPU time of the process that ran them
    (less sensitive to other processes on a busy machine).
    """

    exact_s: tuple
    draws_s: tuple
    exact_cpu_s: tuple = ()
    draws_cpu_s: tuple = ()

    @property
    def ratio(self) -> float:
        """Median exact time over median drawing time: what the model costs on top of the random numbers."""
        return statistics.median(self.exact_s) / statistics.median(self.draws_s)

    @property
    def cpu_ratio(self) -> float:
        """The same ratio in CPU time (nan when CPU times were not recorded)."""
        if not self.exact_cpu_s:
            return float("nan")
        return statistics.median(self.exact_cpu_s) / statistics.median(self.draws_cpu_s)

    @property
    def pair_ratios(self) -> tuple:
        """The wall-time ratio within each repeat (exact and draws ran back to back), for the spread."""
        return tuple(e / r for e, r in zip(self.exact_s, self.draws_s))


@dataclass(frozen=True)
class ConditionalCost:
    """Wall time (median, s) and traced peak memory (bytes) of one conditional run."""

    depth: int
    width: int
    seconds: float
    peak_bytes: int


@dataclass(frozen=True)
class ExplicitCost:
    """What the exact (weight-drawing) method would need at a given size.

    ``seconds`` is extrapolated as ``seconds_per_weight · depth · 8 d²`` from runs at
    ``probe_widths``; ``weight_bytes = depth · 8 d² · 8`` is the float64 storage of
    every weight (the exact method keeps all of them for its backward pass).
    """

    depth: int
    width: int
    seconds: float
    weight_bytes: int
    seconds_per_weight: float
    probe_widths: tuple


# ----------------------------------------------------------------------------- what a child process runs


def run_exact(runs=DEPTH_ROW, *, width: int = WIDTH, n_seeds: int = N_SEEDS) -> None:
    """The exact protocol on every (placement, depth) of ``runs``."""
    for placement, depth in runs:
        simulate_stack(placement, depth, width=width, n_seeds=n_seeds, method="exact")


def run_draws(runs=DEPTH_ROW, *, width: int = WIDTH, n_seeds: int = N_SEEDS) -> None:
    """The generator calls of the exact protocol on ``runs``, and nothing else.

    Per seed: ``default_rng(seed)``, the input (d normals), one call of 8 d² normals per
    layer into a reused one-layer buffer, the top gradient (d normals).
    """
    buf = np.empty(2 * HIDDEN_FACTOR * width * width)
    for _placement, depth in runs:
        for seed in range(n_seeds):
            rng = np.random.default_rng(seed)
            rng.standard_normal(width)
            for _ in range(depth):
                rng.standard_normal(out=buf)
            rng.standard_normal(width)


def _child(kind: str, runs, width: int, n_seeds: int) -> tuple[float, float]:
    """Run one side here; return (wall seconds, CPU seconds of this process)."""
    fn = {"exact": run_exact, "draws": run_draws}[kind]
    t0, c0 = time.perf_counter(), time.process_time()
    fn(runs, width=width, n_seeds=n_seeds)
    return time.perf_counter() - t0, time.process_time() - c0


def _fresh_process(kind: str, runs, width: int, n_seeds: int) -> tuple[float, float]:
    """Run one side in a new Python process; return the (wall, CPU) seconds it measured for itself."""
    spec = ";".join(f"{p}:{L}" for p, L in runs)
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, "--runs", spec, "--width", str(width), "--seeds", str(n_seeds)],
        check=True, capture_output=True, text=True,
    )
    wall, cpu = out.stdout.strip().splitlines()[-1].split()
    return float(wall), float(cpu)


# ----------------------------------------------------------------------------- measurements


def time_exact_vs_draws(runs=DEPTH_ROW, *, width: int = WIDTH, n_seeds: int = N_SEEDS, repeats: int = 5,
                        fresh: bool = True) -> ExactTiming:
    """Time the exact protocol on ``runs`` against drawing the same random numbers alone.

    Each repeat runs both sides back to back (the order alternates between repeats),
    each in a fresh process when ``fresh`` (else in this one). Bad arguments raise
    ``ValueError``/``TypeError``.
    """
    width = check_int(width, "width")
    n_seeds = check_int(n_seeds, "n_seeds")
    repeats = check_int(repeats, "repeats")
    runs = tuple(runs)
    if not runs:
        raise ValueError("runs must contain at least one (placement, depth) pair; got none")
    for placement, depth in runs:
        check_choice(placement, "placement", PLACEMENTS)
        check_int(depth, "depth")
    one = _fresh_process if fresh else _child
    t = {"exact": [], "draws": []}
    for i in range(repeats):
        for kind in (("exact", "draws") if i % 2 == 0 else ("draws", "exact")):
            t[kind].append(one(kind, runs, width, n_seeds))
    return ExactTiming(tuple(w for w, _ in t["exact"]), tuple(w for w, _ in t["draws"]),
                       tuple(c for _, c in t["exact"]), tuple(c for _, c in t["draws"]))


def measure_conditional(depth: int = 1000, width: int = 4096, *, placement: str = "pre",
                        repeats: int = 3) -> ConditionalCost:
    """Median time of one conditional-sampler seed, and its peak traced memory (a separate run)."""
    depth = check_int(depth, "depth")
    width = check_int(width, "width")
    placement = check_choice(placement, "placement", PLACEMENTS)
    repeats = check_int(repeats, "repeats")
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        simulate_stack(placement, depth, width=width, n_seeds=1, method="conditional")
        times.append(time.perf_counter() - t0)
    tracemalloc.start()
    try:
        simulate_stack(placement, depth, width=width, n_seeds=1, method="conditional")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return ConditionalCost(depth, width, float(np.median(times)), int(peak))


def explicit_cost(depth: int = 1000, width: int = 4096, *, probe_widths=(256, 512), probe_depth: int = 4,
                  repeats: int = 3) -> ExplicitCost:
    """Extrapolate the exact method's time to ``depth x width`` from small runs; weight memory exactly.

    The exact method draws 8 d² normals per layer and does four matrix-vector products
    with them, so its time is proportional to L·d²; the cost per weight is taken from
    the last probe width (median of ``repeats``).
    """
    depth = check_int(depth, "depth")
    width = check_int(width, "width")
    probe_depth = check_int(probe_depth, "probe_depth")
    repeats = check_int(repeats, "repeats")
    probe_widths = tuple(check_int(d, "each probe width") for d in probe_widths)
    if not probe_widths:
        raise ValueError("probe_widths must name at least one width to run; got none")
    per_weight = []
    for d in probe_widths:
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            simulate_stack("pre", probe_depth, width=d, n_seeds=1)
            times.append(time.perf_counter() - t0)
        per_weight.append(float(np.median(times)) / (probe_depth * 2 * HIDDEN_FACTOR * d * d))
    n_weights = depth * 2 * HIDDEN_FACTOR * width * width
    return ExplicitCost(depth, width, per_weight[-1] * n_weights, n_weights * 8, per_weight[-1], probe_widths)


# ----------------------------------------------------------------------------- report


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


def _load() -> str:
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:  # pragma: no cover - not Linux
        return "unknown"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, smaller probes")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--child", choices=("exact", "draws"), help=argparse.SUPPRESS)
    parser.add_argument("--runs", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--width", type=int, default=WIDTH, help=argparse.SUPPRESS)
    parser.add_argument("--seeds", type=int, default=N_SEEDS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:  # one side of (a), in its own process: print the seconds it took
        runs = tuple((p, int(L)) for p, L in (item.split(":") for item in args.runs.split(";")))
        print(*_child(args.child, runs, args.width, args.seeds))
        return
    repeats = args.repeats or (3 if args.quick else 7)

    print(f"numpy {np.__version__}, Python {platform.python_version()}, {platform.machine()}; "
          f"load average {_load()} (a busy machine inflates every time below)")
    print(f"median of {repeats} repeat(s)\n")

    # (a)
    t = time_exact_vs_draws(DEPTH_ROW, repeats=repeats)
    pr = t.pair_ratios
    print("(a) exact protocol vs its random numbers alone, each in a fresh process:",
          ", ".join(f"{p} L={L}" for p, L in DEPTH_ROW))
    n_layers = N_SEEDS * sum(depth for _, depth in DEPTH_ROW)
    print(f"    {N_SEEDS} seeds, d = {WIDTH}: {n_layers} layers, {n_layers * 8 * WIDTH * WIDTH / 1e6:.0f} M normals")
    print(f"    exact method          {statistics.median(t.exact_s):8.2f} s wall, {statistics.median(t.exact_cpu_s):6.2f} s CPU")
    print(f"    random numbers alone  {statistics.median(t.draws_s):8.2f} s wall, {statistics.median(t.draws_cpu_s):6.2f} s CPU")
    print(f"    ratio of medians      {t.ratio:8.3f} wall, {t.cpu_ratio:6.3f} CPU   (target <= 1.2; "
          f"wall ratio per repeat {min(pr):.3f} to {max(pr):.3f})\n")

    # (b)
    c = measure_conditional(1000, 4096, repeats=repeats)
    print("(b) conditional sampler, pre-norm, L = 1000, d = 4096, 1 seed")
    print(f"    time                  {c.seconds:8.3f} s   (target <= 1 s)")
    print(f"    peak traced memory    {_bytes(c.peak_bytes):>10}   (the stream: (L + 1) d float64 = "
          f"{_bytes(1001 * 4096 * 8)})\n")

    # (c)
    probes = (256, 512) if args.quick else (256, 512, 1024)
    e = explicit_cost(1000, 4096, probe_widths=probes, probe_depth=4, repeats=repeats)
    print("(c) the exact (weight-drawing) method at L = 1000, d = 4096, 1 seed")
    print(f"    measured cost per weight at d = {probes[-1]}: {e.seconds_per_weight * 1e9:.2f} ns "
          f"(draw + matrix-vector products)")
    print(f"    extrapolated time     {_duration(e.seconds):>10}   (∝ L·8d², from d = {', '.join(map(str, probes))})")
    print(f"    all its weights       {_bytes(e.weight_bytes):>10}   (L·8d² float64, all kept for the backward pass)")
    print(f"    conditional / exact   {c.seconds / e.seconds:.1e} of the time, "
          f"{c.peak_bytes / (0.75 * e.weight_bytes):.1e} of the memory")


if __name__ == "__main__":
    main()
