"""`python -m queuetop` is the `queuetop` command."""

from queuetop.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
