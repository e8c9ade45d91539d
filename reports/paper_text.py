"""Text for paper exports: LaTeX and Markdown escaping, English labels and
numbers as papers print them (no locale: exported files are English).
"""

from __future__ import annotations

from collections.abc import Iterable
from contextvars import ContextVar

from metrics import registry, stats
from metrics.suite import Metric

# With CJKutf8 (a .tex export asked with ``?cjk=cjkutf8``), runs of Chinese
# and Korean characters are typeset in CJK environments (fonts gbsn and mj)
# instead of being written as code points.
CJK_FONTS: ContextVar[bool] = ContextVar("cjk_fonts", default=False)

# Characters LaTeX treats specially, and < > | which OT1 typesets wrongly.
LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}
# Symbols of the captions and headers, as plain LaTeX.
LATEX_SYMBOLS = {
    "Δ": r"$\Delta$",
    "\u2212": r"$-$",  # the minus sign of a negative figure (formatting.MINUS)
    "↑": r"$\uparrow$",
    "↓": r"$\downarrow$",
    "–": "--",
    "—": "---",
    "²": r"\textsuperscript{2}",
    "∕": "/",  # a "/" in a run's name (run/method columns keep it apart)
    # the judge report card's criteria and rules (reports/paper_card.py)
    "≥": r"$\geq$",
    "≤": r"$\leq$",
    "ρ": r"$\rho$",
    "κ": r"$\kappa$",
    "α": r"$\alpha$",
    "τ": r"$\tau$",
}
# graphicx: a tabular at its width, or scaled down to the line when wider
FIT_WIDTH = r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{%"
OT1_MISSING = frozenset("«»ÐÞðþ")  # Latin-1, but not in pdflatex's default fonts
MARKDOWN_SPECIALS = frozenset("\\`*_[]<>|~&")


def latex_escape(text: str) -> str:
    r"""Text as LaTeX that typesets it literally with only booktabs loaded.

    A run of characters the default fonts cannot typeset becomes one
    ``\texttt{[U+XXXX U+YYYY]}``, so a reader can still tell names apart.

    >>> print(latex_escape(r"a\b & 100% $5 #1 x_y {z} ~^ <|>"))
    a\textbackslash{}b \& 100\% \$5 \#1 x\_y \{z\} \textasciitilde{}\textasciicircum{} \textless{}\textbar{}\textgreater{}
    >>> print(latex_escape("Café 中文 «x» Δ--"))
    Café \texttt{[U+4E2D U+6587]} \texttt{[U+00AB]}x\texttt{[U+00BB]} $\Delta$-{}-
    >>> print(latex_escape("\u22120.42 vs 0.1"))
    $-$0.42 vs 0.1
    >>> print(latex_escape("two\nlines\x07"))
    two lines\texttt{[U+0007]}
    >>> token = CJK_FONTS.set(True)
    >>> print(latex_escape("판정 v2 中文«x»"))
    \begin{CJK}{UTF8}{mj}판정\end{CJK} v2 \begin{CJK}{UTF8}{gbsn}中文\end{CJK}\texttt{[U+00AB]}x\texttt{[U+00BB]}
    >>> CJK_FONTS.reset(token)
    """
    out: list[str] = []
    codes: list[str] = []  # the current run of characters written as code points
    cjk: list[str] = []  # the current run of CJK characters (with CJKutf8)
    family = None
    for index, char in enumerate(text):
        own = cjk_family(char) if CJK_FONTS.get() else None
        if cjk and own != family:
            out.append(_cjk_text(family, cjk))
            cjk = []
        if own is not None:
            if codes:
                out.append(_code_points(codes))
                codes = []
            family = own
            cjk.append(char)
            continue
        escaped = _latex_char(char, text[index + 1 : index + 2])
        if escaped is None:
            codes.append(f"U+{ord(char):04X}")
            continue
        if codes:
            out.append(_code_points(codes))
            codes = []
        out.append(escaped)
    if cjk:
        out.append(_cjk_text(family, cjk))
    if codes:
        out.append(_code_points(codes))
    return "".join(out)


def cjk_family(char: str) -> str | None:
    """The CJKutf8 font family for a Korean (mj) or Chinese (gbsn)
    character; None for any other character (Japanese kana included: no
    font for them is installed with the packages the README names).

    >>> cjk_family("한"), cjk_family("中"), cjk_family("。"), cjk_family("a")
    ('mj', 'gbsn', 'gbsn', None)
    """
    code = ord(char)
    if 0xAC00 <= code <= 0xD7A3 or 0x1100 <= code <= 0x11FF or 0x3130 <= code <= 0x318F:
        return "mj"
    if (
        0x4E00 <= code <= 0x9FFF
        or 0x3400 <= code <= 0x4DBF
        or 0x3000 <= code <= 0x303F
        or 0xFF01 <= code <= 0xFF5E
    ):
        return "gbsn"
    return None


def has_cjk(texts: Iterable[object]) -> bool:
    """Whether any text holds characters a CJKutf8 export would typeset."""
    return any(cjk_family(char) for text in texts for char in str(text))


def _cjk_text(family: str | None, chars: list[str]) -> str:
    return rf"\begin{{CJK}}{{UTF8}}{{{family}}}{''.join(chars)}\end{{CJK}}"


def _latex_char(char: str, following: str) -> str | None:
    """One character as LaTeX; None when the default fonts lack it."""
    if char in LATEX_SPECIALS:
        return LATEX_SPECIALS[char]
    if char in LATEX_SYMBOLS:
        return LATEX_SYMBOLS[char]
    if char in "\t\n\r":
        return " "
    if char == "-" and following == "-":
        return "-{}"  # no en/em dash ligature inside a name
    return char if _typesets(char) else None


def _code_points(codes: list[str]) -> str:
    return rf"\texttt{{[{' '.join(codes)}]}}"


def _typesets(char: str) -> bool:
    code = ord(char)
    return (0x20 <= code < 0x7F or 0xA0 <= code <= 0xFF) and char not in OT1_MISSING


def latex_number(text: str) -> str:
    """A formatted number with real minus signs; the dash of a missing value.

    >>> latex_number("-0.50"), latex_number("[-0.10, 0.20]"), latex_number("—")
    ('$-$0.50', '[$-$0.10, 0.20]', '---')
    """
    return "---" if text == "—" else text.replace("-", "$-$")


def markdown_escape(text: str) -> str:
    r"""Text for a GitHub-flavoured Markdown table cell or paragraph.

    >>> print(markdown_escape("a|b *c* <d> [e](f) x_y 中文\nz"))
    a\|b \*c\* \<d\> \[e\](f) x\_y 中文 z
    """
    out = []
    for char in text:
        if char in MARKDOWN_SPECIALS:
            out.append("\\" + char)
        elif char in "\t\n\r":
            out.append(" ")
        elif ord(char) < 0x20 or 0x7F <= ord(char) < 0xA0:
            out.append(f"U+{ord(char):04X}")
        else:
            out.append(char)
    return "".join(out)


def english_label(metric_id: str) -> str:
    """A metric's English label; a keyed id keeps its key.

    >>> english_label("quality_avg"), english_label("slot_f1@interests")
    ('Overall quality', 'Slot F1 · interests')
    """
    metric = registry.spec(metric_id)
    if metric is None:
        return metric_id
    key = metric_id.partition("@")[2]
    return f"{metric.label.msgid} · {key}" if key else metric.label.msgid


def number(value: float | None, signed: bool = False) -> str:
    """Two decimals, never "-0.00"; None is a dash.

    >>> number(0.6379), number(-0.0001), number(0.16, signed=True), number(None)
    ('0.64', '0.00', '+0.16', '—')
    """
    if value is None:
        return "—"
    shown = f"{value:+.2f}" if signed else f"{value:.2f}"
    return shown if float(shown) != 0 else "0.00"


def direction(metric: Metric) -> str:
    """↑ or ↓ for a ranked metric, '' for an unranked one.

    >>> direction(registry.spec("ertd_avg")), direction(registry.spec("al_r2"))
    ('↓', '')
    """
    if not metric.ranked:
        return ""
    return "↑" if metric.higher_is_better else "↓"


def heading(metric: Metric) -> str:
    """Column heading: English label and direction.

    >>> heading(registry.spec("quality_avg"))
    'Overall quality ↑'
    """
    arrow = direction(metric)
    return f"{metric.label.msgid} {arrow}" if arrow else metric.label.msgid


def span(values: list[int]) -> str:
    """``9`` or ``7–9``.

    >>> span([9, 9]), span([9, 7, 8])
    ('9', '7–9')
    """
    low, high = min(values), max(values)
    return str(low) if low == high else f"{low}–{high}"


def bootstrap_text(paired: list[int]) -> str:
    """How the paired intervals were drawn, as the comparisons' ``n`` say:
    the exact bootstrap distribution below ``EXACT_BOOTSTRAP_BELOW`` sessions,
    seeded resamples from there on.

    >>> bootstrap_text([9, 9])
    'the exact bootstrap distribution: every resample of the 9 or fewer paired sessions weighted by its probability; an interval of width 0 is not reported'
    >>> bootstrap_text([30])[:40]
    '2,000 resamples, seed 20240521; an inter'
    """
    below = stats.EXACT_BOOTSTRAP_BELOW
    exact = [n for n in paired if n < below]
    drawn = f"{stats.BOOTSTRAP_RESAMPLES:,} resamples, seed {stats.BOOTSTRAP_SEED}"
    if not exact:
        found = drawn
    elif len(exact) == len(paired):
        found = (
            "the exact bootstrap distribution: every resample of the "
            f"{max(exact)} or fewer paired sessions weighted by its probability"
        )
    else:
        found = (
            f"the exact bootstrap distribution below {below} paired sessions, "
            f"else {drawn}"
        )
    return found + "; an interval of width 0 is not reported"
