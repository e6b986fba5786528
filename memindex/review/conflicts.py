"""`duplicate` and `conflict` (placeholder until the detector lands)."""

from __future__ import annotations


def detect(ctx) -> list:
    return []
