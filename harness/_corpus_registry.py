"""Named corpora: the corpus files under the repository's ``corpora/`` folder."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ._corpus_reader import CORPUS_SUFFIXES
from ._errors import CorpusError, CorpusNotFoundError

__all__ = [
    "CORPORA_DIR_ENV",
    "NamedCorpus",
    "corpora_dir",
    "corpus_name_of",
    "list_corpora",
    "resolve_corpus",
]

CORPORA_DIR_ENV = "LOOPGUARD_CORPORA_DIR"

# Top-level folders of corpora/ that hold no labelled corpus: the conformance suite
# of the detector port, and the raw public traces that importers turn into corpora.
_EXCLUDED_TOP = frozenset({"conformance", "raw"})


@dataclass(frozen=True, slots=True)
class NamedCorpus:
    """A corpus file of the registry: ``name`` is its path under corpora/ minus the suffix."""

    name: str
    path: Path


def corpora_dir() -> Path:
    """Return the folder of named corpora.

    It is ``$LOOPGUARD_CORPORA_DIR`` when that is set and not empty, else the
    ``corpora/`` folder of the repository (beside the ``harness`` package).

    Raises
    ------
    CorpusError
        ``LOOPGUARD_CORPORA_DIR`` is set to something that is not a directory.
    """
    override = os.environ.get(CORPORA_DIR_ENV, "")
    if override:
        folder = Path(override)
        if not folder.is_dir():
            raise CorpusError(f"{CORPORA_DIR_ENV}={override!r} is not a directory")
        return folder
    return Path(__file__).resolve().parent.parent / "corpora"


def corpus_name_of(relative: Path) -> str:
    """The corpus name of a path relative to the corpora folder: the path minus its suffix."""
    text = relative.as_posix()
    for suffix in sorted(CORPUS_SUFFIXES, key=len, reverse=True):
        if text.endswith(suffix):
            return text[: -len(suffix)]
    return text


def list_corpora() -> list[NamedCorpus]:
    """List the named corpora, sorted by name (then path).

    Every ``*.jsonl`` and ``*.jsonl.gz`` file under :func:`corpora_dir` is one,
    except under ``conformance/`` and ``raw/`` and under hidden (dot) folders.
    A missing corpora folder gives an empty list.

    Examples
    --------
    >>> [c.name for c in list_corpora()]  # doctest: +SKIP
    ['real/tau-bench-airline', 'synthetic/default']
    """
    root = corpora_dir()
    if not root.is_dir():
        return []
    found: list[NamedCorpus] = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        # Pruning in place stops os.walk from descending into excluded folders.
        dirnames[:] = sorted(
            d
            for d in dirnames
            if not d.startswith(".") and not (here == root and d in _EXCLUDED_TOP)
        )
        for filename in filenames:
            if filename.startswith(".") or not filename.endswith(CORPUS_SUFFIXES):
                continue
            path = here / filename
            found.append(NamedCorpus(corpus_name_of(path.relative_to(root)), path))
    found.sort(key=lambda c: (c.name, c.path.name))
    return found


def resolve_corpus(name_or_path: str | os.PathLike[str]) -> Path:
    """Turn a corpus name (``synthetic/default``) or a file path into a file path.

    An existing file wins over a name; a name must designate exactly one file.

    Raises
    ------
    CorpusNotFoundError
        Neither an existing file nor a known name; the message lists the known names.
    CorpusError
        A name matches both a ``.jsonl`` and a ``.jsonl.gz`` file.

    Examples
    --------
    >>> resolve_corpus("synthetic/default")  # doctest: +SKIP
    PosixPath('/repo/corpora/synthetic/default.jsonl.gz')
    """
    if not isinstance(name_or_path, str | os.PathLike):
        raise TypeError(f"name_or_path must be a str or a path, got {type(name_or_path).__name__}")
    text = os.fspath(name_or_path)
    if text == "":
        raise CorpusNotFoundError("name_or_path must not be empty")
    path = Path(text)
    if path.is_file():
        return path
    if path.is_dir():
        raise CorpusError(f"{text}: is a directory; name one corpus file or corpus name")
    root = corpora_dir()
    corpora = list_corpora()
    # A name may also carry its suffix, to pick one of x.jsonl and x.jsonl.gz.
    matches = [c.path for c in corpora if text in (c.name, c.path.relative_to(root).as_posix())]
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        listed = ", ".join(str(p) for p in matches)
        raise CorpusError(f"corpus name {text!r} is ambiguous: {listed}; pass the file path")
    names = ", ".join(c.name for c in corpora) or "(none)"
    raise CorpusNotFoundError(
        f"{text!r} is neither a corpus file nor a known corpus name; "
        f"known names (under {root}): {names}"
    )
