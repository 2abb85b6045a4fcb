"""The reader pages: the extras' floors, the glossary's terms, the execution report's table.

- normlib's ``torch`` and ``book`` extras (``pyproject.toml``) must not promise versions
  older than the first release with an API the chapters call: :data:`API_FLOORS` lists
  each such API with that release, and each API must still occur in the book or normlib
  (an entry whose API is gone is stale). The floors are read from the libraries' release
  history, not tested by installing them: the chapters' checks ran with
  ``requirements-chapter.txt`` only, as the download page says.
- the glossary (``book/glossary.md``) names the chapters' technical terms and the book's
  own vocabulary.
- the execution report's table (rendered) has a row for every executed page of the
  table of contents, evidence pages included.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HTML = Path(os.environ.get("NORMLIB_HTML", ROOT / "_build" / "html"))

# distribution -> [(the API as the sources spell it, the first release that has it)]
API_FLOORS = {
    "torch": [
        ("torch.nn.RMSNorm", "2.4"),
        ("flex_attention", "2.5"),
        ("allow_fp16_bf16_reduction_math_sdp", "2.6"),  # pytorch/pytorch#135964 (Sept 2024)
    ],
    "transformers": [
        ("Qwen3Config", "4.51"),
        ("Gemma3TextConfig", "4.50"),
        ("qwen3_next", "4.57"),
    ],
}

GLOSSARY_TERMS = [
    "accumulation", "head dimension", "unit roundoff", "weight decay", "entropy",
    "rotary position embedding", "extension", "verdict", "method", "evidence page",
]


def _version(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v)[:3])


def _floors() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    out = {}
    for req in [r for reqs in project["optional-dependencies"].values() for r in reqs]:
        m = re.match(r"^([A-Za-z0-9_.-]+)\s*>=\s*([\w.]+)", req)
        if m:
            out[m.group(1).lower()] = m.group(2)
    return out


def _sources() -> str:
    files = list((ROOT / "book").rglob("*.md")) + list((ROOT / "normlib").glob("*.py"))
    return "\n".join(f.read_text(encoding="utf-8") for f in files)


@pytest.mark.parametrize("dist", sorted(API_FLOORS))
def test_the_extras_floor_is_no_older_than_the_apis_the_chapters_call(dist):
    floor = _floors()[dist]
    need = max(API_FLOORS[dist], key=lambda a: _version(a[1]))
    assert _version(floor) >= _version(need[1]), (
        f"pyproject.toml promises {dist}>={floor}, but the chapters call {need[0]}, first in {dist} {need[1]}")


def test_every_listed_api_is_still_called():
    text = _sources()
    stale = [api for apis in API_FLOORS.values() for api, _ in apis if api not in text]
    assert not stale, f"no chapter or normlib module uses {stale} any more: drop them from API_FLOORS"


def test_the_glossary_names_the_chapters_terms():
    rows = [line.split("|")[1].strip().lower() for line in
            (ROOT / "book" / "glossary.md").read_text(encoding="utf-8").splitlines() if line.startswith("| ")]
    missing = [t for t in GLOSSARY_TERMS if not any(re.search(rf"\b{re.escape(t)}\b", r) for r in rows)]
    assert not missing, f"the glossary has no row for {missing}"


@pytest.mark.rendered
@pytest.mark.parametrize("edition", ["en", "zh"])
def test_the_execution_report_lists_every_executed_page(edition):
    page = (HTML if edition == "en" else HTML / "zh") / "book" / "execution-report.html"
    if not page.is_file():
        pytest.skip(f"{page} is not built")
    table = page.read_text(encoding="utf-8")
    pages = re.findall(r"(?:root|file):\s*(\S+)", (ROOT / "_toc.yml").read_text(encoding="utf-8"))
    executed = [p for p in pages if "kernelspec:" in (ROOT / f"{p}.md").read_text(encoding="utf-8")[:2000]]
    assert any(p.startswith("book/evidence/") for p in executed)
    missing = [p for p in executed if not re.search(rf">\s*{re.escape(p)}\s*<", table)]
    assert not missing, f"the execution report has no row for {missing}"
