"""``python -m tracescore.cli`` runs the command line."""

from . import main

main()
