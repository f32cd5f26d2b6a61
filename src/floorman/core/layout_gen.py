"""Generate racetrack table layouts (the shipped `oval9` comes from `racetrack_layout_data()`).

Zones are built in (u, d) coordinates: u runs along the outline (arc length in mm, counter-clockwise from
the +x end), d is the depth inward from the outline. For a racetrack the map (u, d) -> point is one-to-one
for d below the end radius, so seat sectors over disjoint u ranges never overlap.
"""

from __future__ import annotations

import math
from typing import Any

_RAIL_EDGE = 60.0
_STACK = (70.0, 185.0)
_HOLE = (190.0, 290.0)
_BET_LINE = 300.0
_BET = (310.0, 420.0)


class _Racetrack:
    def __init__(self, length: float, width: float) -> None:
        self.radius = width / 2.0
        self.half = (length - width) / 2.0
        self.straight = 2.0 * self.half
        self.arc = math.pi * self.radius
        self.perimeter = 2.0 * self.straight + 2.0 * self.arc

    def point(self, u: float, depth: float) -> tuple[float, float]:
        """The point at arc length u (from the bottom-right end of the lower straight, CCW) and depth."""
        u %= self.perimeter
        r = self.radius - depth
        if u < self.arc:  # right half-disc, from angle -90 to +90
            a = -math.pi / 2 + u / self.radius
            return self.half + r * math.cos(a), r * math.sin(a)
        u -= self.arc
        if u < self.straight:  # top straight, right to left
            return self.half - u, r
        u -= self.straight
        if u < self.arc:  # left half-disc, from +90 to +270
            a = math.pi / 2 + u / self.radius
            return -self.half + r * math.cos(a), r * math.sin(a)
        u -= self.arc
        return -self.half + u, -r  # bottom straight, left to right

    def band(self, u0: float, u1: float, d0: float, d1: float, steps: int = 6) -> list[list[float]]:
        outer = [self.point(u0 + (u1 - u0) * i / steps, d0) for i in range(steps + 1)]
        inner = [self.point(u1 - (u1 - u0) * i / steps, d1) for i in range(steps + 1)]
        return [[round(x, 1), round(y, 1)] for x, y in outer + inner]

    def line(self, u0: float, u1: float, depth: float, steps: int = 6) -> list[list[float]]:
        return [[round(x, 1), round(y, 1)] for x, y in
                (self.point(u0 + (u1 - u0) * i / steps, depth) for i in range(steps + 1))]


def _rect(cx: float, cy: float, w: float, h: float) -> list[list[float]]:
    return [[cx - w / 2, cy - h / 2], [cx + w / 2, cy - h / 2], [cx + w / 2, cy + h / 2], [cx - w / 2, cy + h / 2]]


def racetrack_layout_data(*, name: str = "oval9", seats: int = 9, length: float = 2400.0,
                          width: float = 1200.0) -> dict[str, Any]:
    """A layout mapping (ready for YAML) of a racetrack table with `seats` seats and a dealer at -y."""
    if not 2 <= seats <= 10:
        raise ValueError(f"seats: expected 2..10, got {seats}")
    track = _Racetrack(length, width)
    dealer_u = track.arc + track.straight + track.arc + track.half  # middle of the bottom straight
    dealer_gap = track.perimeter / (seats + 1) * 1.2
    slot = (track.perimeter - dealer_gap) / seats
    seat_specs = []
    for i in range(seats):
        # Seats run clockwise seen from above, i.e. toward decreasing u, starting at the dealer's left.
        centre_u = dealer_u - dealer_gap / 2 - slot * (i + 0.5)
        half = slot / 2 - 25.0
        px, py = track.point(centre_u, -40.0)
        seat_specs.append({
            "number": i + 1,
            "position": [round(px, 1), round(py, 1)],
            "stack": {"polygon": track.band(centre_u - half * 0.8, centre_u + half * 0.8, *_STACK)},
            "hole": {"polygon": track.band(centre_u - half * 0.55, centre_u + half * 0.55, *_HOLE)},
            "bet": {"polygon": track.band(centre_u - half * 0.8, centre_u + half * 0.8, *_BET)},
            "bet_line": track.line(centre_u - half, centre_u + half, _BET_LINE),
        })
    dx, dy = track.point(dealer_u, -40.0)
    inner_half_height = width / 2 - _BET[1]
    deck_x, deck_y = track.point(dealer_u - 120.0, 190.0)
    muck_x, muck_y = track.point(dealer_u + 170.0, 200.0)
    return {
        "name": name,
        "description": f"{seats}-seat racetrack table, {length:.0f} x {width:.0f} mm playing surface, "
                       "dealer at the middle of the -y long side.",
        "outline": {"racetrack": {"length": length, "width": width}},
        "rail_width_mm": 120.0,
        "rail_edge_band_mm": _RAIL_EDGE,
        "dealer_position": [round(dx, 1), round(dy, 1)],
        "seats": seat_specs,
        "zones": {
            "pot": {"polygon": _rect(0.0, -inner_half_height / 2 + 10, 560.0, inner_half_height - 40)},
            "board": {"polygon": _rect(0.0, inner_half_height / 2 - 10, 440.0, inner_half_height - 40)},
            "muck": {"polygon": _rect(round(muck_x, 1), round(muck_y, 1), 200.0, 180.0)},
            "deck": {"polygon": _rect(round(deck_x, 1), round(deck_y, 1), 140.0, 180.0)},
            "dealer_tray": {"polygon": _rect(round(dx, 1), round(-width / 2 + 45.0, 1), 420.0, 80.0)},
        },
        "marker_dictionary": "DICT_4X4_50",
        "markers": _markers(length, width),
    }


def _markers(length: float, width: float) -> list[dict[str, Any]]:
    """Six 100 mm calibration markers spread over the surface (two rows of three)."""
    x = round(length / 2 - width / 2 + width * 0.29, 1)
    y = round(width * 0.23, 1)
    spots = [(-x, y), (0.0, y), (x, y), (-x, -y), (0.0, -y), (x, -y)]
    return [{"id": i, "center": [sx, sy], "size_mm": 100.0, "angle": 0.0} for i, (sx, sy) in enumerate(spots)]
