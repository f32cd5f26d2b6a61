"""Camera-side image effects applied after rendering: white balance, exposure, a lighting gradient, glare,
focus and motion blur, sensor noise and JPEG re-compression. None of them touches the instance mask.

`Effects()` does nothing; `Effects.random(rng)` draws a realistic mix. The same helpers apply the scene's
`Lighting` (colour temperature, intensity, gradient, glare spots) inside the renderer.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import cv2
import numpy as np

from floorman.datasets.render_draw import FloatImage, ImageU8, f32, u8

GlossLookup = Callable[[slice, slice], FloatImage]  # (rows, columns) -> how shiny each pixel is, 0..1
NEUTRAL_K = 4500.0


@dataclass(frozen=True, slots=True)
class ImageGlare:
    """A specular highlight in image coordinates (fractions of width and height), strongest on glossy objects."""

    x: float
    y: float
    radius: float  # fraction of the image diagonal
    strength: float  # 0..1


@dataclass(frozen=True, slots=True)
class PixelGlare:
    """A glare spot already placed in pixels (the scene's lights, projected by the renderer)."""

    centre_px: tuple[float, float]
    radius_px: float
    strength: float


@dataclass(frozen=True, slots=True)
class Effects:
    colour_temperature_k: float | None = None  # white-balance error: the light's temperature, NEUTRAL_K = none
    intensity: float = 1.0  # exposure gain
    gradient_direction_deg: float = 0.0
    gradient_strength: float = 0.0  # 0.3 = 30 % darker on one side of the image
    glare: tuple[ImageGlare, ...] = ()
    focus_blur_sigma_px: float = 0.0
    motion_blur_px: float = 0.0
    motion_blur_angle_deg: float = 0.0
    noise_sigma: float = 0.0  # Gaussian read noise, in 8-bit levels
    shot_noise: float = 0.0  # Poisson-like noise: sigma = sqrt(shot_noise * level)
    jpeg_quality: int | None = None

    def __post_init__(self) -> None:
        if self.jpeg_quality is not None and not 5 <= self.jpeg_quality <= 100:
            raise ValueError(f"effects: expected a JPEG quality in 5..100, got {self.jpeg_quality}")
        if self.intensity <= 0:
            raise ValueError(f"effects: expected a positive intensity, got {self.intensity}")

    @property
    def is_identity(self) -> bool:
        return self == Effects()

    @classmethod
    def random(cls, rng: np.random.Generator) -> Effects:
        """A realistic mix: most images get mild colour and exposure shifts, noise and JPEG; some get blur."""
        glare = tuple(
            ImageGlare(x=float(rng.uniform(0.1, 0.9)), y=float(rng.uniform(0.1, 0.9)),
                       radius=float(rng.uniform(0.03, 0.12)), strength=float(rng.uniform(0.2, 0.7)))
            for _ in range(int(rng.choice([0, 0, 0, 1, 2])))
        )
        return cls(
            colour_temperature_k=float(rng.uniform(3200.0, 6500.0)) if rng.random() < 0.8 else None,
            intensity=float(np.exp(rng.normal(0.0, 0.18))),
            gradient_direction_deg=float(rng.uniform(0.0, 360.0)),
            gradient_strength=float(rng.uniform(0.0, 0.35)) if rng.random() < 0.6 else 0.0,
            glare=glare,
            focus_blur_sigma_px=float(rng.uniform(0.4, 2.0)) if rng.random() < 0.25 else 0.0,
            motion_blur_px=float(rng.uniform(2.0, 9.0)) if rng.random() < 0.12 else 0.0,
            motion_blur_angle_deg=float(rng.uniform(0.0, 180.0)),
            noise_sigma=float(rng.uniform(0.5, 5.0)),
            shot_noise=float(rng.uniform(0.0, 0.5)),
            jpeg_quality=int(rng.integers(55, 96)) if rng.random() < 0.85 else None,
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class GainField:
    """A multiplicative light field: per-channel gains (B, G, R) and an optional smooth map, at any coarse size,
    stretched over the image (see `GAIN_GRID`)."""

    gains: tuple[float, float, float] = (1.0, 1.0, 1.0)
    spatial: FloatImage | None = field(default=None, compare=False)


def kelvin_to_bgr(kelvin: float) -> tuple[float, float, float]:
    """The colour of a black body at `kelvin` (Tanner Helland's fit), as 0..1 B, G, R."""
    t = max(1000.0, min(40000.0, kelvin)) / 100.0
    r = 255.0 if t <= 66 else 329.698727446 * (t - 60) ** -0.1332047592
    g = 99.4708025861 * math.log(t) - 161.1195681661 if t <= 66 else 288.1221695283 * (t - 60) ** -0.0755148492
    b = 255.0 if t >= 66 else (0.0 if t <= 19 else 138.5177312231 * math.log(t - 10) - 305.0447927307)
    return (min(255.0, max(0.0, b)) / 255.0, min(255.0, max(0.0, g)) / 255.0, min(255.0, max(0.0, r)) / 255.0)


def temperature_gains(kelvin: float) -> tuple[float, float, float]:
    """Channel gains that shift a white-balanced image to a light of `kelvin` (NEUTRAL_K gives 1, 1, 1)."""
    light = kelvin_to_bgr(kelvin)
    neutral = kelvin_to_bgr(NEUTRAL_K)
    gains = [light[i] / max(neutral[i], 1e-6) for i in range(3)]
    mean = sum(gains) / 3.0
    return gains[0] / mean, gains[1] / mean, gains[2] / mean


GAIN_GRID = (48, 27)  # gain maps are smooth: kept at this size, stretched over the image when applied


def linear_gradient(width: int, height: int, *, direction_deg: float, strength: float) -> FloatImage:
    """A coarse map from 1 (bright side) down to 1 - strength (dark side) along a direction in the image."""
    gw, gh = GAIN_GRID
    t = math.radians(direction_deg)
    scale = max(width, height)
    xs = ((np.arange(gw, dtype=np.float32) + 0.5) * width / gw - width / 2.0) / scale
    ys = ((np.arange(gh, dtype=np.float32) + 0.5) * height / gh - height / 2.0) / scale
    ramp = math.cos(t) * xs[None, :] + math.sin(t) * ys[:, None]
    span = float(ramp.max() - ramp.min()) or 1.0
    result: FloatImage = (1.0 - strength * (ramp - ramp.min()) / span).astype(np.float32)
    return result


def combine(first: GainField, second: GainField) -> GainField:
    gains = (first.gains[0] * second.gains[0], first.gains[1] * second.gains[1], first.gains[2] * second.gains[2])
    if first.spatial is None or second.spatial is None:
        spatial = first.spatial if second.spatial is None else second.spatial
    else:
        spatial = first.spatial * second.spatial
    return GainField(gains, spatial)


def apply_gain(image: ImageU8, gain: GainField) -> ImageU8:
    """The image times the gain field (saturating); the same array when the field is neutral."""
    if gain.spatial is None and all(abs(g - 1.0) < 1e-6 for g in gain.gains):
        return image
    if gain.spatial is None:
        lut = np.stack([np.clip(np.arange(256) * g + 0.5, 0, 255) for g in gain.gains], axis=1).astype(np.uint8)
        out = u8(cv2.LUT(image, lut.reshape(256, 1, 3)))
        return out
    # Fixed point (1/128 steps, gains below 2): an 8-bit stretch and multiply cost a fraction of float ones.
    coarse = gain.spatial[:, :, None] * np.asarray(gain.gains, dtype=np.float32)[None, None, :]
    fixed = np.clip(np.rint(coarse * 128.0), 0, 255).astype(np.uint8)
    factors = cv2.resize(fixed, (image.shape[1], image.shape[0]), interpolation=cv2.INTER_LINEAR)
    return u8(cv2.multiply(image, factors, scale=1.0 / 128.0))


def add_glare(image: ImageU8, *, centre_px: tuple[float, float], radius_px: float, strength: float,
              gloss: GlossLookup | None) -> None:
    """Wash a spot towards white, in place; `gloss` says how shiny each pixel is."""
    h, w = image.shape[:2]
    cx, cy = centre_px
    reach = 2.5 * radius_px
    x0, x1 = max(0, int(cx - reach)), min(w, int(cx + reach) + 1)
    y0, y1 = max(0, int(cy - reach)), min(h, int(cy + reach) + 1)
    if x1 <= x0 or y1 <= y0 or radius_px <= 0:
        return
    xs = (np.arange(x0, x1, dtype=np.float32) - cx) / radius_px
    ys = (np.arange(y0, y1, dtype=np.float32) - cy) / radius_px
    spot = np.exp(-(xs[None, :] ** 2 + ys[:, None] ** 2)) * strength
    if gloss is not None:
        spot = spot * gloss(slice(y0, y1), slice(x0, x1))
    sl = image[y0:y1, x0:x1].astype(np.float32)
    image[y0:y1, x0:x1] = (sl + (255.0 - sl) * spot[:, :, None]).astype(np.uint8)


def _motion_kernel(length: float, angle_deg: float) -> FloatImage:
    size = max(3, math.ceil(length) | 1)
    kernel = np.zeros((size, size), dtype=np.float32)
    c = size // 2
    t = math.radians(angle_deg)
    dx, dy = math.cos(t) * length / 2.0, math.sin(t) * length / 2.0
    cv2.line(kernel, (round(c * 16 - dx * 16), round(c * 16 - dy * 16)),
             (round(c * 16 + dx * 16), round(c * 16 + dy * 16)), 1.0, 1, cv2.LINE_AA, shift=4)
    total = float(kernel.sum())
    result: FloatImage = kernel / total if total > 0 else kernel
    return result


def _noise(image: ImageU8, effects: Effects, rng: np.random.Generator) -> ImageU8:
    """Read noise plus shot noise whose variance grows with the level. Drawn at half resolution (its level
    from a half-size copy of the image) and stretched: demosaicing and compression leave real sensor noise
    correlated over a couple of pixels."""
    h, w = image.shape[:2]
    size = ((w + 1) // 2, (h + 1) // 2)
    half = np.empty((size[1], size[0], 3), dtype=np.float32)
    cv2.setRNGSeed(int(rng.integers(0, 2**31 - 1)))  # cv2's generator is fast; seeded from ours, deterministic
    cv2.randn(half, np.zeros(1), np.full(1, 1.6))  # the stretch below smooths the amplitude by about 1.6
    if effects.shot_noise > 0:
        levels = np.arange(256, dtype=np.float32)
        lut = np.sqrt(effects.noise_sigma**2 + effects.shot_noise * levels).astype(np.float32)
        small = cv2.resize(image, size, interpolation=cv2.INTER_NEAREST)
        sigma = f32(cv2.LUT(cv2.cvtColor(small, cv2.COLOR_BGR2GRAY), lut))
        half *= sigma[:, :, None]
    else:
        half *= np.float32(effects.noise_sigma)
    noise = cv2.resize(half, (w, h), interpolation=cv2.INTER_LINEAR)
    return u8(cv2.add(image, noise, dtype=cv2.CV_8U))


def effects_gain(effects: Effects, *, width: int, height: int) -> GainField:
    """White balance, exposure and the image-space gradient of `effects` as one gain field."""
    gains = temperature_gains(effects.colour_temperature_k) if effects.colour_temperature_k else (1.0, 1.0, 1.0)
    gains = (gains[0] * effects.intensity, gains[1] * effects.intensity, gains[2] * effects.intensity)
    spatial = None
    if effects.gradient_strength > 0:
        spatial = linear_gradient(width, height, direction_deg=effects.gradient_direction_deg,
                                  strength=effects.gradient_strength)
    return GainField(gains, spatial)


def apply_effects(image: ImageU8, effects: Effects, *, rng: np.random.Generator, gloss: GlossLookup | None = None,
                  light: GainField | None = None, light_glare: tuple[PixelGlare, ...] = ()) -> ImageU8:
    """The image as the camera would deliver it. `gloss` weights glare per pixel (cards shine most); the
    scene's light (`light`, `light_glare`) is folded into the same pass as the effects' own gains."""
    h, w = image.shape[:2]
    gain = effects_gain(effects, width=w, height=h)
    out = apply_gain(image, gain if light is None else combine(light, gain))
    if out is image:
        out = image.copy()
    for glare in light_glare:
        add_glare(out, centre_px=glare.centre_px, radius_px=glare.radius_px, strength=glare.strength, gloss=gloss)
    diagonal = math.hypot(w, h)
    for spot in effects.glare:
        add_glare(out, centre_px=(spot.x * w, spot.y * h), radius_px=spot.radius * diagonal, strength=spot.strength,
                  gloss=gloss)
    if effects.focus_blur_sigma_px > 0:
        out = u8(cv2.GaussianBlur(out, (0, 0), effects.focus_blur_sigma_px))
    if effects.motion_blur_px >= 1.0:
        out = u8(cv2.filter2D(out, -1, _motion_kernel(effects.motion_blur_px, effects.motion_blur_angle_deg)))
    if effects.noise_sigma > 0 or effects.shot_noise > 0:
        out = _noise(out, effects, rng)
    if effects.jpeg_quality is not None:
        ok, encoded = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, effects.jpeg_quality])
        decoded = cv2.imdecode(encoded, cv2.IMREAD_COLOR) if ok else None
        if decoded is not None:
            out = u8(decoded)
    return out
