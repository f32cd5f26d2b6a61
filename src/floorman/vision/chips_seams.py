"""A stack's count from the seams of its side: evidence to add to its silhouette's.

Where a stack's side shows 2.5 pixels or more per chip, the chips' seams and edge spots make its side
periodic along the stack's axis: sampled on a few lines from the base's rim to the top's rim (the silhouette's
measured centres, so a lean is followed), a stack of n chips shows n cycles. The power of the side's profile at
each whole number of cycles is evidence for that count, independent of the camera's height and of the stack's
lean, which is what limits the count from the offset alone (`chips_refine`). It is added to the silhouette's
log-likelihood with a weight that keeps the count's confidence calibrated (`benchmarks/chips.py --size 3840x2160`,
detector boxes, seed 94035 / fresh seed 94038: count exact 76.7 -> 77.3 % / 70.4 -> 74.6 %, counts given
confidence >= 0.8 28 -> 40 % / 20 -> 32 % of stacks, 95.4 / 93.5 % of those exact; truth boxes 84.8 -> 85.4 % /
78.1 -> 79.9 %; with twice the weight, only 91 % of the detector boxes' >= 0.8 counts were exact). At
1280x720 few sides show 2.5 px per chip: unchanged there.
"""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt

from floorman.core.geometry import FloatArray
from floorman.vision.chips_geometry import TableCamera, side_points

# Thinner sides hold no countable seams: at 2-2.5 px per chip (1280x720 frames, close stacks) seams gave sure
# counts one chip off (detector boxes, seeds 96001/96002 at 1280x720: counts of 0.8+ confidence 82 -> 87 % exact
# with 2.5; at 3840x2160, seed 94035, count exact 70.0 -> 69.3 %).
MIN_PX_PER_CHIP = 2.5
WEIGHT = 1.0  # log-evidence per log of power over the spectrum's median
_LINES_DEG = (-50.0, -35.0, -20.0, -10.0, 0.0, 10.0, 20.0, 35.0, 50.0)  # about the side facing the camera
_SAMPLES_PER_PX = 8
_DETREND = 33  # samples of the moving average removed from each profile (about 4 px): shading, not seams
_MIN_BAND_PX = 3.0
_GREY = np.array([0.114, 0.587, 0.299])  # BGR weights of the luma


def seam_log_evidence(image: npt.NDArray[np.uint8], camera: TableCamera, *, base_px: FloatArray, top_px: FloatArray,
                      radius_mm: float, max_count: int) -> FloatArray | None:
    """(max_count,) log-evidence of counts 1..max_count from the side's periodicity, up to a constant; None when
    the band between base and top is too short to hold seams."""
    power = side_spectrum(image, camera, base_px=base_px, top_px=top_px, radius_mm=radius_mm, max_count=max_count)
    if power is None:
        return None
    result: FloatArray = WEIGHT * np.log(np.maximum(power, 1e-12) / max(float(np.median(power)), 1e-12))
    return result


def side_spectrum(image: npt.NDArray[np.uint8], camera: TableCamera, *, base_px: FloatArray, top_px: FloatArray,
                  radius_mm: float, max_count: int) -> FloatArray | None:
    """(max_count,) power of the side's brightness profile at 1..max_count cycles between the base's rim and the
    top's, summed over lines round the side facing the camera."""
    offset = np.asarray(top_px, dtype=np.float64) - np.asarray(base_px, dtype=np.float64)
    length = float(np.hypot(offset[0], offset[1]))
    if length < _MIN_BAND_PX:
        return None
    base_mm = camera.to_plane(np.asarray(base_px, dtype=np.float64)[None, :], z=0.0)[0]
    rim = side_points(camera, base_mm, radius_mm=radius_mm, angles_deg=_LINES_DEG, heights_mm=(0.0,))[0]
    starts = camera.project(rim)  # (L, 2)
    n = int(length * _SAMPLES_PER_PX) + 1
    s = np.linspace(0.0, 1.0, n)
    points = (starts[:, None, :] + s[None, :, None] * offset[None, None, :]).astype(np.float32)
    sampled = cv2.remap(image, points[..., 0], points[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    profiles = sampled.astype(np.float64) @ _GREY  # (L, n)
    window = min(_DETREND, n // 2 * 2 - 1)
    if window >= 3:
        kernel = np.ones(window) / window
        profiles = profiles - np.stack([np.convolve(p, kernel, mode="same") for p in profiles])
    cycles = np.arange(1, max_count + 1)
    basis = np.exp(-2j * np.pi * cycles[:, None] * s[None, :])
    spectrum: FloatArray = (np.abs((profiles * np.hanning(n)[None, :]) @ basis.T) ** 2).sum(axis=0)
    return spectrum
