"""Writing scenario videos: H.264 (yuv420p) MP4 through PyAV, or OpenCV's mp4v when libx264 is missing."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from types import TracebackType
from typing import Any

import av
import cv2
import numpy as np
import numpy.typing as npt

from floorman.core.errors import FloormanError

logger = logging.getLogger(__name__)


def _has_libx264() -> bool:
    try:
        return "libx264" in av.codecs_available
    except AttributeError:  # very old PyAV
        return False


class VideoWriter:
    """Frames (H, W, 3 uint8 BGR) to an MP4 at a fixed frame rate. Use as a context manager."""

    def __init__(self, path: Path, *, size: tuple[int, int], fps: int = 30, crf: int = 20,
                 force_opencv: bool = False) -> None:
        width, height = size
        if width % 2 or height % 2:
            raise ValueError(f"expected an even frame size for yuv420p, got {width}x{height}")
        self.path = path
        self.size = size
        self.fps = fps
        self.frames = 0
        self._container: Any = None
        self._stream: Any = None
        self._cv: Any = None
        if _has_libx264() and not force_opencv:
            self._container = av.open(str(path), mode="w")
            stream = self._container.add_stream("libx264", rate=Fraction(fps, 1))
            stream.width, stream.height = width, height
            stream.pix_fmt = "yuv420p"
            stream.options = {"crf": str(crf), "preset": "veryfast"}
            self._stream = stream
            self.codec = "h264"
        else:
            logger.warning("libx264 is not available in PyAV: writing %s with OpenCV's mp4v instead", path)
            self._cv = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"mp4v"), float(fps), (width, height))
            if not self._cv.isOpened():
                raise FloormanError(f"{path}: OpenCV cannot open an mp4v writer")
            self.codec = "mp4v"

    def write(self, image: npt.NDArray[np.uint8]) -> None:
        if image.shape != (self.size[1], self.size[0], 3):
            raise ValueError(f"expected a frame of shape {(self.size[1], self.size[0], 3)}, got {image.shape}")
        if self._cv is not None:
            self._cv.write(image)
        else:
            frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(image), format="bgr24")
            for packet in self._stream.encode(frame):
                self._container.mux(packet)
        self.frames += 1

    def close(self) -> None:
        if self._cv is not None:
            self._cv.release()
            self._cv = None
        if self._container is not None:
            for packet in self._stream.encode():
                self._container.mux(packet)
            self._container.close()
            self._container = None

    def __enter__(self) -> VideoWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


@dataclass(frozen=True)
class VideoInfo:
    frames: int
    fps: float
    width: int
    height: int
    codec: str
    pix_fmt: str


def probe_video(path: Path) -> VideoInfo:
    """Decode a video fully with PyAV and report what it holds."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        frames = sum(1 for _ in container.decode(stream))
        rate = stream.average_rate or stream.base_rate or 0
        return VideoInfo(frames=frames, fps=float(rate), width=stream.codec_context.width,
                         height=stream.codec_context.height, codec=stream.codec_context.name,
                         pix_fmt=str(stream.codec_context.pix_fmt))
