"""A network file that fails while being imported (for the CLI's error messages)."""

raise RuntimeError("this file is broken")
