"""The `agent-network` command line: run, serve, graph."""
