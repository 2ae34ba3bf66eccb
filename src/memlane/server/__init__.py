"""The MCP server: memlane's tools for agents over stdio and streamable HTTP."""
