"""The `memindex` command line: a thin shell over the library that nothing else imports.

`main` parses the global options, imports only the module of the subcommand being run
(`COMMANDS` names it), and maps the library's exceptions to exit codes in one table.
"""

from .main import main, run

__all__ = ["main", "run"]
