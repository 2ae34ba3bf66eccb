"""Evaluation of retrieval quality through memlane's public API."""
