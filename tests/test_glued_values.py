"""_ext/glued_values.py: glued values are read from executed notebooks, and timings may differ."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("glued_values", ROOT / "_ext" / "glued_values.py")
gv = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gv)


def _nb(value: str, timing: str, png: str = "iVBORw0K") -> dict:
    prefix = gv.GLUE_PREFIX

    def out(name, data, md=None):
        meta = {"scrapbook": {"name": name, "mime_prefix": prefix}, **(md or {})}
        return {"output_type": "display_data", "data": {prefix + k: v for k, v in data.items()}, "metadata": meta}

    return {
        "cells": [
            {"cell_type": "markdown", "source": "x"},
            {
                "cell_type": "code",
                "outputs": [
                    out("ratio", {"text/plain": value}),
                    out("t_run", {"text/plain": timing}, {"normlib": {"machine_dependent": True}}),
                    out("fig", {"image/png": png, "text/plain": "<Figure>"}),
                    {"output_type": "stream", "name": "stdout", "text": "not glued"},
                ],
            },
        ]
    }


def test_values_and_markers_are_read():
    g = gv.glued_in_notebook(_nb("0.715", "1.2"))
    assert g["ratio"] == {"value": "0.715", "machine_dependent": False}
    assert g["t_run"]["machine_dependent"] is True
    assert g["fig"]["value"].startswith("image/png sha256:")
    assert set(g) == {"ratio", "t_run", "fig"}


def test_timings_may_differ_other_values_may_not():
    a = {"book/x": gv.glued_in_notebook(_nb("0.715", "1.2"))}
    same_but_timing = {"book/x": gv.glued_in_notebook(_nb("0.715", "3.4"))}
    bad, allowed = gv.compare(a, same_but_timing)
    assert not bad and len(allowed) == 1

    other_value = {"book/x": gv.glued_in_notebook(_nb("0.716", "1.2"))}
    bad, _ = gv.compare(a, other_value)
    assert bad == ["book/x::ratio: '0.715' != '0.716'"]

    other_figure = {"book/x": gv.glued_in_notebook(_nb("0.715", "1.2", png="AAAA"))}
    assert gv.compare(a, other_figure)[0]

    missing = {"book/x": {k: v for k, v in a["book/x"].items() if k != "ratio"}}
    assert gv.compare(a, missing)[0] == ["book/x::ratio: glued in one build only"]


def test_values_are_read_from_mystnb_glue_files(tmp_path):
    """MyST-NB 1.x moves glued outputs out of the executed .ipynb into <chapter>.glue.json."""
    nb = _nb("0.715", "1.2")
    outputs = nb["cells"][1]["outputs"]
    glue = {o["metadata"]["scrapbook"]["name"]: o for o in outputs if "scrapbook" in o.get("metadata", {})}
    nb["cells"][1]["outputs"] = [o for o in outputs if "scrapbook" not in o.get("metadata", {})]
    executed = tmp_path / "jupyter_execute" / "book"
    executed.mkdir(parents=True)
    (executed / "x.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    (executed / "x.glue.json").write_text(json.dumps(glue), encoding="utf-8")
    values = gv.extract(tmp_path)
    assert values["book/x"] == gv.glued_in_notebook(_nb("0.715", "1.2"))
    assert values["book/x"]["t_run"]["machine_dependent"] is True


def test_finding_no_glued_values_fails_rather_than_passing_vacuously(capsys):
    assert gv.report({"book/x": {}}, {"book/x": {}}) == 1
    assert "nothing was compared" in capsys.readouterr().out
    a = {"book/x": gv.glued_in_notebook(_nb("0.715", "1.2"))}
    assert gv.report(a, a) == 0
    assert gv.report(a, {"book/x": gv.glued_in_notebook(_nb("0.716", "1.2"))}) == 1


# ----------------------------------------------------------------------------- kernel sets
# `make determinism-kernels` (``kernels``) compares one chapter's glued values between two
# executions with different floating-point kernels (``kernel_differences``).


def _g(value: str, machine_dependent: bool = False) -> dict:
    return {"value": value, "machine_dependent": machine_dependent}


def test_kernel_differences_compares_glued_strings():
    """Mutant: only numbers compared, a wording that flips between kernel sets passes."""
    a, b = {"w": _g("'above the bound'")}, {"w": _g("'below the bound'")}
    assert gv.kernel_differences(a, b) == ["w: \"'above the bound'\" vs \"'below the bound'\""]
    assert gv.kernel_differences(a, dict(a)) == []


def test_kernel_differences_tolerance_is_relative():
    """Mutant: an absolute tolerance (|u - v| > 1e-3): 1e-4 against 2e-4 would pass, and
    1000 against 1000.5 (relative 5e-4) would fail."""
    assert len(gv.kernel_differences({"x": _g("0.0001")}, {"x": _g("0.0002")})) == 1
    assert gv.kernel_differences({"x": _g("1000.0")}, {"x": _g("1000.5")}) == []


def test_kernel_differences_threshold_is_a_tenth_of_a_percent():
    """Mutant: a 1% threshold (REL_TOL = 1e-2): a move of 0.2% would pass unlabelled."""
    assert len(gv.kernel_differences({"x": _g("1.0")}, {"x": _g("1.002")})) == 1  # 0.2%: labelled or fails
    assert gv.kernel_differences({"x": _g("1.0")}, {"x": _g("1.0009")}) == []  # 0.09%: the same value
    assert len(gv.kernel_differences({"n": _g("1000")}, {"n": _g("1002")})) == 1  # ints too


def test_kernel_differences_a_value_glued_in_one_execution_only_fails():
    """Mutant: a key missing from one execution is skipped silently."""
    assert gv.kernel_differences({"x": _g("1.0"), "y": _g("2.0")}, {"x": _g("1.0")}) == [
        "y: glued in one execution only"]
    assert gv.kernel_differences({"x": _g("1.0")}, {"x": _g("1.0"), "z": _g("'a'")}) == [
        "z: glued in one execution only"]


def test_a_value_labelled_machine_dependent_in_one_run_only_may_not_differ():
    """Mutant (and the defect kernel_differences had): a value marked machine-dependent in
    only one of the two executions (or builds) is allowed to differ. The label exempts a
    value only when both runs give it."""
    one = {"t": _g("1.5", machine_dependent=True)}
    other = {"t": _g("3.0", machine_dependent=False)}
    both = {"t": _g("3.0", machine_dependent=True)}
    assert gv.kernel_differences(one, other) != [] and gv.kernel_differences(other, one) != []
    assert gv.kernel_differences(one, both) == []
    assert gv.compare({"d": one}, {"d": other})[0] != [] and gv.compare({"d": other}, {"d": one})[0] != []
    assert gv.compare({"d": one}, {"d": both}) == ([], ["d::t: '1.5' != '3.0'"])


def test_kernel_differences_leave_figures_out():
    assert gv.kernel_differences({"f": _g("image/png sha256:aa")}, {"f": _g("image/png sha256:bb")}) == []


@pytest.fixture
def fake_runs(monkeypatch, tmp_path):
    """``kernels()`` without kernels: each "execution" writes a notebook whose glued values
    the test chooses per kernel set (``values[name]``), or fails (``values[name] is None``)."""
    values: dict = {}

    def execute(md, env_extra, out):
        name = "other" if env_extra else "default"
        if values[name] is None:
            return False, 0.1, "Traceback: a claim check failed"
        nb = _nb(values[name], "1.0" if name == "default" else "2.0")
        out.write_text(json.dumps(nb), encoding="utf-8")
        return True, 0.1, ""

    monkeypatch.setattr(gv, "execute", execute)
    monkeypatch.setattr(gv, "_torch_capability", lambda: "AVX2")
    monkeypatch.setattr(gv, "alternative_kernels", lambda: {"ATEN_CPU_CAPABILITY": "default"})
    md = tmp_path / "chapter.md"
    md.write_text("# x\n", encoding="utf-8")
    return values, md


def test_kernels_exits_1_when_an_unlabelled_value_differs(fake_runs, capsys):
    """Mutant: ``kernels()`` prints DIFFERS but exits 0 (``make determinism-kernels`` could
    never fail)."""
    values, md = fake_runs
    values.update(default="0.715", other="0.716")
    assert gv.kernels([md]) == 1
    assert "DIFFERS: ratio" in capsys.readouterr().out
    values.update(default="0.715", other="0.715")  # the timing t_run differs: labelled, allowed
    assert gv.kernels([md]) == 0


def test_kernels_exits_1_when_an_execution_fails(fake_runs, capsys):
    values, md = fake_runs
    values.update(default="0.715", other=None)
    assert gv.kernels([md]) == 1
    assert "FAILED" in capsys.readouterr().out


@pytest.mark.parametrize("cap, expected", [
    ("AVX512", {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2", "OPENBLAS_CORETYPE": "Haswell"}),
    ("AVX2", {"ATEN_CPU_CAPABILITY": "default", "MKL_ENABLE_INSTRUCTIONS": "SSE4_2", "OPENBLAS_CORETYPE": "Sandybridge"}),
])
def test_the_alternative_kernels_switch_all_three_libraries(monkeypatch, cap, expected):
    """PyTorch's matrix products go through MKL, numpy's through OpenBLAS, the rest through
    ATen: an alternative set that leaves one of them at its default tests nothing there."""
    monkeypatch.delenv("NORMLIB_ALT_KERNELS", raising=False)
    monkeypatch.setattr(gv, "_torch_capability", lambda: cap)
    assert gv.alternative_kernels() == expected


def test_the_alternative_kernels_change_torch_and_numpy_matrix_products():
    """On this machine the alternative set really changes the rounding of float32 arithmetic in
    PyTorch (a matrix product, a softmax, a LayerNorm or a long sum: MKL or ATen's vectorized
    kernels) and of numpy's matrix product (OpenBLAS), bit for bit, or the kernel comparison
    would be empty. Which PyTorch operation changes depends on the CPU: on an AVX-512 machine the
    AVX2 set leaves MKL's product of these shapes unchanged and changes ATen's softmax."""
    import os
    import subprocess
    import sys

    code = ("import hashlib, numpy as np, torch\n"
            "h = lambda t: hashlib.sha1(t.numpy().tobytes()).hexdigest()\n"
            "torch.manual_seed(0); a = torch.randn(257, 513); b = torch.randn(513, 129)\n"
            "z = torch.randn(64, 4096); v = torch.randn(1_000_003)\n"
            "r = np.random.default_rng(0); x = r.standard_normal((257, 513), dtype=np.float32)\n"
            "y = r.standard_normal((513, 129), dtype=np.float32)\n"
            "print(hashlib.sha1((x @ y).tobytes()).hexdigest(), h(a @ b), h(torch.softmax(z, -1)),\n"
            "      h(torch.nn.functional.layer_norm(z, (4096,))), h(v.sum().reshape(1)))\n")
    base = {k: v for k, v in os.environ.items() if k not in ("ATEN_CPU_CAPABILITY", "OPENBLAS_CORETYPE", "MKL_ENABLE_INSTRUCTIONS")}

    def run(extra):
        out = subprocess.run([sys.executable, "-c", code], env={**base, **extra}, capture_output=True, text=True, check=True)
        return out.stdout.split()

    default, other = run({}), run(gv.alternative_kernels())
    assert default[0] != other[0], "numpy's matrix product is bitwise identical under the alternative kernels"
    assert default[1:] != other[1:], "PyTorch's float32 kernels are all bitwise identical under the alternative kernels"


def test_the_page_list_includes_the_evidence_pages():
    """Mutant: only book/*.md is compared, so no evidence page (most of the checks) ever runs under other kernels."""
    names = {p.relative_to(ROOT).as_posix() for p in gv.chapter_paths()}
    assert "book/evidence/pre-vs-post.md" in names and "book/pre-vs-post.md" in names
    assert not any(n.endswith(("bibliography.md", "glossary.md")) for n in names)  # not executed pages


def test_kernels_threads_compares_one_thread_with_two(monkeypatch, tmp_path, capsys):
    seen = []

    def execute(md, env_extra, out):
        seen.append(env_extra)
        n = env_extra["OMP_NUM_THREADS"]
        out.write_text(json.dumps(_nb("0.715" if n == "1" else "0.716", "1.0")), encoding="utf-8")
        return True, 0.1, ""

    monkeypatch.setattr(gv, "execute", execute)
    md = tmp_path / "chapter.md"
    md.write_text("# x\n", encoding="utf-8")
    assert gv.kernels([md], threads=True) == 1  # a value that moves with the thread count fails
    assert sorted(e["OPENBLAS_NUM_THREADS"] for e in seen) == ["1", "2"]
    assert all(set(e) == {"OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"} for e in seen)
