"""memindex's development package: the evaluation (sets, metrics, store and vocabulary
generators), the old keyword matcher as its baseline, and the stand-in embedder of the tests.

It sits beside `memindex` in a checkout and its sdist, and a development install
(`pip install -e '.[dev]'`) makes it importable; the wheel leaves it out, and no runtime
module imports it but `memindex.semantic.model`, for the stand-in, when the environment
allows it (`memindex_dev.standin.enable`).
"""
