"""Entry point of the frozen app: the same as the ``ztviewer`` console script."""
import sys

from ztviewer.cli import main

if __name__ == "__main__":
    sys.exit(main())
