"""What fills the memory store by itself, without a model call: session capture (one
`session_summary` memory per Claude Code session, built from its transcript, kept up to
date by the Stop and SessionEnd hooks in the background and by `memindex import
transcripts`) and save prompts at the right moment (triage.py).

    prompts   the user's own words in a user entry: every wrapper Claude Code adds removed
    parse     a transcript (JSONL) -> what the session did, its noise left out
    summary   what the session did -> one bounded session_summary memory (at most 8 KB)
    store     where captured summaries live, written through the write path (save/update)
    schedule  the hooks' side: hand the work to one detached process per session, at once
    job       that process: coalesce the session's Stop events, then summarise and write
    importer  `memindex import transcripts`: a folder of transcripts through the same summariser
    ids       a session's summary id, which the prompt hook's "where did we leave off?" leaves out
    triage    the Stop hook's save prompts (with turn.py and asked.py)
"""
