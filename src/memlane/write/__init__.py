"""The write path: validation, normalization and the policies applied before a write."""
