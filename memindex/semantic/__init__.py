"""The optional semantic channel: a sentence-embedding model, vectors stored beside the
FTS5 index, a resident worker that keeps the model warm, and fusion with BM25.

Off unless `semantic.enabled` is true in memory-config.json and `memindex[semantic]` is
installed; the prompt hook never imports anything here but `client` (standard library).
"""
