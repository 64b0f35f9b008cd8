"""`python -m queuetop` is the `queuetop` command."""

from queuetop.cli import main

raise SystemExit(main())
