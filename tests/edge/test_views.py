"""Several cameras of one table: sources read in step, states fused in table mm and tracked once."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from floorman.core.errors import ConfigError
from floorman.edge.agent import PerceptionConfig, ViewConfig, build_state_builder
from floorman.edge.builders import FusedStateBuilder, VisionStateBuilder
from floorman.edge.derive import EventDeriver
from floorman.edge.pipeline import EdgePipeline, PipelineSettings
from floorman.edge.sources import ImageFolderSource, ViewsSource
from floorman.vision.calibration import Calibration, PointPair, calibrate_from_points
from tests.edge.derive_helpers import centre
from tests.edge.test_builders import LAYOUT, FixedDetector, pixel_box, top_down_calibration


def facing_calibration() -> Calibration:
    """The camera across the table from `top_down_calibration`'s: 1 px = 2 mm, the table turned half a turn."""
    pairs = [PointPair(pixel=(640 - x / 2, 360 + y / 2), table_mm=(x, y))
             for x, y in ((-1000, -500), (1000, -500), (1000, 500), (-1000, 500))]
    return calibrate_from_points(pairs, layout=LAYOUT, image_size=(1280, 720))


def across(point: tuple[float, float], half: float = 10.0) -> tuple[float, float, float, float]:
    """`pixel_box` as the facing camera sees the point."""
    return pixel_box((-point[0], -point[1]), half)


def test_two_cameras_states_are_fused_and_tracked_once() -> None:
    hole, hand = centre("hole_3"), (100.0, 50.0)
    near = FixedDetector([pixel_box(hole, 30), pixel_box(hand, 40)], [1, 4])
    far = FixedDetector([across(hole, 30), across(hand, 40)], [1, 4])
    builders = [VisionStateBuilder(near, calibration=top_down_calibration(), layout=LAYOUT, camera_id="c1",
                                   track=False),
                VisionStateBuilder(far, calibration=facing_calibration(), layout=LAYOUT, camera_id="c1.1",
                                   track=False)]
    fused = FusedStateBuilder(builders, camera_id="c1")
    frame = np.zeros((720, 1280, 3), dtype=np.uint8)
    first = fused.build_views([frame, frame], 3, 0.1)
    assert (first.camera_id, first.frame, first.t) == ("c1", 3, 0.1)
    assert [(c.zone, c.face_up) for c in first.cards] == [("hole_3", False)]  # one card, seen by both
    assert len(first.hands) == 1
    second = fused.build_views([frame, frame], 4, 0.2)
    assert second.cards[0].track_id == first.cards[0].track_id is not None  # one track, whichever camera's
    assert second.hands[0].track_id == first.hands[0].track_id is not None
    assert len(near.seen) == len(far.seen) == 2
    with pytest.raises(ValueError, match="expected 2 cameras' images, got 1"):
        fused.build_views([frame], 5, 0.3)
    with pytest.raises(ValueError, match="every camera's image of frame 5"):
        fused.build(frame, 5, 0.3)
    with pytest.raises(ValueError, match="two or more cameras' builders, got 1"):
        FusedStateBuilder(builders[:1], camera_id="c1")


def write_images(folder: Path, count: int) -> Path:
    folder.mkdir()
    for i in range(count):
        cv2.imwrite(str(folder / f"f{i}.png"), np.full((8, 8, 3), 10 * i, np.uint8))
    return folder


def test_views_are_read_in_step_and_end_with_the_shortest(tmp_path: Path) -> None:
    source = ViewsSource([ImageFolderSource(write_images(tmp_path / "a", 3)),
                          ImageFolderSource(write_images(tmp_path / "b", 2))])
    assert source.name == f"{tmp_path / 'a'} + {tmp_path / 'b'}" and not source.live
    source.open()
    frames = [source.read(), source.read(), source.read()]
    source.close()
    assert [f.number for f in frames if f is not None] == [0, 1] and frames[2] is None
    assert frames[1] is not None and int(frames[1].image[0, 0, 0]) == 10 and len(frames[1].views) == 1
    assert int(frames[1].views[0][0, 0, 0]) == 10
    with pytest.raises(ValueError, match="two or more sources, got 1"):
        ViewsSource([ImageFolderSource(tmp_path / "a")])


def test_several_cameras_need_a_builder_of_views(tmp_path: Path) -> None:
    source = ViewsSource([ImageFolderSource(tmp_path), ImageFolderSource(tmp_path)])
    builder = VisionStateBuilder(FixedDetector([], []), calibration=top_down_calibration(), layout=LAYOUT,
                                 camera_id="c")  # one camera's
    published: list[object] = []
    with pytest.raises(ValueError, match="several cameras need a builder of their views"):
        EdgePipeline(source, builder=builder, deriver=EventDeriver(LAYOUT, table_id="t", camera_id="c"),
                     sink=published.append)
    views = [ViewConfig(source=str(tmp_path), calibration=tmp_path / "other.yaml")]
    with pytest.raises(ConfigError, match="simulator truth") as refused:
        build_state_builder(PerceptionConfig(camera_id="c", truth=tmp_path / "frames.jsonl"), layout=LAYOUT,
                            views=views)
    assert refused.value.field == "--view"


def test_the_pipeline_builds_every_camera_s_frames_together(tmp_path: Path) -> None:
    hole = centre("hole_3")
    near = FixedDetector([pixel_box(hole, 30)], [1])
    far = FixedDetector([across(hole, 30)], [1])
    builders = [VisionStateBuilder(near, calibration=top_down_calibration(), layout=LAYOUT, camera_id="c1",
                                   track=False),
                VisionStateBuilder(far, calibration=facing_calibration(), layout=LAYOUT, camera_id="c1.1",
                                   track=False)]
    source = ViewsSource([ImageFolderSource(write_images(tmp_path / "a", 3)),
                          ImageFolderSource(write_images(tmp_path / "b", 3))])
    events: list[object] = []
    pipeline = EdgePipeline(source, builder=FusedStateBuilder(builders, camera_id="c1"),
                            deriver=EventDeriver(LAYOUT, table_id="t1", camera_id="c1"), sink=events.append,
                            settings=PipelineSettings(realtime=False)).start()
    try:
        assert pipeline.wait(10)
    finally:
        pipeline.stop()
    assert pipeline.stats.analysed == 3 and len(near.seen) == len(far.seen) == 3
