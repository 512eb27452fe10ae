"""``dcx mcp``: dcx served to agent hosts over the Model Context Protocol (SPEC §14).

``tools`` declares one tool per command (pure: no SDK import); ``resources``
reads ``dcx://`` URIs; ``server`` binds both to the MCP Python SDK, which only
``dcx mcp`` imports.
"""
