"""What a project already knows, indexed in place: ADR folders, runbook and docs folders,
CLAUDE.md / AGENTS.md, Claude Code's auto memory. Adapters call these; nothing here prints.

    register       register folders and files (documents.paths), sync, report every file,
                   archive the copies an earlier memindex made of them
    discover       what `memindex init` finds: ADR and runbook folders, instruction files
    claude_memory  the user's own setting for Claude Code's auto memory

Reading a document is the store's (memindex/store/interpret.py: ADRs, pages); indexing it
is sync's (memindex/index/docsync.py).
"""
