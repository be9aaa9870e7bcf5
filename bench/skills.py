"""``python -m bench skills [--json] [--quick] [--reps N]``: the skill index and the scanner.

Figures (one run, on real skill folders in a temporary directory):

- ``index_build_ms``: a fresh ``SkillLibrary`` looking at 1,000 skills (each
  ``SKILL.md`` stat'ed, read, parsed with PyYAML, checked) and building the
  index text; ``index_warm_ms``: the same library looking again (what each
  turn's delta check costs: stats only, parses cached); baseline
  ``read_only_ms``: reading the same 1,000 files' bytes
  (``index_build_ratio`` = build / read).
- ``prompt_bytes_per_skill``: bytes of the index block per skill.
- ``scan_mb_per_s``: the threat scanner over 1 MB of skill-like Markdown
  with no findings (the common case: every rule runs to the end).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hermes.skills import SkillLibrary, index_of, index_text, scan_text

BODY = (
    "Use this when the build fails after a dependency bump.\n\n"
    "1. Run `make test` and read the first failure.\n"
    "2. Check the changelog of the package named in the traceback.\n"
    "3. Pin the last good version in pyproject.toml and open an issue.\n"
)


def _write(root: Path, count: int) -> None:
    for i in range(count):
        folder = root / f"skill-{i:04d}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: skill-{i:04d}\ndescription: Recover from failure kind {i} in the "
            f"build\nversion: '1'\nrequires: [terminal]\n---\n{BODY}",
            encoding="utf-8",
        )


def _ms(fn: Any, reps: int) -> float:
    runs = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        runs.append((time.perf_counter() - start) * 1000)
    return statistics.median(runs)


def measure(count: int, reps: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-skills-") as tmp:
        root = Path(tmp) / "skills"
        _write(root, count)
        files = sorted(root.glob("*/SKILL.md"))

        def read_only() -> None:
            for path in files:
                path.read_bytes()

        def build() -> None:
            seen = SkillLibrary(root, bundled_dir=None).look()
            assert len(seen.skills) == count, seen.problems[:3]
            index_text(index_of(seen.sorted()))

        warm = SkillLibrary(root, bundled_dir=None)
        warm.look()
        read_ms = _ms(read_only, reps)
        build_ms = _ms(build, reps)
        warm_ms = _ms(warm.look, reps)
        index = index_text(index_of(warm.look().sorted())) or ""
    text = (BODY * 8 + "Some <b>html</b> and `code` and ~/projects/app paths.\n") * 1
    sample = (text * (1_000_000 // len(text) + 1))[:1_000_000]
    assert not scan_text(sample).findings
    scan_ms = _ms(lambda: scan_text(sample), reps)
    return {
        "skills": count,
        "reps": reps,
        "index_build_ms": round(build_ms, 1),
        "index_warm_ms": round(warm_ms, 2),
        "read_only_ms": round(read_ms, 2),
        "index_build_ratio": round(build_ms / read_ms, 1) if read_ms else None,
        "prompt_bytes_per_skill": round(len(index.encode("utf-8")) / count, 1),
        "scan_mb_per_s": round(1000 / scan_ms, 1) if scan_ms else None,
    }


def render(figures: dict[str, Any]) -> str:
    width = max(len(k) for k in figures)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in figures.items())


def main(json_output: bool, quick: bool, reps: int) -> int:
    figures = measure(count=200 if quick else 1000, reps=max(1, reps))
    print(json.dumps(figures) if json_output else render(figures))
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.skills")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    sys.exit(main(args.json, args.quick, args.reps))
