"""Placing random objects in table zones for training scenes: hole cards, board, muck pile, deck stub, chip
stacks, loose chips, the dealer button and reaching hands. Each helper appends to a `Scene` and takes ids
from an `IdSource`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from floorman.core.cards import Card
from floorman.core.geometry import FloatArray, points_in_polygon
from floorman.core.layout import TableLayout
from floorman.datasets.scene import CardObject, ChipStack, DealerButton, DeckStub, HandObject, HandPose, Scene

SKIN_TONES = ((241, 194, 167), (224, 172, 140), (198, 134, 99), (160, 105, 72), (112, 72, 48), (236, 188, 180))
SLEEVES = ((40, 50, 90), (20, 20, 22), (220, 220, 225), (120, 30, 35), (60, 80, 60), (150, 140, 120), (70, 70, 80))


@dataclass
class IdSource:
    next_id: int = 1

    def take(self) -> int:
        value = self.next_id
        self.next_id += 1
        return value


@dataclass
class Deal:
    """The deck being dealt from: cards come off a shuffled deck, one design and back for the scene."""

    order: list[int]
    design: int
    back: int
    size_mm: tuple[float, float]
    taken: int = 0
    chip_spots: list[tuple[float, float]] = field(default_factory=list)

    def next_card(self) -> Card:
        card = Card.from_index(self.order[self.taken % 52])
        self.taken += 1
        return card


def sample_in_polygon(rng: np.random.Generator, polygon: FloatArray, *, count: int = 1) -> FloatArray:
    """`count` uniform points inside a polygon (rejection sampling in its bounding box)."""
    lo, hi = polygon.min(axis=0), polygon.max(axis=0)
    found: list[FloatArray] = []
    for _ in range(50):
        pts = rng.uniform(lo, hi, size=(max(8, count * 4), 2))
        found.extend(pts[points_in_polygon(pts, polygon)])
        if len(found) >= count:
            break
    if len(found) < count:
        found.extend([polygon.mean(axis=0)] * (count - len(found)))
    return np.asarray(found[:count])


def facing_angle(layout: TableLayout, seat: int) -> float:
    """The card angle whose top edge points from the seat toward the table centre."""
    dx, dy = layout.seat_direction(seat)
    return math.degrees(math.atan2(-dx, dy))


def add_hole_cards(scene: Scene, rng: np.random.Generator, deal: Deal, ids: IdSource, *, seat: int) -> None:
    zone = scene.layout.zone(f"hole_{seat}").points
    (x, y), = sample_in_polygon(rng, zone)
    base = facing_angle(scene.layout, seat) + rng.normal(0.0, 12.0)
    face_up = bool(rng.random() < 0.2)
    spread = rng.uniform(12.0, 45.0)
    t = math.radians(base)
    for k in range(2):
        offset = (k - 0.5) * spread
        scene.cards.append(CardObject(
            id=ids.take(), card=deal.next_card(), face_up=face_up, x=float(x + offset * math.cos(t)),
            y=float(y + offset * math.sin(t)), angle_deg=float(base + rng.normal(0.0, 6.0)), z=0.3 * k,
            design=deal.design, back=deal.back, size_mm=deal.size_mm))


def add_board(scene: Scene, rng: np.random.Generator, deal: Deal, ids: IdSource) -> None:
    count = int(rng.choice([0, 3, 4, 5], p=[0.25, 0.3, 0.2, 0.25]))
    if count == 0:
        return
    cx, cy = scene.layout.zone("board").points.mean(axis=0)
    gap = deal.size_mm[0] + rng.uniform(3.0, 15.0)
    start = cx - gap * (count - 1) / 2.0
    for k in range(count):
        scene.cards.append(CardObject(
            id=ids.take(), card=deal.next_card(), face_up=True, x=float(start + k * gap + rng.normal(0, 2)),
            y=float(cy + rng.normal(0.0, 4.0)), angle_deg=float(rng.normal(0.0, 2.5)), design=deal.design,
            back=deal.back, size_mm=deal.size_mm))


def add_muck(scene: Scene, rng: np.random.Generator, deal: Deal, ids: IdSource) -> None:
    count = int(rng.integers(0, 14))
    cx, cy = scene.layout.zone("muck").points.mean(axis=0)
    for k in range(count):
        scene.cards.append(CardObject(
            id=ids.take(), card=deal.next_card(), face_up=bool(rng.random() < 0.08),
            x=float(cx + rng.normal(0.0, 25.0)), y=float(cy + rng.normal(0.0, 25.0)),
            angle_deg=float(rng.uniform(0.0, 360.0)), z=0.3 * k, design=deal.design, back=deal.back,
            size_mm=deal.size_mm))


def add_deck(scene: Scene, rng: np.random.Generator, deal: Deal, ids: IdSource) -> None:
    cx, cy = scene.layout.zone("deck").points.mean(axis=0)
    scene.decks.append(DeckStub(id=ids.take(), x=float(cx + rng.normal(0, 10)), y=float(cy + rng.normal(0, 10)),
                                count=int(rng.integers(8, 42)), angle_deg=float(rng.normal(0.0, 8.0)),
                                back=deal.back, size_mm=deal.size_mm))


def _free_spot(deal: Deal, x: float, y: float, *, clearance: float) -> bool:
    return all(math.hypot(x - px, y - py) >= clearance for px, py in deal.chip_spots)


def stack_values(scene: Scene, rng: np.random.Generator, *, count: int) -> tuple[int, ...]:
    values = scene.chipset.values
    if rng.random() < 0.2:
        return tuple(int(v) for v in rng.choice(values, size=count))
    main = int(rng.choice(values))
    if count > 3 and rng.random() < 0.25:
        other = int(rng.choice(values))
        split = int(rng.integers(1, count))
        return (main,) * split + (other,) * (count - split)
    return (main,) * count


def add_stacks(scene: Scene, rng: np.random.Generator, deal: Deal, ids: IdSource, *, zone: FloatArray,
               stacks: int, max_chips: int) -> None:
    diameter = scene.chipset.diameter_mm
    for (x, y) in sample_in_polygon(rng, zone, count=stacks * 3):
        if stacks == 0:
            break
        if not _free_spot(deal, float(x), float(y), clearance=diameter * 1.08):
            continue
        count = int(rng.integers(1, max_chips + 1))
        lean = rng.normal(0.0, 0.8, size=2) if count > 4 else np.zeros(2)
        scene.chips.append(ChipStack(id=ids.take(), x=float(x), y=float(y),
                                     chips=stack_values(scene, rng, count=count),
                                     angle_deg=float(rng.uniform(0, 360)),
                                     lean_mm=(float(lean[0]), float(lean[1]))))
        deal.chip_spots.append((float(x), float(y)))
        stacks -= 1


def add_loose_chips(scene: Scene, rng: np.random.Generator, deal: Deal, ids: IdSource, *, centre: FloatArray,
                    count: int, spread: float) -> None:
    """Single chips scattered around a point (a splashed pot, change, a player's loose chips)."""
    diameter = scene.chipset.diameter_mm
    outline = scene.layout.outline_points
    for _ in range(count * 4):
        if count == 0:
            break
        x, y = centre + rng.normal(0.0, spread, size=2)
        if not points_in_polygon(np.array([[x, y]]), outline)[0]:
            continue
        if not _free_spot(deal, float(x), float(y), clearance=diameter * 1.02):
            continue
        n = 1 if rng.random() < 0.85 else int(rng.integers(2, 4))
        scene.chips.append(ChipStack(id=ids.take(), x=float(x), y=float(y), chips=stack_values(scene, rng, count=n),
                                     angle_deg=float(rng.uniform(0, 360))))
        deal.chip_spots.append((float(x), float(y)))
        count -= 1


BUTTON_DIAMETER_MM = (50.0, 75.0)  # a dealer button's size, drawn uniformly (reference/physical.md)


def add_button(scene: Scene, rng: np.random.Generator, deal: Deal, ids: IdSource) -> None:
    seat = int(rng.choice(scene.layout.seat_numbers))
    bet = scene.layout.zone(f"bet_{seat}").points
    hole = scene.layout.zone(f"hole_{seat}").points
    x, y = (bet.mean(axis=0) + hole.mean(axis=0)) / 2.0 + rng.normal(0.0, 30.0, size=2)
    scene.buttons.append(DealerButton(id=ids.take(), x=float(x), y=float(y),
                                      diameter_mm=float(rng.uniform(*BUTTON_DIAMETER_MM)),
                                      angle_deg=float(rng.uniform(0, 360))))
    deal.chip_spots.append((float(x), float(y)))


def reaching_hand(rng: np.random.Generator, ids: IdSource, *, origin: FloatArray, target: FloatArray,
                  seat: int | None) -> HandObject:
    """A forearm from beyond `origin` (a point on the rail) whose hand ends near `target`."""
    direction = target - origin
    direction /= max(float(np.linalg.norm(direction)), 1e-6)
    length = float(rng.uniform(150.0, 200.0))
    wrist_xy = target - direction * length * 0.8
    elbow_xy = wrist_xy - direction * rng.uniform(230.0, 290.0) + rng.normal(0.0, 40.0, size=2)
    wrist_z = float(rng.uniform(45.0, 120.0))
    sleeve = SLEEVES[int(rng.integers(len(SLEEVES)))] if rng.random() < 0.7 else None
    return HandObject(
        id=ids.take(), elbow=(float(elbow_xy[0]), float(elbow_xy[1]), wrist_z + float(rng.uniform(90.0, 200.0))),
        wrist=(float(wrist_xy[0]), float(wrist_xy[1]), wrist_z), seat=seat,
        pose=HandPose(str(rng.choice([p.value for p in HandPose], p=[0.55, 0.2, 0.25]))),
        width_mm=float(rng.uniform(75.0, 95.0)), hand_length_mm=length,
        skin_rgb=SKIN_TONES[int(rng.integers(len(SKIN_TONES)))], sleeve_rgb=sleeve)


def add_hands(scene: Scene, rng: np.random.Generator, ids: IdSource, *, count: int) -> None:
    layout = scene.layout
    for _ in range(count):
        seat = int(rng.choice(layout.seat_numbers))
        origin = np.asarray(layout.seat(seat).position, dtype=np.float64)
        kind = str(rng.choice(["bet", "hole", "stack", "pot", "board"]))
        zone = layout.zone(f"{kind}_{seat}" if kind in ("bet", "hole", "stack") else kind).points
        (target,) = sample_in_polygon(rng, zone)
        scene.hands.append(reaching_hand(rng, ids, origin=origin, target=target, seat=seat))
