"""Synthetic ICLR-like data at any scale: the command line of testbed/synth.py (tests use the
same generator).

    python bench/synth.py --papers 10000 --out /tmp/synth-data
    python bench/synth.py --openreview 10000 --out /tmp/venue.json
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from testbed.synth import main

if __name__ == "__main__":
    main()
