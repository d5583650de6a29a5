"""The test server over streamable HTTP: ``python tests/mcp/http_server.py FD [LOG]``.

It serves on the listening socket ``FD``, which the test bound on 127.0.0.1 (port 0, so the
port is free) and handed down, and prints ``ready`` once it accepts requests. ``LOG``, if given,
is the file where the server records what ran (``servers.Counts``).
"""

import socket
import sys
from pathlib import Path

import uvicorn

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.mcp.servers import Counts, process_server


class _Server(uvicorn.Server):
    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        print("ready", flush=True)


if __name__ == "__main__":
    fd = int(sys.argv[1])
    log = Path(sys.argv[2]) if len(sys.argv) > 2 else None
    app = process_server(Counts(log)).http_app(path="/mcp")
    config = uvicorn.Config(app, fd=fd, log_level="warning", lifespan="on")
    _Server(config).run()
