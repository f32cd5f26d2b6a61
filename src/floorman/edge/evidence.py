"""Evidence on the edge: a ring buffer of JPEG frames, bounded by total bytes and by age, fetchable by frame.

The analysis stage `add`s frames (JPEG-encoded once); the oldest go when the buffer holds more than
`max_bytes` or they are older than `max_age_s` (media time). The publisher answers `EvidenceRequest`s for a
frame number on its replay ROUTER socket (the same endpoint the heartbeat announces, under the same CURVE
allow-list), with the exact frame or the nearest one held; `fetch_evidence` is the consumer's side.
"""

from __future__ import annotations

import bisect
import itertools
import threading
from collections import deque
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt
import zmq

from floorman.edge.bus import EvidenceRequest, EvidenceResponse, PublisherKey, ReplayTarget
from floorman.edge.keys import KeyPair, make_client

_REQUEST_IDS = itertools.count(1)


@dataclass(frozen=True)
class EvidenceFrame:
    """One stored frame."""

    frame: int
    t: float
    jpeg: bytes


@dataclass
class EvidenceStats:
    added: int = 0
    evicted: int = 0
    served: int = 0
    missed: int = 0


def encode_jpeg(image: npt.NDArray[np.uint8], *, quality: int = 80) -> bytes:
    """A BGR image as JPEG bytes."""
    if not 1 <= quality <= 100:
        raise ValueError(f"expected a JPEG quality in 1..100, got {quality}")
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise ValueError(f"cannot encode an image of shape {image.shape} as JPEG")
    return bytes(data.tobytes())


class EvidenceBuffer:
    """JPEG frames in frame order, at most `max_bytes` in all and none older than `max_age_s`. Thread-safe."""

    def __init__(self, *, max_bytes: int = 64 * 1024 * 1024, max_age_s: float = 120.0) -> None:
        if max_bytes < 1 or max_age_s <= 0:
            raise ValueError(f"expected max_bytes >= 1 and max_age_s > 0, got {max_bytes}, {max_age_s}")
        self.max_bytes = max_bytes
        self.max_age_s = max_age_s
        self.stats = EvidenceStats()
        self._frames: deque[EvidenceFrame] = deque()
        self._numbers: deque[int] = deque()
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def size_bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._frames)

    def add(self, frame: int, t: float, jpeg: bytes) -> None:
        """Store a frame (frame numbers must grow); evict what the bounds no longer allow."""
        if len(jpeg) > self.max_bytes:
            raise ValueError(f"expected a JPEG of at most {self.max_bytes} bytes, got {len(jpeg)}")
        with self._lock:
            if self._numbers and frame <= self._numbers[-1]:
                self._clear()  # the source restarted its numbering: what is held no longer matches
            self._frames.append(EvidenceFrame(frame=frame, t=t, jpeg=jpeg))
            self._numbers.append(frame)
            self._bytes += len(jpeg)
            self.stats.added += 1
            while self._frames and (self._bytes > self.max_bytes or t - self._frames[0].t > self.max_age_s):
                self._evict()

    def _evict(self) -> None:
        old = self._frames.popleft()
        self._numbers.popleft()
        self._bytes -= len(old.jpeg)
        self.stats.evicted += 1

    def _clear(self) -> None:
        while self._frames:
            self._evict()

    def bounds(self) -> tuple[int, int] | None:
        with self._lock:
            return (self._numbers[0], self._numbers[-1]) if self._numbers else None

    def get(self, frame: int, *, nearest: bool = True) -> EvidenceFrame | None:
        """The frame `frame`, or (when `nearest`) the held frame closest to it; None when nothing fits."""
        with self._lock:
            if not self._numbers:
                return None
            numbers = list(self._numbers)
            index = bisect.bisect_left(numbers, frame)
            if index < len(numbers) and numbers[index] == frame:
                return self._frames[index]
            if not nearest:
                return None
            candidates = [i for i in (index - 1, index) if 0 <= i < len(numbers)]
            best = min(candidates, key=lambda i: abs(numbers[i] - frame))
            return self._frames[best]

    def answer(self, request: EvidenceRequest, *, key: PublisherKey) -> tuple[EvidenceResponse, bytes]:
        """The response header and JPEG bytes for a request (publisher side)."""
        base = {"request_id": request.request_id, "table_id": key.table_id, "camera_id": key.camera_id}
        if (request.table_id, request.camera_id) != (key.table_id, key.camera_id):
            return EvidenceResponse(**base, error=f"this endpoint serves {key}, not "
                                    f"{request.table_id}/{request.camera_id}"), b""
        bounds = self.bounds()
        found = self.get(request.frame, nearest=request.nearest)
        oldest, newest = bounds if bounds is not None else (None, None)
        if found is None:
            self.stats.missed += 1
            return EvidenceResponse(**base, oldest_frame=oldest, newest_frame=newest,
                                    error=f"frame {request.frame} is not held"), b""
        self.stats.served += 1
        return EvidenceResponse(**base, frame=found.frame, t=found.t, size=len(found.jpeg), oldest_frame=oldest,
                                newest_frame=newest), found.jpeg


def fetch_evidence(target: ReplayTarget, key: PublisherKey, frame: int, *, timeout: float = 2.0,
                   keys: KeyPair | None = None) -> tuple[EvidenceResponse, bytes] | None:
    """Ask an edge's replay endpoint for a frame's JPEG; None when it does not answer within `timeout`."""
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context.instance()
    dealer = context.socket(zmq.DEALER)
    dealer.linger = 0
    try:
        if keys is not None and target.server_key is not None:
            make_client(dealer, keys, server_key=target.server_key)
        dealer.connect(target.endpoint)
        request = EvidenceRequest(request_id=next(_REQUEST_IDS), table_id=key.table_id, camera_id=key.camera_id,
                                  frame=frame)
        dealer.send_multipart([b"", request.model_dump_json().encode()])
        if not dealer.poll(int(timeout * 1000), zmq.POLLIN):
            return None
        parts = dealer.recv_multipart()
        if len(parts) < 3:
            return None
        response = EvidenceResponse.model_validate_json(parts[-2])
        return response, bytes(parts[-1])
    finally:
        dealer.close()
