"""The API page's signatures read as the code's (``book/api.md``, both editions).

Every entry of the API reference (Sphinx autodoc) that shows a signature must show the
text of ``inspect.signature`` of the object it documents, type hints left out (the book
sets ``autodoc_typehints: none``): ``layer_norm(x, weight=None, bias=None, *, eps=1e-05)``,
not ``layer_norm(x, =weightNone, =biasNone, *, =eps1e-05)`` (what a translatable flag on
the signature's inline nodes made of it; ``_ext/i18n.py``); a module constant shows
``NAME = value``. The rendered test reads the built page (``pytest -m rendered``; the
HTML root is ``_build/html``, or ``NORMLIB_HTML`` for a partial build such as
``make pages CH=api``); the unit tests check the comparison itself on small inputs.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HTML = Path(os.environ.get("NORMLIB_HTML", ROOT / "_build" / "html"))
EDITIONS = {"en": HTML / "book" / "api.html", "zh": HTML / "zh" / "book" / "api.html"}

_KEYWORDS = re.compile(r"^(?:(?:class|exception|property|static|classmethod|async|abstractmethod|final)\s+)*")


def entries(html: str) -> list[tuple[str, str]]:
    """(documented object's full name, the text its entry shows) for every API entry."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    out = []
    for dt in soup.select("dt.sig.sig-object.py[id]"):
        for link in dt.select("a.headerlink"):
            link.decompose()
        out.append((dt["id"], re.sub(r"\s+", " ", dt.get_text()).strip()))
    return out


def resolve(fullname: str):
    """(the object named ``fullname``, the class it is defined in or None)."""
    parts = fullname.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        owner = None
        for name in parts[i:]:
            owner, obj = obj, getattr(obj, name)
        return obj, owner if inspect.isclass(owner) else None
    raise ImportError(fullname)


def expected_signature(obj, owner=None, name: str = "") -> str:
    """``inspect.signature`` of ``obj`` as autodoc shows it: no annotations, no ``self``."""
    sig = inspect.signature(obj)
    if owner is not None and not isinstance(inspect.getattr_static(owner, name), (staticmethod, classmethod)):
        sig = sig.replace(parameters=list(sig.parameters.values())[1:])
    params = [p.replace(annotation=inspect.Parameter.empty) for p in sig.parameters.values()]
    return str(sig.replace(parameters=params, return_annotation=inspect.Signature.empty))


def mismatch(fullname: str, shown: str) -> str | None:
    """Why the entry ``shown`` for ``fullname`` differs from the code (None: it agrees).

    Only entries with a signature (``name(...)``) or a value (``NAME = ...``) are
    compared; a property or a field shows its name alone.
    """
    rest = _KEYWORDS.sub("", shown)
    m = re.match(r"^([\w.]+)(.*)$", rest)
    if not m or not fullname.endswith(m.group(1)):
        return f"shows {shown!r}, not the name {fullname}"
    tail = m.group(2)
    if not tail:
        return None  # a property or a field: its name alone
    obj, owner = resolve(fullname)
    if tail.startswith("("):
        want = expected_signature(obj, owner, fullname.rsplit(".", 1)[-1])
        return None if tail == want else f"shows {tail!r}, inspect.signature gives {want!r}"
    from sphinx.util.inspect import object_description  # autodoc's repr: dict keys sorted, no addresses

    want = f" = {object_description(obj)}"
    return None if tail == want else f"shows {tail!r}, the value is {want!r}"


# ---- the comparison itself, on small inputs -------------------------------------------------------


def _dt(ident: str, inner: str) -> str:
    return f'<dl><dt class="sig sig-object py" id="{ident}">{inner}<a class="headerlink" href="#x">#</a></dt></dl>'


def test_a_signature_as_the_code_has_it_agrees():
    html = _dt("normlib.norms.layer_norm", '<span class="sig-prename">normlib.norms.</span><span class="sig-name">'
               'layer_norm</span>(<em>x</em>, <em>weight=None</em>, <em>bias=None</em>, <em>*</em>, <em>eps=1e-05</em>)')
    [(name, shown)] = entries(html)
    assert shown == "normlib.norms.layer_norm(x, weight=None, bias=None, *, eps=1e-05)"
    assert mismatch(name, shown) is None


def test_the_garbled_signature_is_caught():
    html = _dt("normlib.norms.layer_norm", "normlib.norms.layer_norm(x, =weightNone, =biasNone, *, =eps1e-05)")
    [(name, shown)] = entries(html)
    assert "inspect.signature gives '(x, weight=None, bias=None, *, eps=1e-05)'" in mismatch(name, shown)


def test_a_class_a_starred_argument_and_a_constant():
    assert mismatch("normlib.book.CheckTable", "class normlib.book.CheckTable(*results)") is None
    assert mismatch("normlib.book.CheckTable", "class normlib.book.CheckTable(results*)") is not None
    from normlib import invariance

    shown = f"normlib.invariance.TRANSFORMS = {invariance.TRANSFORMS!r}"  # a tuple: autodoc shows its repr
    assert mismatch("normlib.invariance.TRANSFORMS", shown) is None
    assert mismatch("normlib.invariance.TRANSFORMS", shown.replace(" = ", "=")) is not None


def test_a_property_shows_its_name_alone():
    assert mismatch("normlib.timing.Timing.median", "property median") is None


# ---- the built page -------------------------------------------------------------------------------


@pytest.mark.rendered
@pytest.mark.parametrize("edition", sorted(EDITIONS))
def test_every_api_signature_is_the_codes(edition):
    page = EDITIONS[edition]
    if not page.is_file():
        pytest.skip(f"{page} is not built")
    found = entries(page.read_text(encoding="utf-8"))
    assert len(found) > 100, f"only {len(found)} API entries on {page}"
    bad = [f"{name}: {why}" for name, shown in found if (why := mismatch(name, shown))]
    assert not bad, f"{len(bad)} of {len(found)} API entries differ from the code:\n" + "\n".join(bad[:20])
