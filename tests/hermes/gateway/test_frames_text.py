"""Frames and text: what cannot be carried as UTF-8 is refused coming in and never sent out."""

from __future__ import annotations

import json

import msgpack  # type: ignore[import-untyped]
import pytest

from hermes.gateway import frames


@pytest.mark.parametrize(
    ("raw", "code", "request_id", "where"),
    [
        ('{"id": 1, "method": "steer", "params": {"text": "a\\ud800"}}', "invalid_params", 1,
         "params.text holds a lone surrogate U+D800 at offset 1"),
        ('{"id": "a\\udc00", "method": "daemon.status"}', "invalid_request", None,
         "id holds a lone surrogate U+DC00 at offset 1"),
        ('{"id": 2, "method": "x\\ud800"}', "invalid_request", 2, "method holds"),
        ('{"id": 3, "method": "m", "params": {"\\ud800": 1}}', "invalid_params", 3,
         "a key of params holds"),
        ('{"id": 4, "method": "m", "params": {"l": [{"k": "\\udfff"}]}}', "invalid_params", 4,
         "params.l[0].k holds"),
    ],
)  # fmt: skip
def test_a_request_holding_a_lone_surrogate_is_refused_naming_where(
    raw: str, code: str, request_id: object, where: str
) -> None:
    with pytest.raises(frames.ProtocolError) as info:
        frames.decode(raw, binary=False)
    assert info.value.code == code and info.value.request_id == request_id
    assert where in str(info.value)


def test_valid_text_passes_decode_untouched() -> None:
    raw = json.dumps({"id": 1, "method": "steer", "params": {"text": "é 😀 \x00 ok"}})
    assert frames.decode(raw, binary=False) == (1, "steer", {"text": "é 😀 \x00 ok"})


@pytest.mark.parametrize("binary", [False, True])
def test_an_outgoing_surrogate_goes_out_as_a_replacement_character(binary: bool) -> None:
    frame = {"id": 1, "result": {"te\ud800xt": ["a\udfffb", "😀"]}}
    data = frames.encode(frame, binary)
    if binary:
        assert isinstance(data, bytes)
        back = msgpack.unpackb(data, raw=False)
    else:
        assert isinstance(data, str)
        data.encode("utf-8")  # what the socket does: it must not raise
        back = json.loads(data)
    assert back == {"id": 1, "result": {"te\ufffdxt": ["a\ufffdb", "😀"]}}


def test_clean_frames_encode_as_before() -> None:
    frame = {"id": "r1", "result": "é"}
    assert frames.encode(frame, False) == '{"id":"r1","result":"é"}'
    assert frames.json_text([1, "x"]) == '[1,"x"]'
