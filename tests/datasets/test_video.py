"""Scenario videos: H.264 MP4s that decode with the right frame count, rate and size."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from floorman.datasets.video import VideoWriter, probe_video


def frames(count: int, size: tuple[int, int]) -> list[np.ndarray]:
    width, height = size
    out = []
    for i in range(count):
        image = np.zeros((height, width, 3), dtype=np.uint8)
        image[:, : (i * 7) % width] = (40, 120, 200)
        out.append(image)
    return out


@pytest.mark.parametrize("force_opencv", [False, True])
def test_written_video_decodes_with_frames_fps_and_size(tmp_path: Path, force_opencv: bool) -> None:
    path = tmp_path / "clip.mp4"
    with VideoWriter(path, size=(320, 180), fps=30, force_opencv=force_opencv) as writer:
        for image in frames(45, (320, 180)):
            writer.write(image)
    info = probe_video(path)
    assert (info.frames, info.width, info.height) == (45, 320, 180)
    assert info.fps == pytest.approx(30.0)
    if not force_opencv:
        assert (info.codec, info.pix_fmt) == ("h264", "yuv420p")


def test_writer_rejects_odd_sizes_and_wrong_frames(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="even"):
        VideoWriter(tmp_path / "odd.mp4", size=(321, 180))
    with VideoWriter(tmp_path / "ok.mp4", size=(64, 32)) as writer, pytest.raises(ValueError, match="shape"):
        writer.write(np.zeros((10, 10, 3), dtype=np.uint8))
