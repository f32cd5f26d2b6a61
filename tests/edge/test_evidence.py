"""The evidence ring buffer: bounded by bytes and age, fetched by frame number over the replay socket."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from floorman.edge.broker import Broker
from floorman.edge.bus import ReplayTarget
from floorman.edge.evidence import EvidenceBuffer, encode_jpeg, fetch_evidence
from floorman.edge.publisher import EventPublisher
from floorman.edge.spool import Spool
from tests.edge.helpers import KEY, LOOPBACK


def test_the_buffer_keeps_the_newest_frames_within_its_byte_bound() -> None:
    buffer = EvidenceBuffer(max_bytes=1000, max_age_s=100.0)
    for frame in range(10):
        buffer.add(frame, frame / 30, bytes(300))
    assert buffer.size_bytes <= 1000
    assert buffer.bounds() == (7, 9)
    assert buffer.stats.evicted == 7


def test_the_buffer_forgets_frames_older_than_its_age_bound() -> None:
    buffer = EvidenceBuffer(max_bytes=10**6, max_age_s=1.0)
    for frame in range(100):
        buffer.add(frame, frame / 30, b"x")
    oldest, newest = buffer.bounds() or (None, None)
    assert newest == 99 and oldest == 69  # 30 frames = 1 s


def test_get_answers_the_exact_frame_or_the_nearest() -> None:
    buffer = EvidenceBuffer()
    for frame in (10, 20, 30):
        buffer.add(frame, frame / 30, bytes([frame]))
    assert (buffer.get(20) or pytest.fail()).jpeg == bytes([20])
    assert (buffer.get(24) or pytest.fail()).frame == 20
    assert (buffer.get(26) or pytest.fail()).frame == 30
    assert buffer.get(26, nearest=False) is None


def test_bad_bounds_and_oversized_frames_are_refused() -> None:
    with pytest.raises(ValueError, match="max_bytes"):
        EvidenceBuffer(max_bytes=0)
    with pytest.raises(ValueError, match="at most 10 bytes"):
        EvidenceBuffer(max_bytes=10).add(0, 0.0, bytes(11))


def test_evidence_is_fetched_by_frame_over_the_replay_socket(broker: Broker) -> None:
    image = np.zeros((72, 128, 3), dtype=np.uint8)
    image[20:50, 30:90] = (0, 0, 255)
    buffer = EvidenceBuffer()
    for frame in range(5):
        buffer.add(frame, frame / 30, encode_jpeg(image))
    spool = Spool()
    with EventPublisher(KEY, broker=broker.frontend_endpoint, replay=LOOPBACK, spool=spool,
                        evidence=buffer) as publisher:
        target = ReplayTarget(publisher.replay_endpoint)
        answer = fetch_evidence(target, KEY, 3)
        missing = fetch_evidence(target, KEY, 3, timeout=1.0)
    spool.close()
    assert answer is not None and missing is not None
    header, jpeg = answer
    assert (header.frame, header.size, header.oldest_frame, header.newest_frame) == (3, len(jpeg), 0, 4)
    decoded = cv2.imdecode(np.frombuffer(jpeg, dtype=np.uint8), cv2.IMREAD_COLOR)
    assert decoded.shape == image.shape and decoded[35, 60, 2] > 200
    assert buffer.stats.served == 2
