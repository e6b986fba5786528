"""`python3 -I -m memindex.hook EVENT`: the hooks' documented command (docs/hooks in README)."""

import sys

from . import main

sys.exit(main())
