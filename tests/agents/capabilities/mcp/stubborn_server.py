"""A stdio "MCP server" that never answers and does not exit when its stdin closes.

    python stubborn_server.py PID_FILE [--ignore-term]

It writes its pid to PID_FILE, reads (and ignores) every request until its stdin closes, then
keeps running; with `--ignore-term` it ignores SIGTERM too, so only a SIGKILL ends it.
"""

import os
import signal
import sys
import time

if __name__ == "__main__":
    if "--ignore-term" in sys.argv:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with open(sys.argv[1] + ".part", "w") as out:
        out.write(str(os.getpid()))
    os.replace(sys.argv[1] + ".part", sys.argv[1])  # the test never reads half a pid
    sys.stdin.read()  # every request, until stdin closes
    while True:  # the closed stdin is not a reason to stop
        time.sleep(60)
