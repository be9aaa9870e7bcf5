"""GcPauses: the cyclic collector's pauses, timed through ``gc.callbacks``."""

from __future__ import annotations

import gc

import pytest

from actors import GcPauses, gc_pauses


def test_every_collection_is_timed_in_its_generation() -> None:
    pauses = GcPauses().install()
    try:
        gc.collect(0)
        gc.collect(2)
        gc.collect(2)
    finally:
        pauses.uninstall()
    gc.collect()  # after uninstall: not counted
    snap = pauses.snapshot()
    assert snap["generations"][2]["collections"] == 2
    assert snap["generations"][0]["collections"] >= 1
    assert snap["collections"] == sum(g["collections"] for g in snap["generations"])
    for generation in snap["generations"]:
        assert sum(generation["histogram_ms"].values()) == generation["collections"]
    assert 0 < snap["pause_ms"]["p50"] <= snap["pause_ms"]["p99"] <= snap["pause_ms"]["max"]
    assert snap["threshold"] == list(gc.get_threshold())


def test_pauses_fall_in_their_buckets_and_percentiles_are_exact() -> None:
    pauses = GcPauses(recent=100)
    for ms in [0.05] * 98 + [3.0, 40.0]:
        pauses.record(0, ms)
    hist = pauses.snapshot()["generations"][0]["histogram_ms"]
    assert hist["<=0.1"] == 98 and hist["<=5"] == 1 and hist["<=50"] == 1
    assert pauses.percentile(0.5) == 0.05 and pauses.percentile(0.99) == 40.0
    assert pauses.snapshot()["pause_ms"]["max"] == 40.0


def test_install_is_idempotent_and_the_process_recorder_is_one() -> None:
    pauses = GcPauses()
    pauses.install().install()
    try:
        assert gc.callbacks.count(pauses._callback) == 1
    finally:
        pauses.uninstall()
        pauses.uninstall()
    assert pauses._callback not in gc.callbacks
    assert gc_pauses() is gc_pauses()
    with pytest.raises(ValueError, match="recent"):
        GcPauses(recent=0)
