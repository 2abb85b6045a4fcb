"""The pilot that sized the DeepNorm chapter's experiments (book/deepnorm.md), on seeds the chapter does not use.

Prints, for the first update of the book's Transformer (DeepNet's model update, normlib.transformer.first_updates)
and for the amplification model's depth sweep (normlib.simulate_stack), the seed-to-seed spread of the statistics
the chapter decides on, and the half-width of a 95% Student t interval that the chapter's seed counts would give
with that spread. The chapter's seed counts, windows and decision rules were fixed from this output before its own
runs (seeds 100 and up); the chapter's evidence page (book/evidence/deepnorm.md) states the rules.

    PYTHONPATH=. .venv/bin/python benchmarks/pilot_deepnorm.py      # about a minute of CPU on 2 cores
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

import normlib.transformer as nt
from normlib import simulate_stack

PILOT_SEEDS = range(12)  # the chapter uses seeds 100 … 111 (the Transformer) and 100 … 131 (the sweep)
CHAPTER_SEEDS = {"update": 12, "sweep": 32}
DEPTHS = (6, 12, 24, 48, 96)
SWEEP = (10, 30, 100, 300, 1000, 2000)


def half_width(sd: float, n: int) -> float:
    """Half-width of a 95% t interval of a mean of n values with standard deviation sd."""
    return float(stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n))


def main() -> None:
    upd = nt.first_updates(("post", "deepnorm"), DEPTHS, seeds=PILOT_SEEDS)
    n = CHAPTER_SEEDS["update"]
    print(f"first update, {len(PILOT_SEEDS)} pilot seeds: per-seed log-log slope against depth {DEPTHS}")
    for p, r in upd.items():
        for pair in r.sizes:
            s = r.slopes(*pair)
            print(f"  {p:9s} {pair[0]:4s} {pair[1]:9s} mean {s.mean():6.3f}  sd {s.std(ddof=1):.3f}"
                  f"  -> ±{half_width(s.std(ddof=1), n):.3f} with {n} seeds")
    diff = upd["post"].slopes("sgd", "branch") - upd["deepnorm"].slopes("sgd", "branch")
    print(f"  paired Post - DeepNorm, SGD branch: mean {diff.mean():.3f} sd {diff.std(ddof=1):.3f}"
          f" -> ±{half_width(diff.std(ddof=1), n):.3f}")
    lr = np.log(upd["post"].sizes["sgd", "all"][:, -1] / upd["deepnorm"].sizes["sgd", "all"][:, -1])
    print(f"  ln(Post / DeepNorm), all parameters, {DEPTHS[-1]} layers: mean {lr.mean():.2f} sd {lr.std(ddof=1):.2f}"
          f" -> ±{half_width(lr.std(ddof=1), n):.2f}")

    print(f"amplification model, width 128, seeds 0 … 31 (the old chapter's): sd over seeds of ln(ratio)")
    for p, kw in (("post", {}), ("pre", {"final_norm": True}), ("deepnorm", {})):
        sds = [np.log(simulate_stack(p, L, width=128, n_seeds=32, method="conditional", **kw).per_seed_ratio).std(ddof=1)
               for L in (SWEEP[0], SWEEP[-1])]
        print(f"  {p:9s} {SWEEP[0]} blocks {sds[0]:.3f}, {SWEEP[-1]} blocks {sds[1]:.3f}, ratio {sds[1] / sds[0]:.2f}")
    m = CHAPTER_SEEDS["sweep"]
    se = 1 / math.sqrt(2 * (m - 1))  # standard error of ln(sample sd) for m normal values
    print(f"  a ratio of two sds of {m} seeds: SE of its log {math.sqrt(2) * se:.3f}, two SEs: factor "
          f"{math.exp(2 * math.sqrt(2) * se):.2f}; diffusive growth would give sqrt({SWEEP[-1]}/{SWEEP[0]}) = "
          f"{math.sqrt(SWEEP[-1] / SWEEP[0]):.1f}")


if __name__ == "__main__":
    main()
