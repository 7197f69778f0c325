"""``generate``: write a synthetic corpus (by default, regenerate the checked-in one)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import click

from ._atomic import atomic_write_jsonl, atomic_write_text
from .synthetic import DEFAULT_CORPUS_PATH, DEFAULT_SEED, FAMILIES, generate_corpus
from .synthetic._summary import render_family_docs, replace_generated_block

__all__ = ["DEFAULT_DOCS_PATH", "generate"]

#: The documentation page whose generated block ``--docs`` refreshes.
DEFAULT_DOCS_PATH = DEFAULT_CORPUS_PATH.parents[2] / "docs" / "synthetic.md"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _read_cases(path: Path) -> list[dict[str, object]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@click.command("generate")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Output .jsonl (or .jsonl.gz) file. Default: corpora/synthetic/default.jsonl; required "
    "as soon as --seed, --family or --cases-per-family changes the corpus.",
)
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    default=DEFAULT_SEED,
    show_default=True,
    help="Corpus seed.",
)
@click.option(
    "--family",
    "families",
    multiple=True,
    type=click.Choice(list(FAMILIES)),
    help="Generate only this family (repeatable). Default: all families.",
)
@click.option(
    "--cases-per-family",
    type=click.IntRange(min=1),
    default=None,
    help="Cases per family. Default: the per-family counts of the default corpus.",
)
@click.option(
    "--check",
    is_flag=True,
    help="Do not write: regenerate in memory and fail unless the default corpus is byte-identical.",
)
@click.option(
    "--docs",
    "write_docs",
    is_flag=True,
    help="Also refresh the generated counts and family sections of docs/synthetic.md.",
)
def generate(
    out: Path | None,
    seed: int,
    families: tuple[str, ...],
    cases_per_family: int | None,
    check: bool,
    write_docs: bool,
) -> None:
    """Generate a seeded synthetic corpus; with no options, regenerate the default one.

    The output is deterministic: the same options always give the same bytes.
    """
    custom = seed != DEFAULT_SEED or bool(families) or cases_per_family is not None
    if custom and out is None:
        raise click.UsageError(
            "--out is required with --seed, --family or --cases-per-family "
            "(the default path holds the checked-in default corpus)"
        )
    if custom and (check or write_docs):
        raise click.UsageError("--check and --docs apply to the default corpus only")
    if write_docs and out is not None and out.resolve() != DEFAULT_CORPUS_PATH:
        raise click.UsageError("--docs describes corpora/synthetic/default.jsonl; leave out --out")
    if check:
        target = out or DEFAULT_CORPUS_PATH
        if target.name.endswith(".gz"):
            raise click.UsageError("--check compares a plain .jsonl file")
        if not target.exists():
            raise click.ClickException(f"{target}: missing; run `generate` to create it")
        lines = b"".join(
            json.dumps(c, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
            for c in generate_corpus()
        )
        expected = hashlib.sha256(lines).hexdigest()
        actual = _sha256(target)
        if expected != actual:
            raise click.ClickException(
                f"{target}: out of date (sha256 {actual}, generators give {expected})"
            )
        click.echo(f"{target}: up to date (sha256 {actual})")
        return
    path = out or DEFAULT_CORPUS_PATH
    count = atomic_write_jsonl(path, generate_corpus(families or None, cases_per_family, seed))
    digest = _sha256(path)
    click.echo(f"wrote {count} cases to {path} ({path.stat().st_size:,} bytes, sha256 {digest})")
    if write_docs:
        cases = _read_cases(path)
        block = render_family_docs(FAMILIES, cases, sha256=digest, size=path.stat().st_size)
        docs = DEFAULT_DOCS_PATH
        atomic_write_text(docs, replace_generated_block(docs.read_text(encoding="utf-8"), block))
        click.echo(f"refreshed the generated block of {docs}")


if __name__ == "__main__":  # pragma: no cover - convenience entry point
    generate()
