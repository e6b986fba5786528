"""A runbook, a docs page, a CLAUDE.md / AGENTS.md or an auto memory note as a document.

The title is the page's own: its first `# heading`, else the front matter's `title` as
written (an alert name such as `KubeQuotaExceeded` stays one word), else the file's name;
the front matter's `description` and `summary` join the head of the page, its `tags` and
`keywords` its tags.
"""

from __future__ import annotations

from .documents import Document, NotIndexed, Unit, doc_id, normalize, units

CATEGORY_OF_KIND = {"runbook": "runbook", "docs": "runbook", "claude-md": "preference", "notes": "preference"}


def document(rel: str, kind: str, parsed) -> Document:  # type: ignore[no-untyped-def]
    rel = normalize(rel)
    meta = parsed.meta
    title = parsed.title
    if not title:
        stem = rel.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        if stem.lower() in ("index", "readme", "_index") and "/" in rel:
            stem = rel.rsplit("/", 2)[-2]
        title = stem
    text_words = sum(len(s.text.split()) for s in parsed.sections)
    if text_words < 3:
        raise NotIndexed("has no text to index")
    tags: list[str] = []
    for key in ("tags", "keywords"):
        value = meta.get(key)
        if isinstance(value, list):
            tags += [str(t).lower() for t in value]
        elif isinstance(value, str):
            tags += [t.strip().lower() for t in value.split(",") if t.strip()]
    doc = Document(path=rel, kind=kind, id=doc_id(rel), category=CATEGORY_OF_KIND.get(kind, "runbook"), title=title,
                   tags=list(dict.fromkeys(tags))[:12])
    for key in ("date", "updated", "lastmod", "last_reviewed_on", "last_reviewed"):
        if isinstance(meta.get(key), str) and len(meta[key]) >= 10 and meta[key][4] == "-":
            doc.updated_at = doc.created_at = meta[key][:10] + "T00:00:00Z"
            break
    doc.units = units(parsed, parsed.title)
    extra = [str(meta[k]) for k in ("description", "summary") if isinstance(meta.get(k), str)]
    if extra and doc.units and doc.units[0].anchor == "":
        doc.units[0].text = "\n".join([*extra, doc.units[0].text]).strip()
    elif extra:
        doc.units.insert(0, Unit("", "", "\n".join(extra)))
    return doc
