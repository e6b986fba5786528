"""The store as a person browses it: pages of memories under filters, one memory whole with
its history and links, what the assistant was shown in each session, the captured
sessions as a timeline, and the store's figures. Library first: the local web page
(memindex/ui) is a thin shell over these, as the CLI is over memindex.policy.recall.

Reading only, through the same readers as the CLI: the index through
`index.reader.open_fresh_reader` (provenance: only an index this user built; a sync first
when a file changed), memory files through `policy.recall.read_memory` (bounded, links out
of the root refused), documents through `store.documents.read_text` (inside the project),
the use log through memindex/usage.py, git through review/git.py's hardened calls.
Searching and explaining are `policy.recall.search_hits` and `policy.recall.explain`
themselves: the page gives the same answer as `memindex search` and `memindex explain`.

Modules: listing (filters, a page of rows, facets, provenance of every file), memory (one
memory or document section whole: history, links, review items, use), shown (the use
log's sessions and their prompts), sessions (the summaries' timeline), figures (the
store by month and by category, use per memory).
"""
