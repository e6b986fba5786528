"""What fills the memory store by itself: save prompts at the right moment (triage.py)."""
