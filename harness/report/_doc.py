"""The report as a list of blocks, rendered the same way to HTML and to Markdown."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._gallery import CaseContext

__all__ = [
    "Block",
    "Code",
    "Details",
    "FigureBlock",
    "Gallery",
    "Heading",
    "Para",
    "Table",
    "slug",
]


def slug(text: str) -> str:
    """A file- and anchor-safe name: lower case, ``[a-z0-9._-]`` only."""
    value = re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-.")
    return value or "x"


@dataclass
class Heading:
    level: int
    text: str
    anchor: str = ""


@dataclass
class Para:
    """Plain text (escaped by the renderers); ``style`` ``warning`` or ``note`` sets it apart."""

    text: str
    style: str = ""


@dataclass
class Table:
    """A table of strings. ``align`` per column: ``l`` or ``r``."""

    columns: list[str]
    rows: list[list[str]]
    caption: str = ""
    align: str = ""


@dataclass
class FigureBlock:
    """A figure saved as ``figures/<stem>.png`` and ``.svg``."""

    stem: str
    caption: str


@dataclass
class Code:
    text: str
    language: str = ""


@dataclass
class Gallery:
    title: str
    cases: list[CaseContext]
    empty: str = "no case"


@dataclass
class Details:
    """Collapsed in HTML (``<details>``); also ``<details>`` in Markdown (GitHub renders it)."""

    summary: str
    blocks: list[Block] = field(default_factory=list)


Block = Heading | Para | Table | FigureBlock | Code | Gallery | Details
