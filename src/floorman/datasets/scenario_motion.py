"""Motion primitives of the scenario engine: hand tracks, sliding cards, and where things rest in a zone.

All positions are table millimetres (see `floorman.core.layout`); times are seconds, and the frame at which a
state change shows is `frame_of(t)`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from floorman.core.cards import Card
from floorman.core.geometry import points_in_polygon, polygon_centroid
from floorman.core.layout import TableLayout, ZoneKind
from floorman.datasets.scenario import FPS
from floorman.datasets.scene import CardObject, ChipStack, DealerButton, HandObject, HandPose

CHIP_PITCH_MM = 42.0
DECK_ID = 1
BUTTON_ID = 2
MAX_PILE = 20
Point3 = tuple[float, float, float]


def frame_of(t: float) -> int:
    """The first frame that shows a change happening at time t."""
    return max(0, math.ceil(t * FPS - 1e-6))


def smoothstep(u: float) -> float:
    u = min(1.0, max(0.0, u))
    return u * u * (3.0 - 2.0 * u)


def unit(dx: float, dy: float) -> tuple[float, float]:
    norm = math.hypot(dx, dy) or 1.0
    return dx / norm, dy / norm


@dataclass(frozen=True, slots=True)
class Key:
    """The palm of a hand at time t (seconds)."""

    t: float
    x: float
    y: float
    z: float = 40.0


@dataclass(frozen=True, slots=True)
class Carry:
    """Objects held under the palm from frame f0 (included) to f1 (excluded)."""

    f0: int
    f1: int
    piles: tuple[tuple[int, ...], ...] = ()
    card: CardObject | None = None
    button: bool = False


@dataclass(frozen=True)
class HandTrack:
    """One forearm and hand following palm keyframes, reaching from `shoulder` (beyond the rail)."""

    id: int
    seat: int | None
    shoulder: tuple[float, float]
    keys: tuple[Key, ...]
    pose: HandPose = HandPose.FLAT
    carries: tuple[Carry, ...] = ()
    sleeve_rgb: tuple[int, int, int] | None = (40, 50, 90)
    skin_rgb: tuple[int, int, int] = (224, 172, 140)

    @property
    def f0(self) -> int:
        return frame_of(self.keys[0].t)

    @property
    def f1(self) -> int:
        return frame_of(self.keys[-1].t)

    def palm(self, t: float) -> Point3:
        keys = self.keys
        if t <= keys[0].t:
            return keys[0].x, keys[0].y, keys[0].z
        for a, b in itertools.pairwise(keys):
            if t <= b.t:
                u = smoothstep((t - a.t) / (b.t - a.t)) if b.t > a.t else 1.0
                return a.x + (b.x - a.x) * u, a.y + (b.y - a.y) * u, a.z + (b.z - a.z) * u
        last = keys[-1]
        return last.x, last.y, last.z

    def objects(self, frame: int) -> tuple[HandObject, list[ChipStack], list[CardObject], list[DealerButton]]:
        x, y, z = self.palm(frame / FPS)
        dx, dy = unit(x - self.shoulder[0], y - self.shoulder[1])
        wrist = (x - dx * 95.0, y - dy * 95.0, z + 12.0)
        elbow = (wrist[0] - dx * 300.0, wrist[1] - dy * 300.0, wrist[2] + 160.0)
        holding = [c for c in self.carries if c.f0 <= frame < c.f1]
        pose = HandPose.CUPPED if holding else self.pose
        hand = HandObject(id=self.id, elbow=elbow, wrist=wrist, seat=self.seat, pose=pose,
                          skin_rgb=self.skin_rgb, sleeve_rgb=self.sleeve_rgb)
        chips: list[ChipStack] = []
        cards: list[CardObject] = []
        buttons = [DealerButton(id=BUTTON_ID, x=x, y=y) for carry in holding if carry.button]
        for carry in holding:
            for index, pile in enumerate(carry.piles):
                ox, oy = _cluster_offset(index)
                chips.append(ChipStack(id=self.id * 16 + 100_000 + index, x=x + ox, y=y + oy, chips=pile, z=3.0))
            if carry.card is not None:
                cards.append(CardObject(id=carry.card.id, card=carry.card.card, face_up=carry.card.face_up,
                                        x=x, y=y, angle_deg=carry.card.angle_deg, z=5.0))
        return hand, chips, cards, buttons

    def first_frame(self, f_from: int, f_to: int, *, inside: bool, polygon: np.ndarray) -> int:
        """First frame in [f_from, f_to] where the palm is inside (or outside) the polygon; f_to if none."""
        frames = list(range(f_from, f_to + 1))
        points = np.array([self.palm(frame / FPS)[:2] for frame in frames])
        hits = np.flatnonzero(points_in_polygon(points, polygon) == inside)
        return frames[int(hits[0])] if hits.size else f_to


def _cluster_offset(index: int) -> tuple[float, float]:
    if index == 0:
        return 0.0, 0.0
    ring = [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1), (1, -1), (-1, 1)]
    rx, ry = ring[(index - 1) % len(ring)]
    scale = CHIP_PITCH_MM * (1 + (index - 1) // len(ring))
    return rx * scale, ry * scale


@dataclass(frozen=True, slots=True)
class CardSlide:
    """A card gliding over the felt from one place to another, visible on frames [f0, f1)."""

    card: CardObject
    t0: float
    t1: float
    to: tuple[float, float, float]  # x, y, angle

    @property
    def f0(self) -> int:
        return frame_of(self.t0)

    @property
    def f1(self) -> int:
        return frame_of(self.t1)

    def object(self, frame: int) -> CardObject:
        u = smoothstep((frame / FPS - self.t0) / max(1e-6, self.t1 - self.t0))
        c = self.card
        x = c.x + (self.to[0] - c.x) * u
        y = c.y + (self.to[1] - c.y) * u
        angle = c.angle_deg + (self.to[2] - c.angle_deg) * u
        return CardObject(id=c.id, card=c.card, face_up=c.face_up, x=x, y=y, angle_deg=angle,
                          z=0.5 + 8.0 * math.sin(math.pi * u))


@dataclass
class ZoneGeometry:
    """Where piles of chips and cards rest in each zone of a layout."""

    layout: TableLayout
    _slots: dict[str, list[tuple[float, float]]] = field(default_factory=dict)

    @cached_property
    def chip_zone_index(self) -> dict[str, int]:
        return {zone.name: i for i, zone in enumerate(self.layout.all_zones)}

    def axes(self, zone_name: str) -> tuple[tuple[float, float], tuple[float, float]]:
        """(along, toward-centre) unit vectors of a zone: seat zones face the table centre."""
        zone = self.layout.zone(zone_name)
        if zone.seat is None:
            return (1.0, 0.0), (0.0, 1.0)
        v = self.layout.seat_direction(zone.seat)
        return (-v[1], v[0]), v

    def centre(self, zone_name: str) -> tuple[float, float]:
        return polygon_centroid(self.layout.zone(zone_name).points)

    def slots(self, zone_name: str) -> list[tuple[float, float]]:
        """Chip-pile positions inside the zone, nearest to its centre first."""
        if zone_name not in self._slots:
            self._slots[zone_name] = self._make_slots(zone_name)
        return self._slots[zone_name]

    def _make_slots(self, zone_name: str) -> list[tuple[float, float]]:
        polygon = self.layout.zone(zone_name).points
        cx, cy = self.centre(zone_name)
        (ux, uy), (vx, vy) = self.axes(zone_name)
        grid_j, grid_i = np.meshgrid(np.arange(-4, 5), np.arange(-12, 13), indexing="ij")
        jj, ii = grid_j.ravel(), grid_i.ravel()
        xs = cx + ii * CHIP_PITCH_MM * ux + jj * CHIP_PITCH_MM * vx
        ys = cy + ii * CHIP_PITCH_MM * uy + jj * CHIP_PITCH_MM * vy
        angles = np.linspace(0, 2 * math.pi, 8, endpoint=False)
        rim_x = np.concatenate([xs[:, None], xs[:, None] + 19 * np.cos(angles)[None, :]], axis=1)
        rim_y = np.concatenate([ys[:, None], ys[:, None] + 19 * np.sin(angles)[None, :]], axis=1)
        inside = points_in_polygon(np.column_stack([rim_x.ravel(), rim_y.ravel()]), polygon).reshape(len(xs), -1)
        fits: list[bool] = [bool(v) for v in np.all(inside, axis=1)]
        candidates = [(abs(int(j)) * 100 + abs(int(i)) + (0.5 if i < 0 else 0.0), float(x), float(y))
                      for i, j, x, y, ok in zip(ii, jj, xs, ys, fits, strict=True) if ok]
        candidates.sort()
        if not candidates:
            return [(cx, cy)]
        return [(x, y) for _, x, y in candidates]

    def slot(self, zone_name: str, index: int) -> tuple[float, float]:
        slots = self.slots(zone_name)
        if index < len(slots):
            return slots[index]
        base = slots[index % len(slots)]
        return base[0] + 6.0 * (index // len(slots)), base[1] + 6.0 * (index // len(slots))

    def card_angle(self, seat: int) -> float:
        dx, dy = self.layout.seat_direction(seat)
        return math.degrees(math.atan2(dx, -dy))

    def hole_spot(self, seat: int, index: int) -> tuple[float, float, float]:
        cx, cy = self.centre(f"{ZoneKind.HOLE.value}_{seat}")
        (ux, uy), _ = self.axes(f"hole_{seat}")
        offset = -18.0 if index == 0 else 18.0
        return cx + ux * offset, cy + uy * offset, self.card_angle(seat) + (-4.0 if index == 0 else 5.0)

    def board_spot(self, index: int) -> tuple[float, float, float]:
        cx, cy = self.centre("board")
        return cx + (index - 2) * 74.0, cy, 0.0

    def deck_spot(self) -> tuple[float, float]:
        cx, cy = self.centre("deck")
        return cx - 30.0, cy

    def deck_side_spot(self, index: int) -> tuple[float, float, float]:
        cx, cy = self.centre("deck")
        return cx + 34.0, cy - 45.0 + 90.0 * index, 0.0

    def button_spot(self, seat: int) -> tuple[float, float]:
        """Beside the seat's hole cards, clear of every zone but the seat's own hole zone."""
        return self._free_spot(seat, along=(-110, -130, -150, -90, 110, 130, 150), radius=34.0,
                               allowed=(None, f"hole_{seat}"))

    def tap_spot(self, seat: int) -> tuple[float, float]:
        """On the felt in the seat's hole zone, beside the cards."""
        return self._free_spot(seat, along=(85, 75, 65, -75), radius=20.0, allowed=(f"hole_{seat}",))

    def _free_spot(self, seat: int, *, along: tuple[int, ...], radius: float,
                   allowed: tuple[str | None, ...]) -> tuple[float, float]:
        cx, cy = self.centre(f"hole_{seat}")
        (ux, uy), (vx, vy) = self.axes(f"hole_{seat}")
        angles = np.linspace(0, 2 * math.pi, 8, endpoint=False)
        for across in (0.0, -25.0, 25.0, -50.0):
            for k in along:
                x, y = cx + ux * k + vx * across, cy + uy * k + vy * across
                rim = np.column_stack([x + radius * np.cos(angles), y + radius * np.sin(angles)])
                names = self.layout.zone_names_at(np.vstack([[x, y], rim]))
                if all(name in allowed for name in names) and self.layout.on_table(rim).all():
                    return x, y
        return cx + ux * along[0], cy + uy * along[0]

    def muck_spot(self, index: int) -> tuple[float, float, float]:
        cx, cy = self.centre("muck")
        rng = np.random.default_rng(index + 17)
        return cx + float(rng.uniform(-35, 35)), cy + float(rng.uniform(-30, 30)), float(rng.uniform(-40, 40))

    def outside(self, seat: int | None, *, distance: float = 220.0) -> tuple[float, float]:
        """A point beyond the rail behind a seat (or the dealer), where a hand comes from."""
        x, y = self.layout.dealer_position if seat is None else self.layout.seat(seat).position
        dx, dy = unit(x, y)
        return x + dx * distance, y + dy * distance


def piles_of(chips: list[int]) -> list[tuple[int, ...]]:
    """Sorted columns of at most MAX_PILE chips, one denomination per column, highest first."""
    piles: list[tuple[int, ...]] = []
    for denom in sorted(set(chips), reverse=True):
        count = chips.count(denom)
        while count > 0:
            n = min(MAX_PILE, count)
            piles.append((denom,) * n)
            count -= n
    return piles


def card_object(card: Card, *, face_up: bool, x: float, y: float, angle: float) -> CardObject:
    return CardObject(id=100 + card.index, card=card, face_up=face_up, x=x, y=y, angle_deg=angle)
