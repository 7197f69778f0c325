"""Render report blocks as Markdown (``report.md``, GitHub flavour)."""

from __future__ import annotations

import html
from collections.abc import Sequence

from ._doc import Block, Code, Details, FigureBlock, Gallery, Heading, Para, Table
from ._gallery import _md

__all__ = ["render_markdown"]


def _cell(text: str) -> str:
    return _md(text).replace("\n", " ")


def _table(block: Table) -> str:
    lines: list[str] = []
    if block.caption:
        lines += [f"*{_md(block.caption)}*", ""]
    align = block.align or "l" * len(block.columns)
    lines.append("| " + " | ".join(_cell(c) for c in block.columns) + " |")
    lines.append(
        "|"
        + "|".join(
            "---:" if i < len(align) and align[i] == "r" else "---"
            for i in range(len(block.columns))
        )
        + "|"
    )
    for row in block.rows:
        lines.append("| " + " | ".join(_cell(c) for c in row) + " |")
    return "\n".join(lines)


def _fence(text: str) -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return ticks


def _block(block: Block) -> str:
    if isinstance(block, Heading):
        anchor = f'<a id="{block.anchor}"></a>\n\n' if block.anchor else ""
        return f"{anchor}{'#' * block.level} {_md(block.text)}"
    if isinstance(block, Para):
        prefix = {"warning": "> **Warning:** ", "note": "> "}.get(block.style, "")
        return prefix + _md(block.text)
    if isinstance(block, Table):
        return _table(block)
    if isinstance(block, FigureBlock):
        return (
            f"![{_md(block.caption)}](figures/{block.stem}.png)\n\n"
            f"*{_md(block.caption)}* ([SVG](figures/{block.stem}.svg))"
        )
    if isinstance(block, Code):
        fence = _fence(block.text)
        return f"{fence}{block.language}\n{block.text}\n{fence}"
    if isinstance(block, Gallery):
        inner = "\n\n---\n\n".join(c.markdown() for c in block.cases) or f"*{_md(block.empty)}*"
        return f"#### {_md(block.title)}\n\n{inner}"
    if isinstance(block, Details):
        inner = "\n\n".join(_block(b) for b in block.blocks)
        return f"<details><summary>{html.escape(block.summary)}</summary>\n\n{inner}\n\n</details>"
    raise TypeError(f"unknown block {type(block).__name__}")


def render_markdown(title: str, blocks: Sequence[Block]) -> str:
    """The whole ``report.md``."""
    body = "\n\n".join(_block(b) for b in blocks)
    return f"# {_md(title)}\n\n{body}\n"
