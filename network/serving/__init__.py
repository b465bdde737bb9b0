"""The serving layer: what every protocol server of a network needs, written once.

The AG-UI server (`network.agui`) and the MCP server (`network.mcp`) sit on it, and an A2A
server can sit beside them. See docs/serving.md.
"""
