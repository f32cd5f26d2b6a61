"""Frame sources of the edge: a video file, an RTSP/HTTP stream, a USB camera, a folder of images.

`open_source(spec)` picks the kind from the spec (`0` a camera index, `rtsp://...` a stream, a folder, a
file) and checks it exists; nothing is read until `open()`. `read()` returns the next `Frame`, or None when the
source ended (a file without `loop`) or failed (a stalled or broken stream): the capture stage then reconnects
with backoff. Times: a file's frames carry their time in the video (plus the length of the loops before), so
a recording is analysed on its own clock; a live source's frames carry the wall-clock time of their capture.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import cv2
import numpy as np
import numpy.typing as npt

from floorman.core.errors import CameraError, ConfigError

logger = logging.getLogger(__name__)

Image = npt.NDArray[np.uint8]
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp")
STREAM_SCHEMES = ("rtsp://", "rtsps://", "http://", "https://", "udp://", "tcp://")
READ_TIMEOUT_MS = 3000


@dataclass(frozen=True)
class Frame:
    """One captured frame: its number at the source, its time (s), the BGR image, when it was captured; from a
    `ViewsSource`, the other cameras' frames of the same moment too."""

    number: int
    t: float
    image: Image
    captured_at: float  # time.monotonic() at capture, for latency
    views: tuple[Image, ...] = ()  # the other cameras' images (`ViewsSource`), in their order


class FrameSource(Protocol):
    name: str
    live: bool  # frames come at the camera's pace whether or not we read them (drop when behind)

    def open(self) -> None: ...

    def read(self) -> Frame | None: ...

    def close(self) -> None: ...


def open_source(spec: str, *, loop: bool = False, fps: float = 30.0, field: str = "--source") -> FrameSource:
    """The source named by `spec`; ConfigError naming `field` (the flag that gave it) when it cannot be one."""
    text = spec.strip()
    if not text:
        raise ConfigError("expected a video file, stream URL, camera index or image folder, got ''",
                          field=field)
    if text.isdigit():
        return CaptureSource(int(text), name=f"camera {text}", live=True)
    if text.lower().startswith(STREAM_SCHEMES):
        return CaptureSource(text, name=text, live=True)
    path = Path(text)
    if path.is_dir():
        return ImageFolderSource(path, loop=loop, fps=fps)
    if path.is_file():
        return CaptureSource(str(path), name=str(path), live=False, loop=loop)
    raise ConfigError(f"no such file or folder: {text} (expected a video file, stream URL such as rtsp://..., "
                      "camera index or image folder)", field=field)


class CaptureSource:
    """A video file, a stream URL or a camera index, read with OpenCV."""

    def __init__(self, target: str | int, *, name: str, live: bool, loop: bool = False) -> None:
        self.target = target
        self.name = name
        self.live = live
        self.loop = loop
        self.fps = 30.0
        self._capture: Any = None
        self._number = 0
        self._offset = 0.0
        self._index = 0

    def open(self) -> None:
        params = [cv2.CAP_PROP_OPEN_TIMEOUT_MSEC, READ_TIMEOUT_MS, cv2.CAP_PROP_READ_TIMEOUT_MSEC, READ_TIMEOUT_MS]
        if isinstance(self.target, int):
            capture = cv2.VideoCapture(self.target)
        else:
            capture = cv2.VideoCapture(self.target, cv2.CAP_ANY, params)
        if not capture.isOpened():
            capture.release()
            raise CameraError(f"{self.name}: cannot open the source")
        fps = float(capture.get(cv2.CAP_PROP_FPS) or 0.0)
        self.fps = fps if 1.0 <= fps <= 240.0 else 30.0
        self._capture = capture
        self._index = 0
        logger.info("opened %s (%.1f fps)", self.name, self.fps)

    def read(self) -> Frame | None:
        if self._capture is None:
            raise CameraError(f"{self.name}: not open")
        ok, image = self._capture.read()
        if not ok and not self.live and self.loop and self._index > 0:
            self._offset += self._index / self.fps
            self._capture.set(cv2.CAP_PROP_POS_FRAMES, 0)
            self._index = 0
            ok, image = self._capture.read()
        if not ok or image is None:
            return None
        t = time.time() if self.live else self._offset + self._index / self.fps
        frame = Frame(number=self._number, t=t, image=np.asarray(image, dtype=np.uint8),
                      captured_at=time.monotonic())
        self._number += 1
        self._index += 1
        return frame

    def close(self) -> None:
        if self._capture is not None:
            self._capture.release()
            self._capture = None


class ImageFolderSource:
    """The images of a folder in name order, at `fps` frames per second of media time."""

    def __init__(self, folder: Path, *, loop: bool = False, fps: float = 30.0) -> None:
        if fps <= 0:
            raise ValueError(f"expected fps > 0, got {fps}")
        self.folder = folder
        self.name = str(folder)
        self.live = False
        self.loop = loop
        self.fps = fps
        self._files: list[Path] = []
        self._index = 0
        self._number = 0

    def open(self) -> None:
        self._files = sorted(p for p in self.folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        if not self._files:
            raise CameraError(f"{self.folder}: no images ({', '.join(IMAGE_SUFFIXES)}) in the folder")
        self._index = 0

    def read(self) -> Frame | None:
        if self._index >= len(self._files):
            if not self.loop or not self._files:
                return None
            self._index = 0
        path = self._files[self._index]
        self._index += 1
        image = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if image is None:
            raise CameraError(f"{path}: not a readable image")
        frame = Frame(number=self._number, t=self._number / self.fps, image=np.asarray(image, dtype=np.uint8),
                      captured_at=time.monotonic())
        self._number += 1
        return frame

    def close(self) -> None:
        self._files = []


class ViewsSource:
    """Several cameras of one table read in step: each `read` takes the next frame of every source and returns the
    first's, the others' images as its `views` (its number and time the first's). The cameras must run at one frame
    rate (recordings: the same frame count over the same time); a frame missing from any source ends or breaks
    the whole (the capture stage reconnects all)."""

    def __init__(self, sources: list[FrameSource]) -> None:
        if len(sources) < 2:
            raise ValueError(f"expected two or more sources, got {len(sources)}")
        self.sources = sources
        self.name = " + ".join(source.name for source in sources)
        self.live = any(source.live for source in sources)

    def open(self) -> None:
        opened: list[FrameSource] = []
        try:
            for source in self.sources:
                source.open()
                opened.append(source)
        except CameraError:
            for source in opened:
                source.close()
            raise

    def read(self) -> Frame | None:
        frames = [source.read() for source in self.sources]
        first = frames[0]
        if first is None or any(frame is None for frame in frames[1:]):
            return None
        views = tuple(frame.image for frame in frames[1:] if frame is not None)
        return Frame(number=first.number, t=first.t, image=first.image, captured_at=first.captured_at, views=views)

    def close(self) -> None:
        for source in self.sources:
            source.close()
