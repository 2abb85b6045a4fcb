"""The floating-point kernel sets a reader's CPU may use, for the cross-kernel checks.

PyTorch's elementwise kernels and reductions go through ATen (``ATEN_CPU_CAPABILITY``), its
matrix products through MKL (``MKL_ENABLE_INSTRUCTIONS``), numpy's through OpenBLAS
(``OPENBLAS_CORETYPE``); a set that leaves one of the three at its default tests nothing
there. Used by ``make determinism-kernels`` (``_ext/glued_values.py``) and by the evidence
pages that re-run a probe under the other set.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

__all__ = ["KERNEL_VARIABLES", "alternative_kernels", "default_capability", "moved_in_report"]

#: the environment variables that choose the three libraries' kernels
KERNEL_VARIABLES = ("ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS", "OPENBLAS_CORETYPE")

_ON_AVX512 = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2", "OPENBLAS_CORETYPE": "Haswell"}
_ON_AVX2 = {"ATEN_CPU_CAPABILITY": "default", "MKL_ENABLE_INSTRUCTIONS": "SSE4_2", "OPENBLAS_CORETYPE": "Sandybridge"}


def default_capability() -> str:
    """The kernel set PyTorch picks on this machine with no override ("AVX512", "AVX2", ...).

    Returns
    -------
    str
        ``torch.backends.cpu.get_cpu_capability()`` of a fresh interpreter, or "unknown".

    Notes
    -----
    Asked of a fresh interpreter with the three variables removed from its environment, so
    the answer is the machine's, also inside a process that already runs the other set.
    Used by the kernel probes of the evidence pages of ``book/pre-vs-post.md`` and others.
    """
    env = {k: v for k, v in os.environ.items() if k not in KERNEL_VARIABLES}
    proc = subprocess.run([sys.executable, "-c", "import torch; print(torch.backends.cpu.get_cpu_capability())"],
                          env=env, capture_output=True, text=True)
    return proc.stdout.strip() or "unknown"


def alternative_kernels(capability: str | None = None) -> dict[str, str]:
    """The other kernel set to compare with this machine's default.

    Parameters
    ----------
    capability : str, optional
        This machine's default (``default_capability()`` when omitted).

    Returns
    -------
    dict
        Environment variables: on an AVX-512 machine PyTorch's AVX2 kernels, MKL's AVX2 path
        and OpenBLAS's Haswell kernels; otherwise (where that set changes nothing, bit for bit)
        PyTorch's non-vectorized kernels, MKL's SSE4.2 path and OpenBLAS's Sandybridge
        kernels. ``NORMLIB_ALT_KERNELS="VAR=value ..."`` in the environment overrides it.

    Raises
    ------
    ValueError
        If ``NORMLIB_ALT_KERNELS`` holds an item that is not ``VAR=value``.

    Notes
    -----
    Used by ``make determinism-kernels`` and by the kernel probes of the evidence pages of
    ``book/pre-vs-post.md``, ``book/warmup-lr.md`` and ``book/real-transformer.md``.
    """
    override = os.environ.get("NORMLIB_ALT_KERNELS")
    if override:
        items = override.split()
        bad = [i for i in items if "=" not in i or i.startswith("=")]
        if bad:
            raise ValueError(f"NORMLIB_ALT_KERNELS items must be VAR=value, got {bad}")
        return dict(i.split("=", 1) for i in items)
    if capability is None:
        capability = default_capability()
    return dict(_ON_AVX512 if capability.upper().startswith("AVX512") else _ON_AVX2)


def moved_in_report(text: str) -> dict[str, list[str]]:
    """The unlabelled glued values that a recorded cross-kernel run found moving, by page.

    Parameters
    ----------
    text : str
        The output of ``_ext/glued_values.py kernels`` (``make determinism-kernels``): for each
        page a summary line ``book/x.md: N glued values, ...``, then its ``DIFFERS: key: ...`` lines.

    Returns
    -------
    dict of str to list of str
        ``{page: [glue keys]}``, every page with a summary line (an empty list if none moved).

    Raises
    ------
    ValueError
        If the text holds no page summary, or a ``DIFFERS`` line comes before any.

    Notes
    -----
    ``tests/test_kernel_labels.py`` reads ``benchmarks/recorded/determinism-kernels.txt`` with
    it: every value listed there must be glued with ``machine_dependent=True``. The evidence
    page of ``book/warmup-lr.md`` (``book/evidence/warmup-lr.md``) reports the count.
    """
    moved: dict[str, list[str]] = {}
    page = None
    for line in text.splitlines():
        m = re.match(r"^(\S+\.md): \d+ glued values, ", line)
        if m:
            page = m.group(1)
            moved.setdefault(page, [])
        elif line.strip().startswith("DIFFERS:"):
            if page is None:
                raise ValueError(f"a DIFFERS line before any page summary: {line!r}")
            moved[page].append(line.split("DIFFERS:", 1)[1].split(":", 1)[0].strip())
    if not moved:
        raise ValueError("no page summary in the kernels report")
    return moved
