"""`python3 -I -m memindex.hook EVENT`: the hooks' documented command (docs/hooks in README)."""

from . import finish, main

finish(main())
