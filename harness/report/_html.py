"""Render report blocks as one self-contained HTML page (``index.html``)."""

from __future__ import annotations

import html
from collections.abc import Sequence

from ._doc import Block, Code, Details, FigureBlock, Gallery, Heading, Para, Table

__all__ = ["render_html"]


def _text(value: str) -> str:
    """Escape element content (quotes need no escaping there, which keeps JSON readable)."""
    return html.escape(value, quote=False)


def _attr(value: str) -> str:
    return html.escape(value, quote=True)


_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: #222;
       line-height: 1.45; }
main { max-width: 1200px; margin: 0 auto; padding: 1rem 2rem 4rem; }
nav { background: #f4f6f8; border-bottom: 1px solid #ddd; padding: .5rem 2rem; }
nav a { margin-right: 1rem; }
h1 { font-size: 1.6rem; } h2 { border-bottom: 1px solid #ddd; padding-bottom: .2rem;
     margin-top: 2.5rem; } h3 { margin-top: 2rem; } h4 { margin-top: 1.4rem; }
table { border-collapse: collapse; font-size: .85rem; margin: .6rem 0 1rem; }
th, td { border: 1px solid #d8dde3; padding: .2rem .5rem; vertical-align: top; }
td.long { overflow-wrap: anywhere; min-width: 12rem; }
th { background: #f4f6f8; position: sticky; top: 0; }
td.r { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
caption { caption-side: top; text-align: left; font-weight: 600; padding: .3rem 0; }
figure { margin: 1rem 0 1.6rem; } figure img { max-width: 100%; height: auto;
         border: 1px solid #eee; }
figcaption { font-size: .85rem; color: #555; }
p.warning { background: #fff4d6; border-left: 4px solid #e0a800; padding: .4rem .7rem; }
p.note { color: #555; font-size: .9rem; }
pre { background: #f7f7f9; padding: .6rem; overflow-x: auto; font-size: .8rem; }
pre.context { white-space: pre-wrap; word-break: break-word; background: #fbfbfb;
              border: 1px solid #eee; }
mark { background: #ffe066; padding: 0 .1rem; }
span.fire { color: #c00; font-weight: bold; }
div.case { border-left: 4px solid #bbb; padding: .3rem .8rem; margin: .8rem 0; }
div.case.fp { border-color: #d62728; } div.case.fn { border-color: #ff7f0e; }
div.case.tp { border-color: #2ca02c; }
div.facts { font-size: .85rem; } div.reason { font-size: .8rem; color: #444; }
div.note { font-size: .8rem; color: #a15c00; }
details { margin: .6rem 0; } summary { cursor: pointer; color: #1f5fa8; }
"""


def _table(block: Table) -> str:
    esc = _text
    parts = ["<table>"]
    if block.caption:
        parts.append(f"<caption>{esc(block.caption)}</caption>")
    parts.append(
        "<thead><tr>" + "".join(f"<th>{esc(c)}</th>" for c in block.columns) + "</tr></thead>"
    )
    parts.append("<tbody>")
    align = block.align or "l" * len(block.columns)
    for row in block.rows:
        cells = []
        for i, cell in enumerate(row):
            right = i < len(align) and align[i] == "r"
            # A long unbroken value (sha256, path) may wrap anywhere; others keep their words.
            long = len(cell) > 30 and not any(c.isspace() for c in cell)
            cls = ' class="r"' if right else ' class="long"' if long else ""
            cells.append(f"<td{cls}>{esc(cell)}</td>")
        parts.append("<tr>" + "".join(cells) + "</tr>")
    parts.append("</tbody></table>")
    return "\n".join(parts)


def _block(block: Block) -> str:
    esc = _text
    if isinstance(block, Heading):
        anchor = f' id="{_attr(block.anchor)}"' if block.anchor else ""
        return f"<h{block.level}{anchor}>{esc(block.text)}</h{block.level}>"
    if isinstance(block, Para):
        cls = f' class="{_attr(block.style)}"' if block.style else ""
        return f"<p{cls}>{esc(block.text)}</p>"
    if isinstance(block, Table):
        return _table(block)
    if isinstance(block, FigureBlock):
        png, svg = f"figures/{block.stem}.png", f"figures/{block.stem}.svg"
        return (
            f'<figure><a href="{_attr(svg)}"><img src="{_attr(png)}" alt="{_attr(block.caption)}" '
            f'loading="lazy"></a><figcaption>{esc(block.caption)} '
            f'(<a href="{_attr(png)}">PNG</a>, <a href="{_attr(svg)}">SVG</a>)'
            "</figcaption></figure>"
        )
    if isinstance(block, Code):
        return f"<pre><code>{esc(block.text)}</code></pre>"
    if isinstance(block, Gallery):
        inner = (
            "\n".join(c.html() for c in block.cases) or f'<p class="note">{esc(block.empty)}</p>'
        )
        return f"<h4>{esc(block.title)}</h4>\n{inner}"
    if isinstance(block, Details):
        inner = "\n".join(_block(b) for b in block.blocks)
        return f"<details><summary>{esc(block.summary)}</summary>\n{inner}\n</details>"
    raise TypeError(f"unknown block {type(block).__name__}")


def render_html(title: str, blocks: Sequence[Block], nav: Sequence[tuple[str, str]] = ()) -> str:
    """The whole page: ``nav`` is ``(anchor, text)`` links at the top."""
    esc = _text
    links = "".join(f'<a href="#{_attr(a)}">{esc(t)}</a>' for a, t in nav)
    body = "\n".join(_block(b) for b in blocks)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        f"<nav>{links}</nav>\n<main>\n<h1>{esc(title)}</h1>\n{body}\n</main>\n</body>\n</html>\n"
    )
