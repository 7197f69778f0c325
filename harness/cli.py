"""The ``harness`` command line: a thin layer over the importable functions of :mod:`harness`."""

from __future__ import annotations

import importlib

import click

from ._cli_corpora import corpora
from ._cli_import import import_command


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="loopguard")
def main() -> None:
    """Replay labelled corpora through loop detectors, score, tune and export them."""


main.add_command(corpora)
corpora.add_command(import_command)

# Commands whose modules land later are mounted when present, so a partial checkout still runs.
for module_name, command_name, group in (
    ("harness._cli_generate", "generate", corpora),
    ("harness._cli_eval", "eval_command", main),
    ("harness._cli_report", "report", main),
    ("harness._cli_sweep", "sweep_command", main),
    ("harness._cli_sweep", "dashboard_command", main),
    ("harness._cli_export", "export_command", main),
):
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        continue
    group.add_command(getattr(module, command_name))


if __name__ == "__main__":
    main()
