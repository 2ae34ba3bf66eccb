"""Agent hooks: host events in, host JSON out (Claude Code, Codex); passive injection and capture."""
