"""The table of contents marks placeholder chapters, and only those.

A chapter is *written* when ``book/<name>.md`` is a jupytext notebook; a placeholder is
a plain MyST page. A placeholder's ``_toc.yml`` entry carries a ``title:`` ending in
"(not written yet)", so that the sidebar never presents an unwritten chapter as a
chapter; the line is deleted when the chapter is written.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
MARK = "(not written yet)"


def _entries():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    for part in toc["parts"]:
        for entry in part["chapters"]:
            yield part.get("caption", ""), entry


def _is_written(path: Path) -> bool:
    text = path.read_text(encoding="utf-8")
    return text.startswith("---") and "jupytext:" in text[:2000]


def _chapter_entries():
    return [(cap, e) for cap, e in _entries() if cap != "Appendix"]


@pytest.mark.parametrize("entry", [e for _, e in _chapter_entries()], ids=lambda e: e["file"])
def test_placeholder_iff_marked_in_the_toc(entry):
    path = ROOT / f"{entry['file']}.md"
    marked = entry.get("title", "").endswith(MARK)
    if _is_written(path):
        assert not marked, f"{entry['file']} is written: delete its `title: ... {MARK}` line in _toc.yml"
    else:
        assert marked, f"{entry['file']} is a placeholder: give it `title: <its title> {MARK}` in _toc.yml"


def test_chapter_parts_are_numbered_and_the_appendix_is_not():
    """Results are numbered per chapter (Theorem 3.1, Figure 3.2): every part of chapters is numbered."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    for part in toc["parts"]:
        assert bool(part.get("numbered")) == (part["caption"] != "Appendix"), part["caption"]
