"""`python -m network.cli`: the same as the `agent-network` command."""

from network.cli.main import main

raise SystemExit(main())
