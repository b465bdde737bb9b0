"""Serve the codegen network (examples/codegen.py) to any AG-UI client over HTTP.

    python examples/agui_server.py                        # offline, scripted, port 8000
    python examples/agui_server.py --model openai/gpt-4o-mini --port 9000
    agent-network serve examples/codegen.py:network       # the same, from the command line

Then POST a RunAgentInput to http://127.0.0.1:8000/ (see docs/agui.md for a TypeScript client
with `@ag-ui/client`, and a curl line). The run streams back as Server-Sent Events: agent steps,
the planner's text, the coder's `write_files` calls, and the `files` state as it grows.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # `codegen` sits next to this file

from codegen import build_network

from network.agui import app


def create_app(model: str | None = None) -> Any:
    """The ASGI app: the codegen network on `model` (default: its offline script)."""
    return app(build_network(model))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a litellm model string; default: offline script")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)

    import structlog
    import uvicorn

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.INFO))
    print(f"AG-UI endpoint: http://{args.host}:{args.port}/  (POST a RunAgentInput)")
    uvicorn.run(create_app(args.model), host=args.host, port=args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
