"""`python -m iclr_kg.cli`: the `iclr-kg` command."""

from iclr_kg.cli import main

if __name__ == "__main__":
    main()
