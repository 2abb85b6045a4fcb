"""_ext/glued_values.py: glued values are read from executed notebooks, and timings may differ."""

from __future__ import annotations

import importlib.util
import json
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
