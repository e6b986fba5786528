"""The test suite's plugin (pyproject's `addopts`: `-p memindex_dev.pytest_plugin`): the
stand-in embedder `builtin:hashing` is allowed in the test run and in every hook, worker
and CLI process it starts."""

from memindex_dev.standin import enable

enable()
