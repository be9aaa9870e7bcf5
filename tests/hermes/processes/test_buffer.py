"""The rolling output buffer (absolute offsets) and the bounded line splitter."""

from __future__ import annotations

import pytest

from hermes.processes import OutputBuffer
from hermes.processes.lines import LineSplitter, clip, matching


def test_buffer_keeps_the_last_characters_with_absolute_offsets() -> None:
    buf = OutputBuffer(10)
    for piece in ("abc", "defg", "hijklm", "n"):
        buf.write(piece)
    assert buf.end == 14 and buf.start == 4 and len(buf) == 10
    assert buf.text() == "efghijklmn"
    assert buf.tail(3) == "lmn"
    page = buf.read(6, 4)
    assert (page.text, page.offset, page.next_offset, page.skipped) == ("ghij", 6, 10, 0)
    assert page.more
    # Asking for dropped characters: the page starts at the oldest kept one and says so.
    page = buf.read(0, 5)
    assert (page.text, page.offset, page.skipped) == ("efghi", 4, 4)
    # Default page: the last ``limit`` characters; past the end: empty.
    assert buf.read(None, 4).text == "klmn"
    end = buf.read(14, 4)
    assert end.text == "" and not end.more and end.next_offset == 14
    with pytest.raises(ValueError):
        buf.read(-1, 4)


def test_a_write_larger_than_the_buffer_keeps_its_end() -> None:
    buf = OutputBuffer(200_000)
    buf.write("x" * 150_000)
    buf.write("y" * 1_000_000)
    assert len(buf) == 200_000 and buf.end == 1_150_000
    assert set(buf.text()) == {"y"}
    page = buf.read(1_149_990, 100)
    assert page.text == "y" * 10 and page.next_offset == 1_150_000


def test_many_small_writes_are_coalesced_and_paged_exactly() -> None:
    buf = OutputBuffer(1000)
    text = "".join(f"{i:04d}\n" for i in range(600))  # 3000 characters in 600 writes
    for i in range(600):
        buf.write(f"{i:04d}\n")
    assert buf.text() == text[-1000:]
    assert len(buf._chunks) < 10  # coalesced, not one chunk per write
    collected, offset = [], buf.start
    while True:
        page = buf.read(offset, 77)
        collected.append(page.text)
        offset = page.next_offset
        if not page.more:
            break
    assert "".join(collected) == text[-1000:]


def test_line_splitter_joins_split_lines_and_bounds_long_ones() -> None:
    split = LineSplitter(max_line=8)
    assert split.feed("ab") == []
    assert split.feed("c\r\nde") == ["abc"]
    assert split.feed("f\n") == ["def"]
    # A line without a newline is cut at max_line; the rest of it is skipped.
    assert split.feed("x" * 5) == []
    assert split.feed("x" * 100_000) == ["x" * 8]
    assert split.feed("y" * 10) == []
    assert split.feed("zz\nok\n") == ["ok"]
    assert split.feed("tail") == []
    assert split.flush() == ["tail"] and split.flush() == []


def test_matching_and_clip() -> None:
    lines = ["Server ready on :8000", "compiling", "ERROR: x", "error: y"]
    assert matching(lines, ("ready", "ERROR")) == ["Server ready on :8000", "ERROR: x"]
    kept, left = clip([f"line {i}" for i in range(30)], 20, 2000)
    assert len(kept) == 20 and left == 10
    kept, left = clip(["a" * 1500, "b" * 1500], 20, 2000)
    assert kept[0] == "a" * 1500 and kept[1].endswith("…") and len("".join(kept)) <= 2000
    assert left == 0
