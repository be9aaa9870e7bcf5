"""The terminal summary: the headline figures of each scenario, then the invariants."""

from __future__ import annotations

from typing import Any

from bench.stats import format_table

Row = tuple[str, str, str, str]


def _lat(d: dict[str, Any]) -> str:
    return f"{d['p50']:.1f} / {d['p95']:.1f} / {d['p99']:.1f} / {d['max']:.1f}"


def _sessions(r: dict[str, Any]) -> list[Row]:
    f, d = r["figures"], r["details"]
    return [
        ("sessions", "turns/s", f"{f['turns_per_s']:.1f}", f"{d['turns']['answered']} turns"),
        ("", "model calls/s", f"{f['model_calls_per_s']:.1f}", f"{d['model_calls']} calls"),
        ("", "turn ms p50/p95/p99/max", _lat(f["turn_ms"]), "prompt -> turn.completed"),
        (
            "",
            "CPU ratio (daemon / bare SDK)",
            f"{f['cpu_ratio']:.2f}",
            f"{f['daemon_cpu_ms_per_turn']:.2f} ms/turn vs {f['sdk_cpu_ms_per_call']:.2f} ms/call"
            f" x {f['model_calls_per_turn']:.1f}",
        ),
    ]


def _fanout(r: dict[str, Any]) -> list[Row]:
    f, d = r["figures"], r["details"]
    return [
        ("fanout", "completion s", f"{f['completion_s']:.2f}", f"{d['children']} subagents"),
        ("", "subagents/s", f"{f['subagents_per_s']:.1f}", ""),
        ("", "peak RSS MiB", f"{f['peak_rss_mb']:.1f}", "during the fan-out"),
        ("", "KiB per idle session", f"{f['idle_session_kb']:.1f}", "RSS growth"),
        (
            "",
            "KiB per idle subagent",
            f"{f['idle_subagent_kb']:.1f}",
            f"{d['parked_subagents']} waiting on the model",
        ),
    ]


def _cancel(r: dict[str, Any]) -> list[Row]:
    f = r["figures"]
    rows: list[Row] = [("cancel", "cancels", str(f["cancels"]), "p50 / p95 / p99 / max ms")]
    for metric in ("to_event", "to_stream_closed", "to_procs_gone"):
        for surface, by in f["by_surface"].items():
            lat = by[metric]
            if lat["n"]:
                rows.append(("", f"{metric} ({surface})", _lat(lat), f"n={lat['n']}"))
    for name in ("ws_cancel", "http_cancel", "status"):
        c = f["control"][name]
        rows.append(
            (
                "",
                f"{name}_load_ratio (<= 4, reported)",
                f"{f[f'{name}_load_ratio']:.2f}",
                f"p99 {c['load']['p99']:.1f} ms under load / p50 {c['idle']['p50']:.1f} idle",
            )
        )
        rows.append(
            (
                "",
                f"{name}_floor_ratio (<= 2, judged)",
                f"{f[f'{name}_floor_ratio']:.2f}",
                f"p99 {c['load']['p99']:.1f} ms / floor p99 {c['floor_load']['p99']:.1f} ms",
            )
        )
    rows.append(
        ("", "gc_pause_p99_ms (<= 5, judged)", f"{f['gc_pause_p99_ms']:.2f}", "daemon.stats gc")
    )
    return rows


def _steer(r: dict[str, Any]) -> list[Row]:
    f = r["figures"]
    lat = f["steer_to_delivered_ms"]
    return [("steer", "steer -> delivered ms", _lat(lat), f"n={lat['n']}")]


def _soak(r: dict[str, Any]) -> list[Row]:
    f = r["figures"]
    growth = ", ".join(f"{k} {v:+.1%}" for k, v in f["growth"].items())
    end = f["end"]
    return [
        ("soak", "loops/s", f"{f['loops_per_s']:.1f}", f"{f['loops']} loops"),
        ("", "growth after warm-up", growth, "quiet samples"),
        (
            "",
            "at the end",
            f"{end['rss_mb']:.1f} MiB, {end['fds']:.0f} fds",
            f"{end['threads']:.0f} threads, {end['actors']:.0f} actors",
        ),
    ]


def _chaos(r: dict[str, Any]) -> list[Row]:
    f, d = r["figures"], r["details"]
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(f["crashes_by_kind"].items())) or "none"
    absent = ", ".join(d["kinds_absent"]) or "-"
    return [
        ("chaos", "crashes", str(f["crashes"]), kinds),
        ("", "answered / failed", f"{f['answered']} / {f['failed_recorded']}", "prompts"),
        ("", "kinds absent", absent, ""),
    ]


_ROWS = {
    "sessions": _sessions,
    "fanout": _fanout,
    "cancel": _cancel,
    "steer": _steer,
    "soak": _soak,
    "chaos": _chaos,
}


def render(results: dict[str, Any]) -> str:
    rows: list[Row] = []
    broken: list[str] = []
    held = 0
    for name, result in results["scenarios"].items():
        rows += _ROWS[name](result)
        for check, ok in result["invariants"].items():
            if ok:
                held += 1
            else:
                broken.append(f"{name}: {check}")
    lines = [format_table(("scenario", "figure", "value", "note"), rows), ""]
    if broken:
        lines.append(f"invariants: {len(broken)} BROKEN: " + "; ".join(broken))
    else:
        lines.append(f"invariants: all {held} held")
    return "\n".join(lines)
