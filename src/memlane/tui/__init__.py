"""The terminal browser (`memlane browse`, the optional extra `memlane[tui]`)."""
