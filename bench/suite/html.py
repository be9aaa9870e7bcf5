"""The self-contained HTML report: per scenario its plots (inline SVG), figures and invariants."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

from . import svg

_STYLE = """
body { font-family: sans-serif; margin: 2em; max-width: 1200px; color: #222; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 2em; }
table { border-collapse: collapse; margin: .5em 0; }
td, th { border: 1px solid #ddd; padding: .25em .6em; text-align: left; font-size: 13px; }
.ok { color: #2a7d2a; font-weight: bold; } .bad { color: #c0392b; font-weight: bold; }
.plots svg { margin: .3em; border: 1px solid #eee; }
pre { background: #f6f6f6; padding: 1em; overflow: auto; font-size: 12px; }
"""


def _plots(name: str, result: dict[str, Any]) -> list[str]:
    samples = result.get("samples") or {}
    if name == "sessions":
        turns = samples.get("turn_ms", [])
        return [
            svg.histogram(turns, "turn latency", "ms"),
            svg.cdf({"turns": turns}, "turn latency CDF", "ms"),
        ]
    if name == "cancel":
        return [
            svg.cdf(
                {s: v for s, v in samples.get(f"{m}_ms", {}).items() if v},
                f"cancel {m.replace('_', ' ')}",
                "ms (log scale)",
                log_x=True,
            )
            for m in ("to_event", "to_stream_closed", "to_procs_gone")
        ]
    if name == "steer":
        values = samples.get("steer_to_delivered_ms", [])
        return [
            svg.histogram(values, "steer to delivered", "ms"),
            svg.cdf({"steers": values}, "steer to delivered CDF", "ms"),
        ]
    if name == "soak":
        series = samples.get("series", [])
        return [
            svg.lines(
                {metric: [(s["loops"], s[metric]) for s in series]},
                f"{metric} over the soak",
                "loops",
                metric,
                zero=False,
            )
            for metric in ("rss_mb", "fds", "threads", "actors")
        ]
    if name == "chaos":
        crashes = result["figures"].get("crashes_by_kind", {})
        return [svg.bars({k: float(v) for k, v in crashes.items()}, "crashes by kind", "crashes")]
    return []


def _flat(prefix: str, value: Any, out: list[tuple[str, str]]) -> None:
    if isinstance(value, dict):
        for key, sub in value.items():
            _flat(f"{prefix}.{key}" if prefix else str(key), sub, out)
    else:
        out.append((prefix, str(value)))


def _figures(result: dict[str, Any]) -> str:
    rows: list[tuple[str, str]] = []
    _flat("", result.get("figures", {}), rows)
    body = "".join(f"<tr><td>{escape(k)}</td><td>{escape(v)}</td></tr>" for k, v in rows)
    return f"<table><tr><th>figure</th><th>value</th></tr>{body}</table>"


def _invariants(result: dict[str, Any]) -> str:
    cells = "".join(
        f"<tr><td>{escape(k)}</td><td class='{'ok' if ok else 'bad'}'>"
        f"{'held' if ok else 'BROKEN'}</td></tr>"
        for k, ok in result.get("invariants", {}).items()
    )
    return f"<table><tr><th>invariant</th><th></th></tr>{cells}</table>"


def render(results: dict[str, Any]) -> str:
    suite = results["suite"]
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        "<title>hermes bench report</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>hermes bench</h1>",
        f"<p>{escape(', '.join(suite['scenarios']))}; smoke: {suite['smoke']}; "
        f"{suite['machine']['cpus']} CPUs, Python {escape(suite['machine']['python'])}, "
        f"{escape(suite['machine']['platform'])}; {suite['seconds']} s. Overall: "
        f"<span class='{'ok' if results['ok'] else 'bad'}'>"
        f"{'every invariant held' if results['ok'] else 'invariants broken'}</span>. "
        "How to read it: docs/benchmarks.md.</p>",
    ]
    for name, result in results["scenarios"].items():
        parts.append(f"<h2>{escape(name)} ({result.get('seconds', '?')} s)</h2>")
        parts.append("<div class='plots'>" + "".join(_plots(name, result)) + "</div>")
        parts.append(_figures(result))
        parts.append(_invariants(result))
    data = escape(json.dumps(results, indent=1))
    parts.append(f"<details><summary>all figures (JSON)</summary><pre>{data}</pre></details>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write(results: dict[str, Any], path: Path) -> None:
    path.write_text(render(results), encoding="utf-8")
