"""``python -m tests.compat.langchain_suite [WORKDIR] [-- PYTEST ARGS]``: run LangChain 1.5.2's
agent tests on graphagent and print what failed, sorted (see ``__init__``). Exits 1 when a
failure is neither private nor deliberate."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tarfile
from collections import Counter
from pathlib import Path

from tests.compat.langchain_suite.deliberate import DELIBERATE, elsewhere, row_of

LANGCHAIN = "langchain==1.5.2"
PLUGINS = ("syrupy", "pytest-mock")
IGNORED = ("test_response_format_integration.py",)  # replays OpenAI HTTP recordings (vcr)
PYTEST_INI = """[pytest]
addopts = --strict-markers -p no:cacheprovider -p syrupy -p pytest_mock
markers =
    vcr: recorded HTTP
    requires: requires a library
    scheduled: scheduled
    compile: compile
    benchmark: benchmark
asyncio_mode = auto
asyncio_default_fixture_loop_scope = function
filterwarnings =
    ignore::langchain_core._api.beta_decorator.LangChainBetaWarning
"""


def prepare(work: Path) -> Path:
    """LangChain's agent tests under ``work/suite``, with the shim's conftest and the plugins."""
    pip = [sys.executable, "-m", "pip", "-q", "--disable-pip-version-check"]
    if not any(work.glob("langchain-*.tar.gz")):
        subprocess.run(
            [*pip, "download", LANGCHAIN, "--no-deps", "--no-binary", ":all:", "-d", str(work)],
            check=True,
        )
    if not (work / "plugins").exists():
        subprocess.run(
            [*pip, "install", "--no-deps", "--target", str(work / "plugins"), *PLUGINS], check=True
        )
    suite = work / "suite"
    shutil.rmtree(suite, ignore_errors=True)
    (sdist,) = work.glob("langchain-*.tar.gz")
    with tarfile.open(sdist) as archive:
        members = [m for m in archive.getmembers() if "/tests/unit_tests/agents/" in m.name]
        archive.extractall(work / "sdist", members=members, filter="data")
    (source,) = (work / "sdist").glob("langchain-*/tests/unit_tests/agents")
    units = suite / "tests" / "unit_tests"
    shutil.copytree(source, units / "agents")
    for package in (suite / "tests", units):
        (package / "__init__.py").touch()
    shutil.copy(Path(__file__).with_name("shim_conftest.py"), units / "conftest.py")
    (suite / "pytest.ini").write_text(PYTEST_INI, encoding="utf-8")
    return suite


def run(suite: Path, work: Path, extra: list[str]) -> dict[str, dict[str, str]]:
    ignored = [f"--ignore=tests/unit_tests/agents/{name}" for name in IGNORED]
    command = [
        sys.executable,
        "-m",
        "pytest",
        "tests/unit_tests/agents",
        "-q",
        "--timeout",
        "120",
        *ignored,
        *extra,
    ]
    env = {"PYTHONPATH": f"{work / 'plugins'}:{suite}"}
    subprocess.run(command, cwd=suite, env={**_environ(), **env}, check=False)
    return json.loads((suite / "results.json").read_text(encoding="utf-8"))


def _environ() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "GRAPHAGENT_AS_LANGCHAIN"}


def report(results: dict[str, dict[str, str]]) -> int:
    failed = {k: v for k, v in results.items() if v["outcome"] == "failed"}
    private = [k for k, v in failed.items() if v["kind"] == "private"]
    deliberate = [k for k in failed if k not in private and row_of(k)]
    outside = [k for k in failed if k not in private and not row_of(k) and elsewhere(k)]
    real = [k for k in failed if k not in private and k not in deliberate and k not in outside]
    passed = sum(v["outcome"] == "passed" for v in results.values())
    print(
        f"\n{passed} passed, {len(private)} failed on LangChain-private names, "
        f"{len(deliberate)} deliberate differences, {len(outside)} for reasons outside "
        f"graphagent, {len(real)} real failures"
    )
    for kind, found, why in (("deliberate", deliberate, row_of), ("outside", outside, elsewhere)):
        for row, count in Counter(why(k) for k in found).items():
            print(f"  {kind} ({count}): {row}")
    unused = [name for name in DELIBERATE if not any(name in k for k in deliberate)]
    for name in unused:
        print(f"  listed but not failing: {name}")
    for name in real:
        print(f"  REAL: {name}")
    return 1 if real else 0


def main(argv: list[str]) -> int:
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    args = argv[: argv.index("--")] if "--" in argv else argv
    work = Path(args[0] if args else "build/langchain-suite").resolve()
    work.mkdir(parents=True, exist_ok=True)
    suite = prepare(work)
    return report(run(suite, work, extra))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
