from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from floorman.core.alerts import TRUTH_ADAPTER, Alert, Citation, Evidence, ExpectedAlert, Explanation, Severity
from floorman.core.chips import ChipCount
from floorman.core.errors import SchemaError
from floorman.core.events import (
    EVENT_TYPES,
    BlindsLevel,
    ButtonMoved,
    CameraStatus,
    CardDealt,
    ChipsPushed,
    Declaration,
    EventBase,
    HandZone,
    Heartbeat,
    RailCrossing,
    RailDirection,
    Shuffle,
    Tap,
    ZoneCards,
    ZoneChips,
    decode_event,
    encode_event,
    event_topic,
)
from floorman.core.rule_ids import RuleId

BASE: dict[str, Any] = {"table_id": "t1", "camera_id": "cam0", "seq": 7, "t": 12.5, "frame": 375}
CHIPS = (ChipCount(denom=500, count=2), ChipCount(denom=25, count=4))


def one_of_each() -> list[EventBase]:
    return [
        ZoneCards(**BASE, zone="board", face_up=("10h", "AS", "2c")),
        ZoneChips(**BASE, zone="bet_3", seat=3, chips=CHIPS, value=1100, visible_fraction=0.5),
        ChipsPushed(**BASE, seat=3, trip=2, chips=CHIPS, value=1100, t_start=11.0, landed_zone="bet_3"),
        HandZone(**BASE, zone="rail_edge", seat=4, action="enter", holding="chips"),
        Tap(**BASE, seat=2),
        RailCrossing(**BASE, direction=RailDirection.IN, seat=4, objects="chips", chips=CHIPS, value=1100,
                     position=(300.0, 590.0)),
        ButtonMoved(**BASE, seat=9),
        Shuffle(**BASE),
        CardDealt(**BASE, to_zone="hole_1", seat=1, face_up=True, card="qd"),
        BlindsLevel(**BASE, level=3, small_blind=100, big_blind=200, ante=200),
        Declaration(**BASE, seat=5, declaration="raise_to", amount=1200),
        Heartbeat(**BASE, status=CameraStatus.ONLINE, fps=29.5, latency_ms=41.0, frames_dropped=0),
    ]


def test_every_type_round_trips_through_json() -> None:
    events = one_of_each()
    assert sorted(e.model_dump()["type"] for e in events) == sorted(EVENT_TYPES)
    for event in events:
        decoded = decode_event(encode_event(event))
        assert type(decoded) is type(event)
        assert decoded == event
    assert ZoneCards(**BASE, zone="board", face_up=("th",)).face_up == ("10H",)


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({**BASE, "type": "teleport"}, "field 'type': unknown event type 'teleport'"),
        ({**BASE}, "field 'type': missing"),
        ({**BASE, "type": "tap", "seat": 11}, "field 'tap.seat'"),
        ({**BASE, "type": "tap", "seat": 2, "extra": 1}, "field 'tap.extra'"),
        ({**BASE, "type": "tap", "seat": 2, "seq": -1}, "field 'tap.seq'"),
        (
            {**BASE, "type": "zone_cards", "zone": "board", "face_up": ["1Z"]},
            "field 'zone_cards.face_up': expected a suit among S, H, D, C in card '1Z'",
        ),
        ({**BASE, "type": "tap", "seat": 2, "schema_version": 2}, "field 'tap.schema_version'"),
    ],
)
def test_bad_payloads_name_the_field(payload: dict[str, Any], message: str) -> None:
    with pytest.raises(SchemaError, match=re.escape(message)):
        decode_event(json.dumps(payload))


def test_garbage_bytes() -> None:
    for payload in (b"\xff\xfe", b"", b"[]", b"null", b'{"type": 3}'):
        with pytest.raises(SchemaError):
            decode_event(payload)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(
    base=st.fixed_dictionaries({}, optional=dict.fromkeys(BASE, json_values)),
    kind=st.sampled_from([*EVENT_TYPES, "nope"]),
    extra=st.dictionaries(st.sampled_from(["seat", "zone", "chips", "value", "face_up", "card", "trip"]),
                          json_values, max_size=4),
)
def test_decoder_never_crashes(base: dict[str, Any], kind: str, extra: dict[str, Any]) -> None:
    payload = json.dumps({**base, **extra, "type": kind})
    try:
        event = decode_event(payload)
    except SchemaError:
        return
    assert event.type == kind


def test_topics() -> None:
    assert event_topic("t1", "chips_pushed") == "floorman/t1/chips_pushed"
    with pytest.raises(ValueError, match="unknown event type"):
        event_topic("t1", "boxes")


def test_truth_records_and_alerts() -> None:
    expected = ExpectedAlert(rule=RuleId.STRING_BET, seat=3, t_start=10.0, t_end=15.0)
    assert TRUTH_ADAPTER.validate_json(expected.model_dump_json()) == expected
    event = one_of_each()[2]
    assert TRUTH_ADAPTER.validate_json(encode_event(event)) == event
    with pytest.raises(ValueError, match="before t_start"):
        ExpectedAlert(rule=RuleId.STRING_BET, seat=3, t_start=10.0, t_end=5.0)
    alert = Alert(
        alert_id="t1-4-A8-3-17", table_id="t1", hand_number=4, rule=RuleId.parse("string_bet"), seat=3,
        severity=Severity.ALERT, confidence=0.9, provisional=True,
        citations=(Citation(rulebook="club_004", seed="004", rule="9-17", text_fr="..."),),
        evidence=Evidence(t_start=10.0, t_end=12.0, frames=(300, 360), event_seqs=(17, 18)),
        explanation=Explanation(fr="Mise en plusieurs fois.", en="Bet made in several motions."),
    )
    assert Alert.model_validate_json(alert.model_dump_json()) == alert
