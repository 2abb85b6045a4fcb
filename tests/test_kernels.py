"""normlib.kernels: the kernel set the cross-kernel checks compare with."""

from __future__ import annotations

import pytest

from normlib import kernels


@pytest.mark.parametrize("cap, expected", [
    ("AVX512", {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2", "OPENBLAS_CORETYPE": "Haswell"}),
    ("avx512_vnni", {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2", "OPENBLAS_CORETYPE": "Haswell"}),
    ("AVX2", {"ATEN_CPU_CAPABILITY": "default", "MKL_ENABLE_INSTRUCTIONS": "SSE4_2", "OPENBLAS_CORETYPE": "Sandybridge"}),
])
def test_the_other_set_switches_all_three_libraries(monkeypatch, cap, expected):
    monkeypatch.delenv("NORMLIB_ALT_KERNELS", raising=False)
    got = kernels.alternative_kernels(cap)
    assert got == expected
    assert set(got) == set(kernels.KERNEL_VARIABLES)


def test_the_returned_set_is_a_copy(monkeypatch):
    monkeypatch.delenv("NORMLIB_ALT_KERNELS", raising=False)
    kernels.alternative_kernels("AVX2")["OPENBLAS_CORETYPE"] = "x"
    assert kernels.alternative_kernels("AVX2")["OPENBLAS_CORETYPE"] == "Sandybridge"


def test_the_override_wins_and_is_parsed(monkeypatch):
    monkeypatch.setenv("NORMLIB_ALT_KERNELS", "ATEN_CPU_CAPABILITY=default OPENBLAS_CORETYPE=Zen")
    assert kernels.alternative_kernels("AVX512") == {"ATEN_CPU_CAPABILITY": "default", "OPENBLAS_CORETYPE": "Zen"}
    monkeypatch.setenv("NORMLIB_ALT_KERNELS", "ATEN_CPU_CAPABILITY")
    with pytest.raises(ValueError, match="VAR=value"):
        kernels.alternative_kernels("AVX512")


def test_the_default_capability_is_the_machines_not_the_override(monkeypatch):
    """Inside a process that runs the other set, the machine's own default is still reported."""
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "default")
    cap = kernels.default_capability()
    assert cap.upper().startswith(("AVX2", "AVX512")), cap
