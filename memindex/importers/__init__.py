"""Import what a project already knows: ADRs, Claude Code's auto memory, CLAUDE.md /
AGENTS.md sections, loose Markdown notes. Adapters call these; nothing here prints.

    markdown       the small Markdown reader the importers share (front matter, sections)
    source         provenance: the `source` object, stable ids, reading a source file
    engine         planned memories -> the write path (save, update, retire, archive)
    adr            Markdown ADRs (MADR 2-4, Nygard, adr-tools) -> decisions
    notes          free-form notes -> a category and its content (the stated rule)
    claude_memory  ~/.claude/projects/<key>/memory -> memories
    claude_md      CLAUDE.md / AGENTS.md sections -> constraints and preferences
    loose          one Markdown note -> one memory (`memindex import markdown`)
    discover       what `memindex init` finds to offer
"""
