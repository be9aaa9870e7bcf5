"""``bench.session_floor``: the variants really take their parts out, and it runs."""

from __future__ import annotations

import json
import subprocess
import sys

from bench.session_floor import VARIANTS, without
from hermes.session import batch, events
from hermes.store import StoreClient


def test_each_part_is_patched_out_only_inside_the_block() -> None:
    append, replace, invoker, publish = (
        StoreClient.append,
        StoreClient.replace_last,
        batch.worker_invoker,
        events.EventHub.publish,
    )
    with without(VARIANTS["bare"]):
        assert StoreClient.append is not append
        assert StoreClient.replace_last is not replace
        assert batch.worker_invoker is not invoker
        assert events.EventHub.publish is not publish
    assert StoreClient.append is append and StoreClient.replace_last is replace
    assert batch.worker_invoker is invoker and events.EventHub.publish is publish
    with without(VARIANTS["full"]):
        assert StoreClient.append is append and batch.worker_invoker is invoker


def test_the_floor_runs_every_variant_asked_for() -> None:
    command = ["-m", "bench.session_floor", "--quick", "--reps", "1", "--json"]
    out = subprocess.run(
        [sys.executable, *command, "full", "no-store-no-workers"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert set(data) == {"full", "no-store-no-workers"}
    for figures in data.values():
        assert figures["ratio"] > 0 and len(figures["ratios"]) == 1
        assert figures["session_cpu_us_per_turn"] > 0 < figures["direct_cpu_us_per_turn"]
    assert data["full"]["problems"] == []


def test_an_unknown_variant_is_refused_by_name() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "bench.session_floor", "no-such"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert "unknown variant(s) no-such" in out.stderr
