"""The change gate in front of the detector: no inference on a static frame, a region where it changed."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import numpy as np
import numpy.typing as npt
import pytest

from floorman.edge.gate import ChangeGatedDetector
from floorman.vision.detections import Detections
from floorman.vision.detector import OnnxDetector, OnnxDetectorConfig

MODEL = Path(__file__).resolve().parents[2] / "src" / "floorman" / "models" / "weights" / "detector_int8.onnx"


class CountingDetector(OnnxDetector):
    """The shipped detector, counting its window inferences."""

    calls = 0

    def infer(self, image: npt.NDArray[np.uint8]) -> Detections:
        self.calls += 1
        return super().infer(image)


@pytest.fixture(scope="module")
def inner() -> CountingDetector:
    if not MODEL.is_file():
        pytest.skip(f"no shipped model at {MODEL}")
    return CountingDetector(OnnxDetectorConfig(model=MODEL, threads=1))


def test_static_frames_skip_inference_and_a_small_change_runs_one_region(inner: CountingDetector) -> None:
    rng = np.random.default_rng(1)
    frame = rng.integers(60, 90, size=(360, 640, 3), dtype=np.uint8)
    gate = ChangeGatedDetector(inner)
    gate.detect(frame)
    whole = inner.calls
    assert gate.stats.full == 1 and whole == len(inner.levels) - 1 + len(inner.windows(640, 360, level=960)[1])
    gate.detect(frame.copy())
    assert gate.stats.skipped == 1 and inner.calls == whole
    changed = frame.copy()
    changed[100:140, 200:240] = 255
    gate.detect(changed)
    assert gate.stats.regions == 1 and inner.calls == whole + 1  # one window covers the changed region
    brighter = np.clip(changed.astype(np.int16) + 80, 0, 255).astype(np.uint8)
    gate.detect(brighter)
    assert gate.stats.full == 2


def test_bad_gate_settings_are_refused(inner: CountingDetector) -> None:
    with pytest.raises(ValueError, match="threshold"):
        ChangeGatedDetector(inner, threshold=0)


class BrightBoxes:
    """A stand-in detector that sees one object: the bounding box of the pure white pixels of what it is shown,
    cut by the window's edges as a real detector's box of a partly seen object is."""

    names: ClassVar[dict[int, str]] = {0: "card_face"}
    levels = (320,)
    imgsz = 320
    config = OnnxDetectorConfig(model=MODEL)

    def infer(self, image: npt.NDArray[np.uint8]) -> Detections:
        ys, xs = np.nonzero((image == 255).all(axis=2))
        if len(xs) == 0:
            return Detections.empty()
        box = np.array([[xs.min(), ys.min(), xs.max() + 1, ys.max() + 1]], dtype=np.float32)
        return Detections(xyxy=box, confidence=np.array([0.9], dtype=np.float32), class_id=np.array([0]))

    def detect(self, frame: npt.NDArray[np.uint8]) -> Detections:
        return self.infer(frame)

    def refine(self, frame: npt.NDArray[np.uint8], found: Detections) -> Detections:  # noqa: ARG002
        return found  # it has no class to look at again


@pytest.mark.parametrize("below", [15, 30])
def test_a_change_beside_a_card_does_not_cut_it(below: int) -> None:
    # A hand comes near a card: the changed region (with its margin) takes in part of the card. The card must
    # stay one whole box, not become a strip (its centre inside the region) or a strip beside its old box.
    frame = np.full((360, 640, 3), 40, dtype=np.uint8)
    frame[100:160, 300:340] = 255
    gate = ChangeGatedDetector(BrightBoxes())  # type: ignore[arg-type]  # a stand-in, not an OnnxDetector
    first = gate.detect(frame)
    changed = frame.copy()
    changed[160 + below:170 + below, 290:350] = 120
    found = gate.detect(changed)
    assert gate.stats.regions == 1
    assert found.xyxy.tolist() == first.xyxy.tolist() == [[300.0, 100.0, 340.0, 160.0]]
