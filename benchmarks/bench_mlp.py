"""Cost of the digits benchmark of the chapter "Why normalize" (``book/why-normalize.md``).

Prints, for each norm, the wall-clock and CPU time of one epoch of ``normlib.mlp.train_mlp``
at batch size 2 (the most expensive setting: 500 steps) and 128, with the chapter's 18
models (6 learning rates x 3 seeds) trained at once, and the implied cost of the chapter's
whole grid (4 norms x 7 batch sizes x 10 epochs). CPU time is the better guide on a shared
machine: wall time there includes the time other processes hold the cores.

Run by hand (``make bench`` or ``.venv/bin/python benchmarks/bench_mlp.py``), never by the
tests: timings describe one machine at one moment.
"""

from __future__ import annotations

import os
import time

import numpy as np

from normlib import mlp

BATCH_SIZES = (2, 4, 8, 16, 32, 64, 128)
EPOCHS = 10


def one_epoch(split, norm: str, batch_size: int) -> tuple[float, float]:
    lrs = 0.1 * batch_size / 32 * 4.0 ** np.arange(-3, 3)
    wall, cpu = time.perf_counter(), time.process_time()
    mlp.train_mlp(split, norm, batch_size, lrs=lrs, seeds=[0, 1, 2], epochs=1, hidden=(64, 64))
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    split = mlp.load_digits_split()
    print(f"load average: {os.getloadavg()[0]:.2f} (1 min), cores: {os.cpu_count()}")
    print(f"{'norm':<10} {'B':>4} {'wall (s)':>9} {'cpu (s)':>8} {'cpu per step (ms)':>18}")
    grid_cpu = 0.0
    for norm in mlp.NORMS:
        for B in BATCH_SIZES:
            wall, cpu = one_epoch(split, norm, B)
            grid_cpu += EPOCHS * cpu
            if B in (2, 128):
                steps = len(split.y_train) // B
                print(f"{norm:<10} {B:>4} {wall:>9.2f} {cpu:>8.2f} {1e3 * cpu / steps:>18.2f}")
    print(f"whole grid of the chapter (4 norms x 7 batch sizes x {EPOCHS} epochs): about {grid_cpu:.0f} s of CPU")


if __name__ == "__main__":
    main()
