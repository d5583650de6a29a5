"""The test server over stdio, run as a script: ``python tests/mcp/stdio_server.py [LOG]``.

``LOG``, if given, is the file where the server records what ran (``servers.Counts``).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.mcp.servers import Counts, process_server

if __name__ == "__main__":
    log = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    process_server(Counts(log)).run(show_banner=False, log_level="WARNING")
