"""What the learned side reader sees of a chip under a stack's top: its rim's colours against each denomination's.

A lower chip's side is sampled at its mid-height on RIM_ANGLES_DEG round the rim from the side facing the camera
(`floorman.vision.chips.side_colours`), under the light its stack's top face was matched in (the illuminant: channel
gains that map nominal colours to observed ones). `side_features` turns those samples into what the net scores
each candidate denomination on: the samples brought back to nominal colours (divided by the illuminant and
SIDE_SHADE), their difference from the candidate's body and spot colours, in colour and in chromaticity, angle by
angle; and the candidate's own colours, spot count, the side's pixels per chip and the illuminant. The net
(`floorman models train-chip-sides`, read by `floorman.vision.chips_side_net`) scores each candidate alike, so it
reads any chip set, not only the one it was trained on: a club's colours come in as features.

Training and inference share this module (the models layer does not import vision), so the two turn samples into
features alike; the ONNX model carries FEATURES_KEY = FEATURES_VERSION, which the reader checks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from floorman.core.chips import ChipSet

RIM_ANGLES_DEG = tuple(float(a) for a in np.linspace(-70.0, 70.0, 29))  # round the rim from the side facing the camera
SIDE_SHADE = 0.78  # a chip's side, lit from above, looks about this much darker than its top
PER_ANGLE = 18  # features per angle (the last: whether the sample lies in the image)
PER_CANDIDATE = 11  # features per candidate denomination
FEATURES_KEY = "floorman_side_features"
FEATURES_VERSION = "1"
_MAX_NOMINAL = 3.0  # a sample brought back to nominal colours is clipped at this (0..1 nominal)
_MAX_PX = 10.0  # pixels per chip beyond this read as this many
_CHROMA_FLOOR = 0.05  # added to a colour's channel sum for its chromaticity (0..1 nominal)

Float32 = npt.NDArray[np.float32]


@dataclass(frozen=True)
class SideSample:
    """One stack's lower chips as the reader sees them, with their true denominations (a training sample).

    `rim` (chips, angles, 3) BGR and `valid` (chips, angles) as `side_colours` gives them, bottom first;
    `illuminant` (3,); `truth` (chips,) indices into the chip set whose nominal `bodies` and `spots` (D, 3: BGR
    0..255) and `spot_counts` (D,) are given; `lean` whether the side was sampled along the stack's lean."""

    rim: Float32
    valid: npt.NDArray[np.bool_]
    illuminant: Float32
    px_per_chip: float
    truth: npt.NDArray[np.int64]
    bodies: Float32
    spots: Float32
    spot_counts: Float32
    lean: bool


def chipset_colours(chipset: ChipSet) -> tuple[Float32, Float32, Float32]:
    """(D, 3) nominal body and (D, 3) spot colours (BGR 0..255) and (D,) spot counts of a chip set."""
    bodies = np.array([[d.rgb[2], d.rgb[1], d.rgb[0]] for d in chipset.denominations], dtype=np.float32)
    spots = np.array([[d.edge_rgb[2], d.edge_rgb[1], d.edge_rgb[0]] for d in chipset.denominations],
                     dtype=np.float32)
    counts = np.array([d.edge_spots for d in chipset.denominations], dtype=np.float32)
    return bodies, spots, counts


def side_features(rim: npt.ArrayLike, valid: npt.ArrayLike, illuminant: npt.ArrayLike, px_per_chip: npt.ArrayLike,
                  bodies: npt.ArrayLike, spots: npt.ArrayLike, spot_counts: npt.ArrayLike) -> tuple[Float32, Float32]:
    """The net's inputs for N chips and D candidate denominations: per angle (N, D, PER_ANGLE, angles) and per
    candidate (N, D, PER_CANDIDATE), float32. `rim` (N, A, 3) BGR 0..255, `valid` (N, A), `illuminant` (N, 3),
    `px_per_chip` (N,), `bodies` and `spots` (N, D, 3) nominal BGR 0..255, `spot_counts` (N, D)."""
    seen = np.asarray(valid, dtype=np.float32)
    light = np.asarray(illuminant, dtype=np.float32)
    sample = np.asarray(rim, dtype=np.float32) / (SIDE_SHADE * light[:, None, :] * 255.0 + 1e-6)
    sample = np.clip(sample, 0.0, _MAX_NOMINAL) * seen[..., None]  # (N, A, 3)
    body = np.asarray(bodies, dtype=np.float32) / 255.0
    spot = np.asarray(spots, dtype=np.float32) / 255.0
    observed = sample[:, None]  # (N, 1, A, 3)
    off_body, off_spot = observed - body[:, :, None], observed - spot[:, :, None]  # (N, D, A, 3)
    mask = np.broadcast_to(seen[:, None, :, None], (*off_body.shape[:-1], 1))
    per = np.concatenate([np.broadcast_to(observed, off_body.shape), off_body, off_spot,
                          np.linalg.norm(off_body, axis=-1, keepdims=True),
                          np.linalg.norm(off_spot, axis=-1, keepdims=True),
                          _chroma(observed) - _chroma(body[:, :, None]), _chroma(observed) - _chroma(spot[:, :, None]),
                          mask], axis=-1) * mask
    counts = np.asarray(spot_counts, dtype=np.float32)
    px = np.minimum(np.asarray(px_per_chip, dtype=np.float32), _MAX_PX) / 5.0
    candidate = np.concatenate([body, spot, counts[..., None] / 12.0,
                                np.broadcast_to(px[:, None, None], (*counts.shape, 1)),
                                np.broadcast_to(np.log(light + 1e-3)[:, None, :], body.shape)], axis=-1)
    return (np.ascontiguousarray(per.transpose(0, 1, 3, 2), dtype=np.float32),
            np.ascontiguousarray(candidate, dtype=np.float32))


def _chroma(colour: Float32) -> Float32:
    result: Float32 = colour / (colour.sum(axis=-1, keepdims=True) + _CHROMA_FLOOR)
    return result
