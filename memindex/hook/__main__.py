"""`python3 -I -m memindex.hook EVENT`: the hooks' documented command (docs/hooks in README)."""

import gc
import sys

gc.disable()  # a short-lived process (hooks/memindex_hook.py says why)

from . import main  # noqa: E402

sys.exit(main())
