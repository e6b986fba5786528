"""memindex: a persistent, incrementally synced full-text index of a project's memories."""

__version__ = "0.1.0"
