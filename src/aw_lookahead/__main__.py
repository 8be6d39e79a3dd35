"""``python -m aw_lookahead`` runs the CLI."""

from aw_lookahead.cli import console_main

console_main()
