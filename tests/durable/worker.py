"""A worker process: ``python -m tests.durable.worker '<Turn as JSON>'``.

It builds the shared agent from scratch (nothing survives from any other process but what the
checkpointer stored), does the turn and prints the summary of the thread as JSON on stdout.
"""

from __future__ import annotations

import json
import sys

from tests.durable.agent import Turn, take_turn


def main(argv: list[str]) -> int:
    (turn_json,) = argv
    print(json.dumps(take_turn(Turn.from_json(turn_json))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
