"""The ``tracescore`` command: serve, sql, export, trace, scorers, backfill, demo.

Each subcommand imports what it needs in its own body, so ``tracescore --help`` stays fast.
User errors are ``click.ClickException`` sentences, never tracebacks.
"""

from __future__ import annotations

import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="tracescore")
def main() -> None:
    """tracescore: store agent traces from OpenTelemetry, score them, query scores with SQL."""


if __name__ == "__main__":  # pragma: no cover
    main()
