"""`python tests/python/qfuzz ...` (or `python -m qfuzz` with tests/python on the path)."""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from qfuzz.cli import main
else:
    from .cli import main

sys.exit(main())
