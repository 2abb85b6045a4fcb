"""_ext/glued_values.py: glued values are read from executed notebooks, and timings may differ."""

from __future__ import annotations

import importlib.util
from pathlib import Path

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
