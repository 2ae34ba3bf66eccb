"""Host integration: merging memlane into agent hosts' settings (Claude Code, Codex) and out again."""
