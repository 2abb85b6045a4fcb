"""LayerNorm vs RMSNorm (and pRMSNorm) wall-clock times: the fuller table behind the
chapter "RMSNorm" (``book/rmsnorm.md``, section "The paper's speed-ups").

Run by hand (``make bench`` or ``.venv/bin/python benchmarks/bench_norms.py``), never by
the tests: timings describe one machine at one moment. Every set of candidates is timed in
alternation (``normlib.timing.interleaved_times``); each time is the median over repeats,
and each ratio A / B (LayerNorm / RMSNorm unless the row says otherwise) is the median of
the paired per-repeat ratios with a 95% bootstrap interval over the pairs
(``normlib.timing.paired_ratio``). A ratio above 1 means B took less time than A.

Options::

    --repeats N    timed repeats per candidate (default 15)
    --threads N    PyTorch intra-op threads (default 2, as in the chapter)
    --quick        fewer shapes and repeats (a smoke run)
    --no-torch     numpy only
"""

from __future__ import annotations

import argparse
import os
import platform
import sys

import numpy as np

import normlib as nl
from normlib.timing import interleaved_times, paired_ratio

NUMPY_SHAPES = [(4096, 512), (1024, 4096), (8192, 768), (2048, 2048), (512, 8192), (32768, 128)]
TORCH_SHAPES = [(8 * 512, 768), (4 * 512, 4096), (16 * 512, 1024), (2 * 512, 8192), (8 * 128, 512)]
EPS = 1e-5


_BOOT = np.random.default_rng(12345)  # bootstrap resamples of the paired ratios


def _row(impl: str, shape, t_a, t_b, b: str = "RMSNorm", a: str = "LayerNorm") -> str:
    r = paired_ratio(t_a, t_b, rng=_BOOT)
    return (
        f"{impl:<44} {str(shape):>14} {a:>10} {b:>10} {1e3 * t_a.median:>9.3f} {1e3 * t_b.median:>9.3f} "
        f"{r.ratio:>6.2f} {f'[{r.lo:.2f}, {r.hi:.2f}]':>13} {t_a.spread:>5.0%} {t_b.spread:>5.0%}"
    )


def _header() -> str:
    h = (
        f"{'implementation':<44} {'shape':>14} {'A':>10} {'B':>10} {'A (ms)':>9} {'B (ms)':>9} "
        f"{'A/B':>6} {'95% interval':>13} {'sprA':>5} {'sprB':>5}"
    )
    return h + "\n" + "-" * len(h)


def bench_numpy(shapes, repeats: int, rng: np.random.Generator) -> list[str]:
    rows = []
    for shape in shapes:
        x = rng.standard_normal(shape, dtype=np.float32)
        d = shape[1]
        w, b = np.ones(d, np.float32), np.zeros(d, np.float32)
        t = interleaved_times(
            {
                "ln": lambda: nl.layer_norm(x, w, b, eps=EPS),
                "rms": lambda: nl.rms_norm(x, w, eps=EPS),
                "prms": lambda: nl.partial_rms_norm(x, w, p=0.0625, eps=EPS),
            },
            repeats=repeats,
            warmup=2,
            min_time=0.05,
        )
        rows.append(_row("numpy normlib, forward, float32", shape, t["ln"], t["rms"]))
        rows.append(_row("numpy normlib, forward, float32", shape, t["ln"], t["prms"], "pRMS 1/16"))
    return rows


def bench_torch(shapes, repeats: int, threads: int) -> list[str]:
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(threads)
    rows = []
    for shape in shapes:
        gen = torch.Generator().manual_seed(0)
        d = shape[1]
        x = torch.randn(shape, generator=gen, requires_grad=True)
        dy = torch.randn(shape, generator=gen)
        w_ln, b_ln = torch.ones(d, requires_grad=True), torch.zeros(d, requires_grad=True)
        w_rms = torch.ones(d, requires_grad=True)

        def ln_lib():
            torch.autograd.grad(F.layer_norm(x, (d,), w_ln, b_ln, EPS), (x, w_ln, b_ln), dy)

        def rms_lib():
            torch.autograd.grad(F.rms_norm(x, (d,), w_rms, EPS), (x, w_rms), dy)

        def ln_comp():
            xc = x - x.mean(-1, keepdim=True)
            y = xc * torch.rsqrt((xc * xc).mean(-1, keepdim=True) + EPS) * w_ln + b_ln
            torch.autograd.grad(y, (x, w_ln, b_ln), dy)

        def rms_comp():
            y = x * torch.rsqrt((x * x).mean(-1, keepdim=True) + EPS) * w_rms
            torch.autograd.grad(y, (x, w_rms), dy)

        with torch.no_grad():
            t = interleaved_times(
                {
                    "ln": lambda: F.layer_norm(x, (d,), w_ln, b_ln, EPS),
                    "rms": lambda: F.rms_norm(x, (d,), w_rms, EPS),
                },
                repeats=repeats,
                warmup=2,
                min_time=0.05,
            )
        rows.append(_row("torch F.*, forward only (no grad)", shape, t["ln"], t["rms"]))
        t = interleaved_times({"ln": ln_lib, "rms": rms_lib}, repeats=repeats, warmup=1, min_time=0.05)
        rows.append(_row("torch F.*, forward+backward", shape, t["ln"], t["rms"]))
        t = interleaved_times({"ln": ln_comp, "rms": rms_comp}, repeats=repeats, warmup=1, min_time=0.05)
        rows.append(_row("torch same-primitive composites, fwd+bwd", shape, t["ln"], t["rms"]))
        t = interleaved_times({"lib": rms_lib, "comp": rms_comp}, repeats=repeats, warmup=1, min_time=0.05)
        rows.append(_row("torch RMSNorm: library vs composite, fwd+bwd", shape, t["lib"], t["comp"], "composite", "F.rms_norm"))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-torch", action="store_true")
    args = ap.parse_args(argv)
    repeats = 3 if args.quick else args.repeats
    np_shapes = NUMPY_SHAPES[:2] if args.quick else NUMPY_SHAPES
    pt_shapes = TORCH_SHAPES[:1] if args.quick else TORCH_SHAPES

    print(f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    rows = bench_numpy(np_shapes, repeats, np.random.default_rng(0))
    if not args.no_torch:
        import torch

        print(f"torch {torch.__version__}, {args.threads} threads")
        rows += bench_torch(pt_shapes, repeats, args.threads)
    print(f"median of {repeats} interleaved repeats; A/B: median paired ratio and its 95% bootstrap interval; "
          "'spr' = (slowest - fastest) / median of the repeats")
    load = os.getloadavg()[0]
    if load > (os.cpu_count() or 1):
        print(f"note: load average {load:.2f} exceeds the {os.cpu_count()} CPUs: other processes competed, "
              "and multi-threaded kernels wait for descheduled threads; treat the numbers as rough")
    print()
    print(_header())
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
