"""`python -m memlane` runs the CLI."""

from memlane.cli.main import main

main()
