"""The scene's light as a gain field on the rendered image: colour temperature, intensity and a linear gradient
across the table (in table millimetres, so it stays put when the camera moves)."""

from __future__ import annotations

import math

import numpy as np

from floorman.core.geometry import apply_homography, invert_homography
from floorman.datasets.camera import Camera
from floorman.datasets.effects import GAIN_GRID, NEUTRAL_K, GainField, temperature_gains
from floorman.datasets.render_draw import FloatImage
from floorman.datasets.scene import Lighting

_GRADIENT_SPAN_MM = 2400.0


def table_gradient(camera: Camera, *, direction_deg: float, strength: float) -> FloatImage:
    """A coarse gain map: 1 on the bright side of the table, 1 - strength on the far side, along
    `direction_deg` in the table frame."""
    gw, gh = GAIN_GRID
    us = (np.arange(gw) + 0.5) * camera.width / gw
    vs = (np.arange(gh) + 0.5) * camera.height / gh
    grid = np.stack(np.meshgrid(us, vs), axis=-1).reshape(-1, 2)
    mm = apply_homography(invert_homography(camera.table_homography()), grid)
    t = math.radians(direction_deg)
    along = (mm[:, 0] * math.cos(t) + mm[:, 1] * math.sin(t)) / _GRADIENT_SPAN_MM + 0.5
    result: FloatImage = (1.0 - strength * np.clip(along, 0.0, 1.0)).reshape(gh, gw).astype(np.float32)
    return result


def lighting_gain(camera: Camera, lighting: Lighting) -> GainField:
    gains = (1.0, 1.0, 1.0)
    if abs(lighting.colour_temperature_k - NEUTRAL_K) > 1.0:
        gains = temperature_gains(lighting.colour_temperature_k)
    gains = (gains[0] * lighting.intensity, gains[1] * lighting.intensity, gains[2] * lighting.intensity)
    spatial = None
    if lighting.gradient_strength > 0:
        spatial = table_gradient(camera, direction_deg=lighting.gradient_direction_deg,
                                 strength=lighting.gradient_strength)
    return GainField(gains, spatial)
