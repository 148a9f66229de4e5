import sys

from ztviewer.cli import main

sys.exit(main())
