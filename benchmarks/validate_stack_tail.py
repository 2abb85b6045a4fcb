"""The conditional sampler against the exact protocol where C5.8's percentile lives (book/pre-vs-post.md).

The chapter places the article's last Post-Norm ratio (L = 256, d = 128, four seeds) in the
distribution of four-seed ratios drawn with the conditional sampler
(``simulate_stack(..., method="conditional")``). The sampler is exact in distribution by the
lemma the chapter proves, and ``validate_stack_gain.py`` checks it deep in a narrow stack; this
script checks it at the percentile's own setting: Post-Norm, d = 128, L = 256, the article's
statistic (first-layer over last-layer parameter gradient, each a mean over four seeds).

Design (fixed in advance): 500 groups of four seeds with the exact protocol (about half an hour
of one core) against 4,000 groups with the conditional sampler (a few minutes), independent
seeds. Decision rule: the two distributions of the log-ratio agree when the two-sample
Kolmogorov-Smirnov test gives p >= 0.001 (at these sizes a shift of the log-ratio's distribution
by about a quarter of its standard deviation fails it with even odds). Also printed, for reading: each
method's share of groups at or below the article's value with its 95% Wilson interval, the
median and the 5% quantile. It exits with status 1 when the rule fails.

Run:  .venv/bin/python benchmarks/validate_stack_tail.py [--exact-groups N] [--cond-groups M]
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np
from scipy import stats

from normlib import claims
from normlib._validate import check_int
from normlib.resampling import wilson_interval
from normlib.stack import simulate_stack

WIDTH, DEPTH, EXACT_GROUPS, COND_GROUPS, P_MIN = 128, 256, 500, 4000, 1e-3


def group_log_ratios(method: str, groups: int, first_seed: int, *, width: int = WIDTH,
                     depth: int = DEPTH) -> tuple[np.ndarray, float]:
    """Log of the article's statistic for ``groups`` independent groups of four seeds, and the CPU seconds."""
    groups = check_int(groups, "groups")
    t0 = time.process_time()
    r = simulate_stack("post", depth, width=width, method=method,
                       seeds=range(first_seed, first_seed + 4 * groups))
    pg = r.per_seed_param_grad.reshape(groups, 4, depth).mean(axis=1)
    return np.log(pg[:, 0] / pg[:, -1]), time.process_time() - t0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exact-groups", type=int, default=EXACT_GROUPS)
    parser.add_argument("--cond-groups", type=int, default=COND_GROUPS)
    args = parser.parse_args(argv)
    _, checks = claims.registry()
    printed = float(checks["C5.7-post-depth256"].printed)
    ex, t_ex = group_log_ratios("exact", args.exact_groups, 20_000_000)  # not seeds 0-3, which the chapter's rerun of the article's protocol uses
    co, t_co = group_log_ratios("conditional", args.cond_groups, 50_000_000)
    ks = stats.ks_2samp(ex, co)
    print(f"Post-Norm, d = {WIDTH}, L = {DEPTH}, groups of four seeds: exact {ex.size}, conditional {co.size} "
          f"(CPU: exact {t_ex:.0f} s, conditional {t_co:.0f} s)")
    print(f"{'method':>12} {'share <= printed':>17} {'95% Wilson':>18} {'median':>8} {'q05':>8}")
    for name, v in (("exact", ex), ("conditional", co)):
        k = int(np.sum(v <= math.log(printed)))
        lo, hi = wilson_interval(k, v.size)
        print(f"{name:>12} {k:>6d} / {v.size:<6d}   [{lo:.4f}, {hi:.4f}] "
              f"{math.exp(np.median(v)):8.4f} {math.exp(np.quantile(v, 0.05)):8.4f}")
    print(f"printed value {printed}; Kolmogorov-Smirnov D = {ks.statistic:.4f}, p = {ks.pvalue:.4f}")
    ok = ks.pvalue >= P_MIN
    print("agree" if ok else f"DISAGREE: p = {ks.pvalue:.2g} < {P_MIN}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
