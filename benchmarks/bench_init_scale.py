"""The controlled experiment behind "set by σ²d, not by σ" (book/real-transformer.md, issue 26 item 1).

Post-LN growth G of the book's Transformer at initialization, over a grid of widths d and
initialization scales σ²d, with one batch and one estimator throughout:

* model: ``TinyTransformer("post", 12, width=d, heads=max(4, d // 64))`` (vocabulary 16,
  sequences of 16 positions), d in 64, 128, 256, 512, 768;
* initializations: every weight matrix (embeddings, projections, head) ``N(0, σ²)`` on the
  model's own draws (:func:`normlib.transformer.set_normal_init`), at
  σ²d = 0.0256, 0.1024, 0.3072, 1 (σ = 0.02 at d = 64, 256, 768, and σ²d = 1), plus
  σ = 0.02 at the other widths, plus Xiong et al.'s Xavier initialization (``init="xavier"``);
  a seed's initializations share its draws;
* estimator: ``‖E ∂L/∂W2_l‖`` (Xiong et al.'s Figure 3 quantity), from the unbiased
  U-statistic of :func:`normlib.transformer.ffn_grad_stats` over 8 mini-batches of 16
  sequences of the reversal task (``reversal_task(128, rng=default_rng([seed, 7]))``);
  the norm of the 128-sequence gradient and of the first mini-batch's are kept for comparison;
* G = exp(mean over seeds of ln G_s), ln G_s the fitted slope of the seed's ln-profile times 11
  (:func:`normlib.profiles.log_growth`); 95% Student t intervals over seeds;
* seeds fixed in advance from a pilot on other seeds (1000-1005, 2000-2011; not reused):
  per-seed standard deviations of ln G of about 0.2-0.4 at d <= 128 and 0.1-0.15 at d >= 256
  ask for 64 seeds at d <= 128, 24 at 256 and 16 at 512 and 768 for a 95% half-width of
  about 0.1 in ln G;
* decision rules, fixed with the design: "the same at fixed σ²d" means the 95% Welch
  interval of ln(G(d) / G(768)) lies within ±ln 1.2 (the pilot's change of G for a factor 2
  of σ²d near the GPT-2 scale is about 1.45, so 1.2 is about half of it in log); "not set by
  σ" means the interval of ln(G(768) / G(64)) at σ = 0.02 lies above ln 1.2.

Run:   .venv/bin/python benchmarks/bench_init_scale.py --widths 64,128,256,512 --out a.npz
       .venv/bin/python benchmarks/bench_init_scale.py --widths 768 --out b.npz
       .venv/bin/python benchmarks/bench_init_scale.py --table a.npz b.npz
(or with no arguments: everything in one process, then the table). About 25 minutes of CPU
on one core of the reference machine; the chapter runs a slice of it (d = 64 and 128).
Nothing here is asserted: the table is printed for the chapter's closing note; the run the
chapter was written against is recorded in benchmarks/bench_init_scale_recorded.txt (shown
on the chapter's evidence page).
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

SEEDS = {64: 64, 128: 64, 256: 24, 512: 16, 768: 16}
S2D = (0.0256, 0.1024, 0.3072, 1.0)
SIGMA_FIXED = 0.02
DEPTH, BATCH, GROUPS = 12, 128, 8
MARGIN = math.log(1.2)


def configs(width: int) -> list[tuple[str, float | None]]:
    """(name, σ) of every initialization run at this width; σ None for Xavier."""
    out = [("xavier", None)] + [(f"s2d={s:g}", math.sqrt(s / width)) for s in S2D]
    if not any(abs(SIGMA_FIXED**2 * width - s) < 1e-9 for s in S2D):
        out.append((f"s2d={SIGMA_FIXED**2 * width:g}", SIGMA_FIXED))
    return out


def run_width(width: int, n_seeds: int, *, log=print) -> dict:
    """Per-seed, per-layer statistics of every configuration at one width."""
    import torch

    import normlib.transformer as nt

    torch.set_num_threads(1)
    names = [c for c, _ in configs(width)]
    res = {(width, c, k): [] for c in names for k in ("expected_sq", "mean_norm", "first_norm")}
    t0 = time.process_time()
    for seed in range(n_seeds):
        model = nt.TinyTransformer("post", DEPTH, width=width, heads=max(4, width // 64), seed=seed)
        tokens, _ = nt.reversal_task(BATCH, rng=np.random.default_rng([seed, 7]))
        for name, sigma in configs(width):
            if sigma is not None:
                nt.set_normal_init(model, sigma)
            st = nt.ffn_grad_stats(model, tokens, groups=GROUPS)
            res[width, name, "expected_sq"].append(st.expected_sq)
            res[width, name, "mean_norm"].append(st.mean_norm)
            res[width, name, "first_norm"].append(st.group_norms[0])
        log(f"d={width} seed {seed}: {time.process_time() - t0:.0f} s CPU")
    return {k: np.array(v) for k, v in res.items()}


def save(path: str, res: dict) -> None:
    np.savez_compressed(path, **{"|".join(map(str, k)): v for k, v in res.items()})


def load(paths) -> dict:
    out = {}
    for p in paths:
        with np.load(p) as f:
            for key in f.files:
                w, c, k = key.split("|")
                out[int(w), c, k] = f[key]
    return out


def cell(res: dict, width: int, name: str, estimator: str = "expected"):
    """Per-seed ln G of one cell (None if the U-statistic is non-positive somewhere) and the count of such seeds."""
    from normlib.profiles import log_growth

    if estimator == "expected":
        u = res[width, name, "expected_sq"]
        bad = int((u <= 0).any(axis=1).sum())
        return (None if bad else log_growth(np.sqrt(u))), bad
    return log_growth(res[width, name, f"{estimator}_norm"]), 0


def table(res: dict) -> str:
    from normlib.profiles import mean_interval, welch_interval

    widths = sorted({w for w, _, _ in res})
    rows = ["xavier"] + [f"s2d={s:g}" for s in S2D]
    lines = ["Post-LN growth G, first to last of 12 layers (95% t interval over seeds; n seeds)", ""]
    head = f"{'init':>14} | " + " | ".join(f"{'d = ' + str(w):>20}" for w in widths)
    lines += [head, "-" * len(head)]
    fixed = {}
    for name in rows + ["sigma=0.02"]:
        cells = []
        for w in widths:
            nm = name
            if name == "sigma=0.02":
                nm = f"s2d={SIGMA_FIXED**2 * w:g}"
            if (w, nm, "expected_sq") not in res:
                cells.append(f"{'—':>20}")
                continue
            lg, bad = cell(res, w, nm)
            if lg is None:
                cells.append(f"{'n/a (' + str(bad) + ' seeds < 0)':>20}")
                continue
            g, lo, hi = mean_interval(lg).exp()
            if name == "sigma=0.02":
                fixed[w] = lg
            cells.append(f"{g:5.2f} ({lo:4.2f}–{hi:4.2f}) {len(lg):>2}")
        label = "σ = 0.02" if name == "sigma=0.02" else ("Xavier" if name == "xavier" else "σ²d = " + name[4:])
        lines.append(f"{label:>14} | " + " | ".join(cells))
    ref = max(widths)
    lines += ["", f"ratio G(d) / G({ref}) at fixed initialization (95% Welch interval); 'same' = inside [1/1.2, 1.2]", ""]
    for name in rows:
        lr, _ = cell(res, ref, name) if (ref, name, "expected_sq") in res else (None, 0)
        if lr is None:
            continue
        parts = []
        for w in widths[:-1]:
            lg, _ = cell(res, w, name)
            if lg is None:
                parts.append("n/a")
                continue
            iv = welch_interval(lg, lr)
            r, lo, hi = iv.exp()
            same = -MARGIN < iv.lo and iv.hi < MARGIN
            parts.append(f"d={w}: {r:.2f} ({lo:.2f}–{hi:.2f}){' same' if same else ''}")
        label = "Xavier" if name == "xavier" else "σ²d = " + name[4:]
        lines.append(f"{label:>14} | " + "; ".join(parts))
    if 64 in fixed and ref in fixed:
        iv = welch_interval(fixed[ref], fixed[64])
        r, lo, hi = iv.exp()
        lines += ["", f"σ = 0.02: G({ref}) / G(64) = {r:.2f} ({lo:.2f}–{hi:.2f}); above 1.2: {iv.lo > MARGIN}"]
    lines += ["", "the estimator matters: G by the unbiased ||E g|| / by the 128-sequence gradient's norm / by one mini-batch of 16", ""]
    for name in rows:
        parts = []
        for w in widths:
            lg, _ = cell(res, w, name)
            vals = [math.exp(x.mean()) if x is not None else float("nan")
                    for x in (lg, cell(res, w, name, "mean")[0], cell(res, w, name, "first")[0])]
            parts.append(f"d={w}: " + "/".join(f"{v:.2f}" for v in vals))
        label = "Xavier" if name == "xavier" else "σ²d = " + name[4:]
        lines.append(f"{label:>14} | " + "; ".join(parts))
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--widths", default=",".join(map(str, SEEDS)), help="comma-separated widths to run")
    ap.add_argument("--out", help="save the per-seed results to this .npz file")
    ap.add_argument("--table", nargs="+", metavar="NPZ", help="print the table of saved results and exit")
    args = ap.parse_args(argv)
    if args.table:
        print(table(load(args.table)))
        return 0
    res = {}
    for w in (int(x) for x in args.widths.split(",")):
        if w not in SEEDS:
            ap.error(f"width {w} is not in the design {sorted(SEEDS)}")
        res.update(run_width(w, SEEDS[w], log=lambda m: print(m, file=sys.stderr, flush=True)))
        if args.out:
            save(args.out, res)
    print(table(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
