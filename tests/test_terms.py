"""One rendering per term in the Chinese edition (issue 28), checked over the catalogs.

Each term below has one Chinese rendering, recorded in the glossary (``book/glossary.md``);
a translated message whose English uses the term carries the rendering, or keeps the
English word itself (a name, a quoted code identifier). A few renderings that an earlier
translation used for the same idea are refused anywhere. Markup (roles, inline code, math)
is left out on both sides: a quotation of the article keeps the article's own words.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parent.parent
CATALOGS = sorted((ROOT / "locales" / "zh_CN" / "LC_MESSAGES").rglob("*.po"))

#: (English pattern, the one Chinese rendering); each rendering is in the glossary
TERMS = [
    (r"\bwindows?\b", "窗口"),  # the window a check's value must fall in
    (r"\bkernels?\b", "内核"),  # a floating-point routine (ATen, BLAS, attention)
    (r"\bmini-?batch(?:es)?\b", "小批量"),
    (r"\bseeds?\b", "种子"),
    (r"\blearning[- ]rates?\b", "学习率"),
    (r"\bJacobians?\b", "雅可比"),
    (r"\bstandard errors?\b", "标准误"),
    (r"\bLemma\b", "引理"),
    (r"\bre-centering invariance\b", "重中心化不变性"),
    (r"\bre-scaling invariance\b", "重缩放不变性"),
    (r"\bverdicts?\b", "判定"),
    (r"\bbl(?:ow|ew)s? up\b|\bblow-ups?\b", "发散"),  # the article: 第一步就发散
    (r"\bmachine-dependent\b", "与机器有关"),  # a timing or a value that moves with the CPU's kernels
    (r"\btokens?\b", "词元"),  # `token` in code is left out; an argument's name is code
    (r"\bleading[- ]order\b", "主导阶"),
    (r"\brotary\b", "RoPE"),  # the Chinese term once, where it is introduced
    (r"\bhops?\b", "一跳"),  # one block's backward step (a step is a training step: 一步)
    (r"\beager\b", "eager 模式"),  # PyTorch's op-by-op execution, Hugging Face's plain attention
    (r"(?<![\w-])batch(?:es)?\b", "批"),  # a batch of data (批大小, 同一批); mini-batch is 小批量
]
#: renderings refused anywhere (another word for an idea above, or a second label)
REFUSED = ["已重新推导", "结果不符", "在这里无法复现", "平移不变性", "算子",
           "与机器相关", "依赖机器", "随机器而变",  # machine-dependent: 与机器有关
           "依赖于机器", "令牌", "主阶", "首阶", "旋转位置嵌入", "单跳", "单步增益", "每一步 Post-Norm",
           "批次",  # batch: 批
           "nats"]  # the unit is written nat, as the glossary says

#: English words the Chinese prose does not keep bare (the escape of TERMS above lets a kept
#: English word pass): (pattern on the Chinese, rendering, catalogs exempt). The API
#: reference names the arguments of functions (``tokens``) without code marks.
BARE = [
    (r"(?<![\w-])tokens?(?![\w-])", "词元", {"book/api.po"}),
    (r"(?<![\w-])eager(?! 模式)", "eager 模式", set()),
]

_MARKUP = re.compile(r"\{[^}]*\}`[^`]*`|`[^`]*`|\$\$.*?\$\$|\$[^$]*\$|:[\w:]+:`[^`]*`", re.S)


def _messages():
    for po in CATALOGS:
        with po.open("rb") as f:
            for m in read_po(f):
                if m.id and m.string and not m.fuzzy and isinstance(m.id, str):
                    yield po.relative_to(ROOT / "locales").as_posix(), m.id, m.string


def violations(messages, terms=TERMS, refused=REFUSED):
    """(catalog, English, why) of every message that breaks a term's rendering."""
    out = []
    for where, en, zh in messages:
        plain_en, plain_zh = _MARKUP.sub(" ", en), _MARKUP.sub(" ", zh)
        for pattern, rendering in terms:
            m = re.search(pattern, plain_en, re.I)
            if m and rendering not in plain_zh and m.group(0).lower() not in plain_zh.lower():
                out.append((where, en[:70], f"{m.group(0)!r} without {rendering}"))
        out += [(where, en[:70], f"refused rendering {r}") for r in refused if r in plain_zh]
        if zh != en:  # a message kept whole in English (a glossary's English column) is not prose
            out += [(where, en[:70], f"bare {m.group(0)!r}, not {rendering}") for pattern, rendering, exempt
                    in BARE if where.split("/", 2)[-1] not in exempt for m in re.finditer(pattern, plain_zh)]
    return out


def test_each_term_has_one_rendering_in_every_catalog():
    bad = violations(_messages())
    assert not bad, f"{len(bad)} messages break the glossary's renderings, e.g. {bad[:6]}"


def test_the_renderings_are_the_glossarys():
    glossary = (ROOT / "book" / "glossary.md").read_text(encoding="utf-8")
    missing = [r for _, r in TERMS if r not in glossary]
    assert not missing, f"renderings the glossary does not record: {missing}"


@pytest.mark.parametrize("en, zh, bad", [
    ("the window of the check", "检验的区间", True),       # another word for window
    ("the window of the check", "检验的窗口", False),
    ("one CPU kernel", "一个 CPU 算子", True),             # refused, and 内核 missing
    ("the `kernel` argument", "参数 `kernel`", False),     # code is left out
    ("{article}`C1.2` uses mini-batch statistics", "{article}`C1.2` 使用小批量统计量", False),
    ("ten seeds", "十个 seeds", False),                    # the English word kept
    ("12 tokens", "12 个 token", True),                    # token is 词元 in prose
    ("the `tokens` argument", "参数 `tokens`", False),     # code is left out
    ("eager attention", "eager 注意力", True),             # eager only as eager 模式
    ("eager attention", "eager 模式的注意力", False),
    ("a machine-dependent count", "一个依赖机器的计数", True),
    ("the leading order", "主阶", True),
    ("on the same batch", "在同一批次上", True),         # batch is 批, not 批次
    ("on the same batch", "在同一批上", False),
    ("a mini-batch of 8", "8 个样本的小批量", False),      # mini-batch is its own term (小批量)
    ("entropy (nats)", "熵（nats）", True),               # the unit is nat
])
def test_the_rule_itself(en, zh, bad):
    """Mutants: markup not stripped (a code identifier counts); the kept-English escape
    missing; a refused rendering accepted."""
    assert bool(violations([("x.po", en, zh)])) is bad
