"""Session capture: one `session_summary` memory per Claude Code session, built from its
transcript without a model call, kept up to date by the Stop and SessionEnd hooks (in the
background) and by `memindex import transcripts`.

    parse     a transcript (JSONL) -> what the session did, its noise left out
    summary   what the session did -> one bounded session_summary memory (at most 8 KB)
    store     where captured summaries live, written through the write path (save/update)
    schedule  the hooks' side: hand the work to one detached process per session, at once
    job       that process: coalesce the session's Stop events, then summarise and write
    importer  `memindex import transcripts`: a folder of transcripts through the same summariser
    ids       a session's summary id, which the prompt hook's "where did we leave off?" leaves out
"""
