"""Chips laid out as the scenario videos lay them: each seat's stacks side by side, touching.

`random_scene` scatters stacks over a zone; players keep one stack per denomination side by side on the scenarios'
slots (`ZoneGeometry.slot`: 42 mm apart for 39 mm chips), 1-20 chips tall. `seat_chips` draws such a layout for a
scene; `benchmarks/chips.py --scene seats` measures the chip recogniser on it and `floorman datasets render
--seat-chips P` trains the detector on it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from floorman.core.geometry import points_in_polygon
from floorman.datasets.scenario_motion import ZoneGeometry
from floorman.datasets.scene import ChipStack, Scene

SEAT_ZONE_PREFIXES = ("stack_", "bet_")
FIRST_SEAT_ID = 50_000  # ids of seat stacks: above any `IdSource` id of a random scene
TOUCHING_MM = 45.0  # stack centres this close touch (39 mm chips on the scenarios' 42 mm slots)


def seat_chips(scene: Scene, rng: np.random.Generator) -> list[ChipStack]:
    """Chips as the scenario videos lay them out (`timeline`'s slots): per seat (each with probability 0.8) a stack
    zone holding 1-5 stacks of distinct denominations side by side, highest first, 1-20 chips each, and (probability
    0.6) a bet of 1-6 chips alone."""
    geometry = ZoneGeometry(scene.layout)
    values = sorted((d.value for d in scene.chipset.denominations), reverse=True)
    stacks: list[ChipStack] = []
    for seat in scene.layout.seat_numbers:
        piles: list[tuple[str, tuple[int, ...]]] = []
        if rng.random() < 0.8:
            chosen = sorted(rng.choice(values, size=int(rng.integers(1, min(5, len(values)) + 1)), replace=False))
            piles += [(f"stack_{seat}", (int(v),) * int(rng.integers(1, 21))) for v in reversed(chosen)]
        if rng.random() < 0.6:
            piles.append((f"bet_{seat}", (int(rng.choice(values)),) * int(rng.integers(1, 7))))
        slot_of: Counter[str] = Counter()
        for zone, pile in piles:
            x, y = geometry.slot(zone, slot_of[zone])
            stacks.append(ChipStack(id=FIRST_SEAT_ID + 100 * seat + len(stacks), x=x, y=y, chips=pile,
                                    angle_deg=(slot_of[zone] * 37.0) % 360))
            slot_of[zone] += 1
    return stacks


def off_seats(scene: Scene) -> list[ChipStack]:
    """The scene's stacks outside every seat's stack and bet zone (the pot, loose chips)."""
    if not scene.chips:
        return []
    zones = [z.points for z in scene.layout.all_zones if z.name.startswith(SEAT_ZONE_PREFIXES)]
    xy = np.array([(s.x, s.y) for s in scene.chips], dtype=np.float64)
    inside = np.zeros(len(xy), dtype=bool)
    for polygon in zones:
        inside |= points_in_polygon(xy, polygon)
    return [s for s, on_seat in zip(scene.chips, inside, strict=True) if not on_seat]


def lay_seat_chips(scene: Scene, rng: np.random.Generator) -> None:
    """Replace the stacks on the seats' stack and bet zones by `seat_chips`' layout (the pot's chips stay)."""
    scene.chips = [*off_seats(scene), *seat_chips(scene, rng)]


def touching(positions_mm: Sequence[tuple[float, float]], *, mm: float = TOUCHING_MM) -> list[bool]:
    """Per stack centre (table mm), whether another stack's centre lies within `mm`: the two touch."""
    if not mm > 0:
        raise ValueError(f"expected a distance > 0 mm, got {mm}")
    if len(positions_mm) < 2:
        return [False] * len(positions_mm)
    xy = np.asarray(positions_mm, dtype=np.float64).reshape(-1, 2)
    distance = np.hypot(*(xy[:, None, :] - xy[None, :, :]).transpose(2, 0, 1))
    np.fill_diagonal(distance, np.inf)
    return [bool(d <= mm) for d in distance.min(axis=1)]
