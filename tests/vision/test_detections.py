from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from floorman.vision.detections import Detections


def three() -> Detections:
    return Detections(
        xyxy=np.array([[0, 0, 10, 10], [5, 5, 25, 15], [100, 100, 120, 140]], dtype=np.float32),
        confidence=np.array([0.9, 0.5, 0.7]), class_id=np.array([2, 0, 4]),
        xy_mm=np.array([[1, 2], [3, 4], [5, 6]]), data={"zone": np.array(["a", "b", "c"])},
    )


def test_fields_are_typed_arrays_and_tracker_defaults_to_minus_one() -> None:
    d = three()
    assert d.xyxy.dtype == np.float32 and d.confidence.dtype == np.float32
    assert d.class_id.dtype == np.int64
    assert d.tracker_id.tolist() == [-1, -1, -1]
    assert len(d) == 3


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"xyxy": np.zeros((3, 3))}, r"xyxy: expected shape \(N, 4\), got \(3, 3\)"),
        ({"confidence": np.zeros(2)}, r"confidence: expected shape \(3\), got \(2,\)"),
        ({"class_id": np.zeros((3, 1))}, r"class_id: expected shape \(3\), got \(3, 1\)"),
        ({"tracker_id": np.zeros(4)}, r"tracker_id: expected shape \(3\), got \(4,\)"),
        ({"xy_mm": np.zeros((3, 3))}, r"xy_mm: expected shape \(3, 2\), got \(3, 3\)"),
        ({"data": {"zone": np.zeros(2)}}, r"data\['zone'\]: expected 3 entries, got shape \(2,\)"),
    ],
)
def test_validation_names_the_field(changes: dict[str, object], message: str) -> None:
    d = three()
    fields: dict[str, Any] = {"xyxy": d.xyxy, "confidence": d.confidence, "class_id": d.class_id, "xy_mm": d.xy_mm,
              "data": dict(d.data)}
    fields.update(changes)
    with pytest.raises(ValueError, match=message):
        Detections(**fields)


def test_boolean_mask_and_index_array_select_every_field() -> None:
    d = three()
    picked = d[d.confidence > 0.6]
    assert picked.class_id.tolist() == [2, 4]
    assert picked.xy_mm is not None and picked.xy_mm.tolist() == [[1, 2], [5, 6]]
    assert picked.data["zone"].tolist() == ["a", "c"]
    reordered = d[np.array([2, 0])]
    assert reordered.xyxy[0].tolist() == [100, 100, 120, 140]
    assert len(d[1]) == 1 and d[1].class_id.tolist() == [0]
    with pytest.raises(ValueError, match=r"mask: expected shape \(3,\), got \(2,\)"):
        d[np.array([True, False])]


def test_empty_and_merge() -> None:
    empty = Detections.empty()
    assert len(empty) == 0 and empty.xyxy.shape == (0, 4)
    merged = Detections.merge([three(), empty, three()[np.array([1])]])
    assert len(merged) == 4
    assert merged.class_id.tolist() == [2, 0, 4, 0]
    assert merged.data["zone"].tolist() == ["a", "b", "c", "b"]
    assert len(Detections.merge([])) == 0
    plain = Detections(xyxy=np.zeros((1, 4)), confidence=[0.5], class_id=[1])
    with pytest.raises(ValueError, match="expected the same fields"):
        Detections.merge([three(), plain])


def test_bottom_centre_area_and_with_data() -> None:
    d = three()
    assert d.bottom_centre.tolist() == [[5, 10], [15, 15], [110, 140]]
    assert d.area.tolist() == [100, 200, 800]
    extended = d.with_data(denomination=np.array([25, 100, 500]))
    assert extended.data["denomination"].tolist() == [25, 100, 500]
    assert "denomination" not in d.data
