"""``python -m benchmarks [--quick] [--only NAME]``: run every benchmark, print the table, write JSON."""
import sys

from .runner import main

sys.exit(main())
