"""``python -m ztviewer [COMMAND | FILE…]``: the CLI, which starts the GUI when no command is given."""
import sys

from ztviewer.cli import main

if __name__ == "__main__":
    sys.exit(main())
