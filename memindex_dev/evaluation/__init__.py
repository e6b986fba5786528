"""Converters and helpers that turn public data sets into memindex stores for evaluation."""
