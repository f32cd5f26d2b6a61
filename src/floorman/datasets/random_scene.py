"""Random scenes and cameras for training data.

Two styles: `CASINO` (felt or wood tables, a hand in progress: hole cards, board, muck, deck stub, stacks,
the button, reaching hands, any camera from straight down to 35 degrees over the whole table or a sector)
and `HOME` (the held-out photographs: a plain light-wood table shot straight down and close, a few face-up
cards spread at random angles, face-down cards, loose single chips). `random_sample` draws both, about one
scene in five in the `HOME` style. With `seat_chips` > 0 that share of `CASINO` scenes holds the seats' stacks as
players keep them (`datasets.seat_chips`: one stack per denomination side by side, touching), half of them on a
dark felt; those draws come from a child generator, so at 0 every seed renders as before. With `chip_designs` > 0
that share of scenes plays with another club's chips (`datasets.chip_designs.club_chipset`: the same colours in
its own shades, spots and inlays), drawn from a child generator too.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from functools import lru_cache

import numpy as np

from floorman.core.chips import ChipSet
from floorman.core.layout import TableLayout
from floorman.core.layout_gen import racetrack_layout_data
from floorman.datasets.camera import Camera
from floorman.datasets.chip_designs import club_chipset
from floorman.datasets.render_placement import (
    BUTTON_DIAMETER_MM,
    Deal,
    IdSource,
    add_board,
    add_button,
    add_deck,
    add_hands,
    add_hole_cards,
    add_loose_chips,
    add_muck,
    add_stacks,
    reaching_hand,
    sample_in_polygon,
)
from floorman.datasets.render_rack import rack_size_mm
from floorman.datasets.scene import (
    CardObject,
    ChipRack,
    DealerButton,
    GlareSpot,
    Lighting,
    RackRow,
    Scene,
    SurfaceKind,
    TableAppearance,
)
from floorman.datasets.seat_chips import lay_seat_chips
from floorman.datasets.textures import BACK_DESIGNS, N_BACK_DESIGNS, N_DECK_DESIGNS, deck_design

FELT_RGB = ((38, 110, 62), (24, 92, 52), (30, 72, 128), (22, 50, 100), (128, 30, 36), (34, 34, 36),
            (92, 94, 98), (60, 120, 90))
WOOD_RGB = ((212, 178, 128), (222, 194, 150), (196, 156, 104), (168, 118, 72), (120, 80, 50), (186, 176, 160))
LIGHT_WOOD_RGB = ((214, 180, 132), (226, 198, 156), (204, 168, 120), (232, 208, 170))
DARK_FELT_RGB = ((34, 34, 36), (22, 50, 100), (24, 92, 52), (18, 40, 30))  # where a chip's side is hard to see
DARK_FELT_SHARE = 0.5  # of the scenes laid out as seats' stacks
RAIL_RGB = ((30, 24, 22), (18, 18, 20), (70, 44, 30), (52, 36, 30))
SIZES = ((1280, 720), (1920, 1080), (1280, 960), (1600, 1200), (2560, 1440), (3000, 2000), (3840, 2160))
SIZE_WEIGHTS = (0.3, 0.25, 0.1, 0.1, 0.1, 0.1, 0.05)
PHOTO_SIZE = (3000, 2000)
HOME_FRACTION = 0.2
RACK_RGB = ((34, 34, 38), (20, 20, 22), (70, 74, 84), (150, 156, 166), (96, 60, 36))
CASINO_RACK_CHANCE = 0.7
HOME_RACK_CHANCE = 0.5
HOME_SPREAD_MM = np.array([380.0, 230.0])  # a home photo's objects lie this far round its focus (x, y)
TEXTURE_SEEDS = 4


class SceneStyle(enum.StrEnum):
    CASINO = "casino"
    HOME = "home"


@lru_cache(maxsize=16)
def layout_variant(seats: int, length: float, width: float) -> TableLayout:
    """A racetrack layout (cached: building one validates every zone)."""
    data = racetrack_layout_data(name=f"racetrack{seats}_{length:.0f}x{width:.0f}", seats=seats, length=length,
                                 width=width)
    return TableLayout.model_validate(data)


@lru_cache(maxsize=16)
def _without_rail(layout: TableLayout) -> TableLayout:
    """A home table: the same surface without a padded rail."""
    return layout.model_copy(update={"rail_width_mm": 0.0})


@lru_cache(maxsize=1)
def default_layout() -> TableLayout:
    """`TableLayout.default()`, parsed once per process."""
    return TableLayout.default()


@lru_cache(maxsize=1)
def default_chipset() -> ChipSet:
    return ChipSet.default()


def random_layout(rng: np.random.Generator) -> TableLayout:
    if rng.random() < 0.7:
        return default_layout()
    seats = int(rng.choice([6, 8, 9, 10]))
    length, width = ((2400.0, 1200.0), (2200.0, 1100.0), (2700.0, 1300.0))[int(rng.integers(3))]
    return layout_variant(seats, length, width)


def _pick(rng: np.random.Generator, options: tuple[tuple[int, int, int], ...]) -> tuple[int, int, int]:
    return options[int(rng.integers(len(options)))]


def random_appearance(rng: np.random.Generator, *, style: SceneStyle) -> TableAppearance:
    seed = int(rng.integers(TEXTURE_SEEDS))
    if style == SceneStyle.HOME:
        return TableAppearance(surface=SurfaceKind.WOOD, colour=_pick(rng, LIGHT_WOOD_RGB), texture_seed=seed,
                               bet_line_visible=False, rail_colour=_pick(rng, RAIL_RGB))
    wood = rng.random() < 0.25
    return TableAppearance(
        surface=SurfaceKind.WOOD if wood else SurfaceKind.FELT,
        colour=_pick(rng, WOOD_RGB if wood else FELT_RGB), texture_seed=seed,
        bet_line_colour=_pick(rng, ((215, 205, 160), (235, 235, 230), (200, 170, 90))),
        bet_line_visible=bool(rng.random() < (0.2 if wood else 0.8)), rail_colour=_pick(rng, RAIL_RGB),
        logo=bool(rng.random() < 0.3 and not wood))


def random_lighting(rng: np.random.Generator, scene: Scene) -> Lighting:
    glare: list[GlareSpot] = []
    for _ in range(int(rng.choice([0, 0, 1, 2]))):
        if scene.cards and rng.random() < 0.7:
            card = scene.cards[int(rng.integers(len(scene.cards)))]
            x, y = card.x + rng.normal(0, 15), card.y + rng.normal(0, 15)
        else:
            x, y = sample_in_polygon(rng, scene.layout.outline_points)[0]
        glare.append(GlareSpot(x=float(x), y=float(y), radius=float(rng.uniform(15.0, 70.0)),
                               strength=float(rng.uniform(0.2, 0.65))))
    angle = rng.uniform(0.0, 2.0 * math.pi)
    reach = rng.uniform(1.0, 5.0)  # shadow shift per 10 mm of height: overhead lights, 63-84 degrees up
    return Lighting(
        colour_temperature_k=float(rng.uniform(3000.0, 6500.0)), intensity=float(rng.uniform(0.8, 1.15)),
        gradient_direction_deg=float(rng.uniform(0.0, 360.0)), gradient_strength=float(rng.uniform(0.0, 0.3)),
        glare=tuple(glare), shadow_strength=float(rng.uniform(0.15, 0.5)),
        shadow_offset_mm=(float(reach * math.cos(angle)), float(reach * math.sin(angle))))


def _red_or_pink_backs() -> tuple[int, ...]:
    """The back designs printed in red or pink ink (the held-out photos' decks)."""
    return tuple(i for i, d in enumerate(BACK_DESIGNS) if d.ink_rgb[0] > 140 and d.ink_rgb[0] > d.ink_rgb[2] + 20)


def _deal(rng: np.random.Generator, *, style: SceneStyle) -> Deal:
    design = int(rng.integers(N_DECK_DESIGNS))
    backs = _red_or_pink_backs() if style == SceneStyle.HOME else tuple(range(N_BACK_DESIGNS))
    back = int(backs[int(rng.integers(len(backs)))])
    size = deck_design(design).size_mm
    return Deal(order=[int(i) for i in rng.permutation(52)], design=design, back=back,
                size_mm=(float(size[0]), float(size[1])))


def _casino_objects(scene: Scene, rng: np.random.Generator, deal: Deal, ids: IdSource) -> None:
    layout = scene.layout
    seats = layout.seat_numbers
    for seat in seats:
        if rng.random() < 0.6:
            add_hole_cards(scene, rng, deal, ids, seat=seat)
        add_stacks(scene, rng, deal, ids, zone=layout.zone(f"stack_{seat}").points,
                   stacks=int(rng.integers(0, 5)), max_chips=20)
        if rng.random() < 0.4:
            add_stacks(scene, rng, deal, ids, zone=layout.zone(f"bet_{seat}").points,
                       stacks=int(rng.integers(1, 3)), max_chips=8)
    add_board(scene, rng, deal, ids)
    add_muck(scene, rng, deal, ids)
    if rng.random() < 0.6:
        add_deck(scene, rng, deal, ids)
    pot = layout.zone("pot").points
    if rng.random() < 0.6:
        add_stacks(scene, rng, deal, ids, zone=pot, stacks=int(rng.integers(1, 4)), max_chips=20)
    if rng.random() < 0.5:
        add_loose_chips(scene, rng, deal, ids, centre=pot.mean(axis=0), count=int(rng.integers(3, 16)), spread=60.0)
    if rng.random() < 0.85:
        add_button(scene, rng, deal, ids)
    add_hands(scene, rng, ids, count=int(rng.choice([0, 1, 2, 3, 4], p=[0.35, 0.3, 0.2, 0.1, 0.05])))


def _home_focus(rng: np.random.Generator, layout: TableLayout) -> tuple[float, float]:
    pts = layout.outline_points
    half = np.abs(pts).max(axis=0)
    x = rng.uniform(-0.45, 0.45) * half[0]
    y = rng.uniform(-0.3, 0.3) * half[1]
    return float(x), float(y)


def _home_objects(scene: Scene, rng: np.random.Generator, deal: Deal, ids: IdSource,
                  focus: tuple[float, float]) -> None:
    """Objects spread over about 0.9 x 0.6 m round `focus`: the close straight-down photo's field of view."""
    centre = np.asarray(focus)
    spread = HOME_SPREAD_MM
    for k in range(int(rng.integers(1, 9))):
        x, y = centre + rng.uniform(-1.0, 1.0, size=2) * spread
        scene.cards.append(CardObject(id=ids.take(), card=deal.next_card(), face_up=bool(rng.random() < 0.7),
                                      x=float(x), y=float(y), angle_deg=float(rng.uniform(0.0, 360.0)), z=0.3 * k,
                                      design=deal.design, back=deal.back, size_mm=deal.size_mm))
    add_loose_chips(scene, rng, deal, ids, centre=centre, count=int(rng.integers(2, 16)), spread=220.0)
    if rng.random() < 0.2:
        add_deck(scene, rng, deal, ids)
        deck = scene.decks[-1]
        x, y = centre + rng.uniform(-1.0, 1.0, size=2) * spread
        scene.decks[-1] = type(deck)(id=deck.id, x=float(x), y=float(y), count=deck.count,
                                     angle_deg=float(rng.uniform(0, 360)), back=deck.back, size_mm=deck.size_mm)
    if rng.random() < 0.25:
        seat = int(rng.choice(scene.layout.seat_numbers))
        origin = np.asarray(scene.layout.seat(seat).position, dtype=np.float64)
        target = centre + rng.uniform(-1.0, 1.0, size=2) * spread * 0.7
        scene.hands.append(reaching_hand(rng, ids, origin=origin, target=target, seat=seat))


def random_rack(rng: np.random.Generator, chipset: ChipSet, *, centre: tuple[float, float], angle_deg: float,
                rows: int) -> ChipRack:
    """A rack of `rows` channels, each of one denomination (drawn from the chip set), 0-20 chips each."""
    denominations = chipset.denominations
    chosen = [denominations[int(rng.integers(len(denominations)))] for _ in range(rows)]
    return ChipRack(x=centre[0], y=centre[1], angle_deg=angle_deg, tray_rgb=_pick(rng, RACK_RGB),
                    rows=tuple(RackRow(colour=d.rgb, spot_colour=d.edge_rgb,
                                       count=int(rng.choice([0, int(rng.integers(1, 20)), 20, 20])))
                               for d in chosen))


def _add_racks(scene: Scene, rng: np.random.Generator, *, style: SceneStyle, focus: tuple[float, float],
               home_rack: bool | None = None) -> None:
    """A chip rack in the dealer's tray (casino) or beside the cards (home game), sometimes none; `home_rack` True
    (False) puts one beside a home game's cards always (never), None draws it (`HOME_RACK_CHANCE`)."""
    racks: list[ChipRack] = []
    home_chance = HOME_RACK_CHANCE if home_rack is None else float(home_rack)  # one draw either way
    if style == SceneStyle.CASINO and rng.random() < CASINO_RACK_CHANCE:
        tray = scene.layout.zone("dealer_tray").points
        span = tray.max(axis=0) - tray.min(axis=0)
        along_x = bool(span[0] >= span[1])
        rows = max(1, int((max(span) - 12.0) // 43.0))
        centre = tray.mean(axis=0)
        racks.append(random_rack(rng, scene.chipset, centre=(float(centre[0]), float(centre[1])),
                                 angle_deg=0.0 if along_x else 90.0, rows=rows))
    elif style == SceneStyle.HOME and rng.random() < home_chance:
        rows = int(rng.choice([5, 5, 8, 10]))
        angle = float(rng.choice([0.0, 90.0])) + float(rng.normal(0.0, 8.0))
        reach = 300.0 + 0.5 * max(rack_size_mm(ChipRack(0.0, 0.0, rows=(RackRow((0, 0, 0), (0, 0, 0), 0),) * rows)))
        side = 1.0 if rng.random() < 0.5 else -1.0
        centre = (focus[0] + side * float(rng.uniform(reach, reach + 120.0)), focus[1] + float(rng.uniform(-150, 150)))
        racks.append(random_rack(rng, scene.chipset, centre=centre, angle_deg=angle, rows=rows))
    if racks:
        scene.appearance = dataclasses.replace(scene.appearance, racks=tuple(racks))


def _maybe_seats(scene: Scene, rng: np.random.Generator, *, chance: float) -> None:
    """With probability `chance`, the seats' stacks laid out as players keep them (`seat_chips`: side by side,
    touching, 1-20 chips), on a dark felt half the time (a chip's side runs dark on it)."""
    if rng.random() >= chance:
        return
    lay_seat_chips(scene, rng)
    if rng.random() < DARK_FELT_SHARE:
        scene.appearance = dataclasses.replace(scene.appearance, surface=SurfaceKind.FELT,
                                               colour=_pick(rng, DARK_FELT_RGB))


def random_scene(rng: np.random.Generator, *, layout: TableLayout | None = None, chipset: ChipSet | None = None,
                 style: SceneStyle | None = None, seat_chips: float = 0.0, chip_designs: float = 0.0,
                 white_spots: bool = False, home_button: float = 0.0) -> Scene:
    """A random training scene (style drawn when not given: `HOME` one time in five)."""
    return random_scene_with_focus(rng, layout=layout, chipset=chipset, style=style, seat_chips=seat_chips,
                                   chip_designs=chip_designs, white_spots=white_spots, home_button=home_button)[0]


def random_scene_with_focus(rng: np.random.Generator, *, layout: TableLayout | None = None,
                            chipset: ChipSet | None = None, style: SceneStyle | None = None,
                            seat_chips: float = 0.0, chip_designs: float = 0.0, home_rack: bool | None = None,
                            white_spots: bool = False, home_button: float = 0.0,
                            ) -> tuple[Scene, SceneStyle, tuple[float, float]]:
    """A random scene, its style, and the point a camera should look at for a `HOME` scene. With probability
    `seat_chips` a `CASINO` scene's seats hold their stacks as players do (`_maybe_seats`); with probability
    `chip_designs` the scene's chips are another club's design around `chipset` (`chip_designs.club_chipset`; with
    `white_spots` its chips' edge spots all white);
    `home_rack`: a `HOME` scene's chip rack beside the cards always (True), never (False) or drawn (None, the
    default; either way the other draws are those of the default); with probability `home_button` a `HOME` scene has
    a dealer button among its chips (`_maybe_home_button`; 0, the default: none, as before)."""
    for name, chance in (("seat_chips", seat_chips), ("chip_designs", chip_designs), ("home_button", home_button)):
        if not 0.0 <= chance <= 1.0:
            raise ValueError(f"{name}: expected a probability in [0, 1], got {chance}")
    if style is None:
        style = SceneStyle.HOME if rng.random() < HOME_FRACTION else SceneStyle.CASINO
    table = layout or random_layout(rng)
    if style == SceneStyle.HOME:
        table = _without_rail(table)
    chips = chipset or default_chipset()
    if chip_designs > 0.0:  # a child generator (spawning leaves the main stream as it is)
        designs = rng.spawn(1)[0]
        if designs.random() < chip_designs:
            chips = club_chipset(designs, chips, white_spots=white_spots)
    scene = Scene(layout=table, chipset=chips, appearance=random_appearance(rng, style=style))
    deal = _deal(rng, style=style)
    ids = IdSource()
    focus = (0.0, 0.0)
    if style == SceneStyle.HOME:
        focus = _home_focus(rng, table)
        _home_objects(scene, rng, deal, ids, focus)
    else:
        _casino_objects(scene, rng, deal, ids)
    scene.lighting = random_lighting(rng, scene)
    # A child generator: the racks leave the main stream, so every other draw matches renders made before them.
    _add_racks(scene, rng.spawn(1)[0], style=style, focus=focus, home_rack=home_rack)
    if style == SceneStyle.CASINO and seat_chips > 0.0:
        # A second child generator: with the option off, nothing is drawn and the stream is as before.
        _maybe_seats(scene, rng.spawn(1)[0], chance=seat_chips)
    if style == SceneStyle.HOME and home_button > 0.0:  # a child generator too: at 0 nothing is drawn
        _maybe_home_button(scene, rng.spawn(1)[0], chance=home_button, focus=focus, ids=ids)
    return scene, style, focus


def _maybe_home_button(scene: Scene, rng: np.random.Generator, *, chance: float, focus: tuple[float, float],
                       ids: IdSource) -> None:
    """With probability `chance`, a dealer button (50-75 mm, white with "DEALER") among a home game's cards and chips:
    a detector trained on home scenes without one takes a plain white chip for the button (`vision.button_or_chip`)."""
    if rng.random() >= chance:
        return
    x, y = np.asarray(focus) + rng.uniform(-1.0, 1.0, size=2) * HOME_SPREAD_MM * 0.8
    scene.buttons.append(DealerButton(id=ids.take(), x=float(x), y=float(y),
                                      diameter_mm=float(rng.uniform(*BUTTON_DIAMETER_MM)),
                                      angle_deg=float(rng.uniform(0.0, 360.0))))


def _random_size(rng: np.random.Generator) -> tuple[int, int]:
    w, h = SIZES[int(rng.choice(len(SIZES), p=SIZE_WEIGHTS))]
    return (h, w) if rng.random() < 0.1 else (w, h)


def _place(*, target: tuple[float, float], height: float, tilt_deg: float, azimuth: float, extent: tuple[float, float],
           size: tuple[int, int], roll_deg: float) -> Camera:
    """A camera `height` above the felt, tilted toward `target`, wide enough to see `extent` (w, h) mm."""
    offset = height * math.tan(math.radians(tilt_deg))
    eye = (target[0] - offset * math.cos(azimuth), target[1] - offset * math.sin(azimuth), height)
    distance = math.hypot(offset, height)
    w, h = size
    needed = max(extent[0], extent[1] * w / h)
    hfov = math.degrees(2.0 * math.atan(needed / 2.0 / distance))
    return Camera.look_at(eye=eye, target=(target[0], target[1], 0.0), size=size,
                          hfov_deg=float(np.clip(hfov, 20.0, 120.0)), roll_deg=roll_deg)


TILT_LIMITS_DEG = (0.0, 75.0)  # a `tilt_deg` range must lie within these
Tilt = tuple[float, float]  # a camera tilt range (MIN, MAX), degrees from vertical


def tilt_in_limits(tilt: Tilt) -> bool:
    """Whether `tilt` is a range, MIN <= MAX, within `TILT_LIMITS_DEG`."""
    return TILT_LIMITS_DEG[0] <= tilt[0] <= tilt[1] <= TILT_LIMITS_DEG[1]


def random_camera(layout: TableLayout, rng: np.random.Generator, *, size: tuple[int, int] | None = None,
                  tilt_deg: Tilt | None = None) -> Camera:
    """Straight down up to 35 degrees of tilt, over the whole table, one to three seats, or the centre;
    `tilt_deg` (min, max): tilted that much from vertical instead, drawn uniformly."""
    size = size or _random_size(rng)
    mode = str(rng.choice(["table", "sector", "centre"], p=[0.3, 0.45, 0.25]))
    pts = layout.outline_points
    span = pts.max(axis=0) - pts.min(axis=0) + 2.0 * layout.rail_width_mm
    if mode == "table":
        target = tuple(rng.normal(0.0, 40.0, size=2))
        extent = (float(span[0] * rng.uniform(0.95, 1.1)), float(span[1] * rng.uniform(0.95, 1.1)))
    elif mode == "sector":
        seats = layout.seat_numbers
        first = int(rng.integers(len(seats)))
        chosen = [seats[(first + k) % len(seats)] for k in range(int(rng.integers(1, 4)))]
        centres = [layout.zone(f"{kind}_{s}").points.mean(axis=0) for s in chosen for kind in ("hole", "bet")]
        target = tuple(np.mean(centres, axis=0))
        side = float(rng.uniform(500.0, 700.0)) * (1.0 + 0.35 * (len(chosen) - 1))
        extent = (side, side * 0.6)
    else:
        target = tuple(sample_in_polygon(rng, layout.zone("board").points)[0] * 0.5)
        side = float(rng.uniform(700.0, 1300.0))
        extent = (side, side * 0.6)
    if tilt_deg is None:
        tilt = float(rng.uniform(0.0, 5.0)) if rng.random() < 0.4 else float(rng.uniform(5.0, 35.0))
    else:
        tilt = float(rng.uniform(*tilt_deg))
    roll = float(rng.uniform(-180.0, 180.0)) if tilt < 5.0 and rng.random() < 0.5 else float(rng.normal(0.0, 6.0))
    return _place(target=(float(target[0]), float(target[1])), height=float(rng.uniform(1000.0, 1800.0)),
                  tilt_deg=tilt, azimuth=float(rng.uniform(0.0, 2.0 * math.pi)), extent=extent, size=size,
                  roll_deg=roll)


def photo_camera(rng: np.random.Generator, *, focus: tuple[float, float], card_width_mm: float,
                 size: tuple[int, int] | None = None) -> Camera:
    """A close straight-down camera where a card spans 150-250 px of a 3000 px wide image (scaled to `size`)."""
    size = size or PHOTO_SIZE
    card_px = float(rng.uniform(150.0, 250.0)) * size[0] / PHOTO_SIZE[0]
    scale = card_px / card_width_mm
    extent = (size[0] / scale, size[1] / scale)
    return _place(target=focus, height=float(rng.uniform(1000.0, 1500.0)), tilt_deg=float(rng.uniform(0.0, 3.0)),
                  azimuth=float(rng.uniform(0.0, 2.0 * math.pi)), extent=extent, size=size,
                  roll_deg=float(rng.uniform(-180.0, 180.0)))


def random_sample(rng: np.random.Generator, *, layout: TableLayout | None = None, chipset: ChipSet | None = None,
                  size: tuple[int, int] | None = None, style: SceneStyle | None = None,
                  seat_chips: float = 0.0, tilt_deg: Tilt | None = None,
                  chip_designs: float = 0.0, home_rack: bool | None = None,
                  white_spots: bool = False, home_button: float = 0.0) -> tuple[Scene, Camera]:
    """A random training scene and a camera suited to its style (drawn when `style` is None); `seat_chips`: the
    chance a `CASINO` scene's seats hold their stacks side by side, `chip_designs` that its chips are another
    club's design (`white_spots`: all with white edge spots), `home_rack` whether a `HOME` scene has a chip rack,
    `home_button` the chance it has a dealer button (`random_scene_with_focus`); `tilt_deg`: a
    `CASINO` scene's camera tilt range (`random_camera`)."""
    scene, style, focus = random_scene_with_focus(rng, layout=layout, chipset=chipset, style=style,
                                                  seat_chips=seat_chips, chip_designs=chip_designs,
                                                  home_rack=home_rack, white_spots=white_spots,
                                                  home_button=home_button)
    if style == SceneStyle.HOME:
        width = scene.cards[0].size_mm[0] if scene.cards else 63.5
        return scene, photo_camera(rng, focus=focus, card_width_mm=width, size=size)
    return scene, random_camera(scene.layout, rng, size=size, tilt_deg=tilt_deg)
