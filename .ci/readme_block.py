"""Print the code block of a Markdown file marked ``<!-- check-wheel: NAME -->`` (the README's
install lines), so that `make check-wheel` runs them as they are written."""

import re
import sys
from pathlib import Path

path, name = sys.argv[1], sys.argv[2]
text = Path(path).read_text(encoding="utf-8")
mark = re.escape(f"<!-- check-wheel: {name} -->")
block = re.search(rf"^{mark}\n```\w*\n(.*?)^```", text, re.S | re.M)
if block is None:
    sys.exit(f"{path} has no code block marked <!-- check-wheel: {name} -->")
print(block.group(1), end="")
