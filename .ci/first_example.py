"""Print the first ```python block of a Markdown file (the README's example), to run elsewhere."""

import re
import sys
from pathlib import Path

text = Path(sys.argv[1]).read_text(encoding="utf-8")
block = re.search(r"^```python\n(.*?)^```", text, re.S | re.M)
if block is None:
    sys.exit(f"{sys.argv[1]} has no ```python block")
print(block.group(1), end="")
