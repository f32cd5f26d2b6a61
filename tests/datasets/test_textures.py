"""Procedural textures: faces, backs, chips, button and table surfaces look like what they stand for."""

from __future__ import annotations

import itertools
import math

import cv2
import numpy as np
import pytest

from floorman.core.cards import Card, Rank, Suit, full_deck
from floorman.core.chips import ChipDenomination, ChipSet
from floorman.datasets.scene import N_SUIT_SHAPES, SurfaceKind, TableAppearance
from floorman.datasets.textures import (
    N_BACK_DESIGNS,
    N_DECK_DESIGNS,
    card_back,
    card_face,
    chip_edge_colours,
    chip_top,
    dealer_button_top,
    deck_design,
    index_regions,
    pip_positions,
    table_surface,
)
from floorman.datasets.textures._common import ImageCache
from floorman.datasets.textures.contact_sheet import contact_sheet
from floorman.datasets.textures.suits import (
    SuitShapeParams,
    draw_suit,
    suit_aspect,
    suit_polygons,
    suit_shape_params,
)

PPM = 4.0  # px/mm used by most tests: small and fast, index glyphs still ~32 px tall
DESIGNS = range(N_DECK_DESIGNS)
NUMBER_RANKS = [r for r in Rank if 2 <= r <= 10]


def _crop(
    image: np.ndarray, box_mm: tuple[float, float, float, float], *, ppm: float, pad_mm: float = 0.0
) -> np.ndarray:
    x0, y0, x1, y1 = box_mm
    return image[
        max(0, math.floor((y0 - pad_mm) * ppm)) : math.ceil((y1 + pad_mm) * ppm),
        max(0, math.floor((x0 - pad_mm) * ppm)) : math.ceil((x1 + pad_mm) * ppm),
    ]


def _ink(bgr: np.ndarray, *, threshold: int = 150) -> np.ndarray:
    """Pixels clearly darker than paper in some channel (black ink, or red ink's low green)."""
    return bgr[..., :3].min(axis=-1) < threshold


# --- designs and faces -------------------------------------------------------------------------------------------


def test_designs_cover_poker_bridge_and_jumbo_indices() -> None:
    assert N_DECK_DESIGNS >= 3
    specs = [deck_design(d) for d in DESIGNS]
    widths = {round(s.size_mm[0], 1) for s in specs}
    assert {63.5, 57.0} <= widths
    heights = [s.index_height_mm for s in specs]
    assert any(7.0 <= h <= 10.0 for h in heights)
    assert any(12.0 <= h <= 14.0 for h in heights)
    assert len({s.font_weight for s in specs}) >= 2
    assert len({s.paper_rgb for s in specs}) == len(specs)
    for spec in specs:
        assert all(235 <= c < 255 for c in spec.paper_rgb), "paper is a slightly tinted off-white"


@pytest.mark.parametrize("design", DESIGNS)
@pytest.mark.parametrize("ppm", [1.4, 3.3])
def test_card_face_shape_dtype_alpha(design: int, ppm: float) -> None:
    w_mm, h_mm = deck_design(design).size_mm
    face = card_face(Card.parse("QH"), design=design, px_per_mm=ppm)
    assert face.dtype == np.uint8
    assert face.shape == (round(h_mm * ppm), round(w_mm * ppm), 4)
    assert face[face.shape[0] // 2, face.shape[1] // 2, 3] == 255
    assert face[0, 0, 3] < 32 and face[-1, -1, 3] < 32  # rounded corners are transparent (anti-aliased)
    assert face[face.shape[0] // 2, 0, 3] > 128  # the straight edge is inside
    assert not face.flags.writeable
    assert card_face(Card.parse("QH"), design=design, px_per_mm=ppm) is face  # cached


def _min_pairwise_difference(stack: np.ndarray) -> float:
    """The smallest mean absolute difference between two different images of the stack."""
    flat = stack.reshape(len(stack), -1).astype(np.int16)
    smallest = np.inf
    for i in range(len(flat) - 1):
        smallest = min(smallest, float(np.abs(flat[i + 1 :] - flat[i]).mean(axis=-1).min()))
    return smallest


@pytest.mark.parametrize("design", DESIGNS)
def test_the_52_faces_and_their_indices_are_pairwise_distinct(design: int) -> None:
    faces = np.stack([card_face(c, design=design, px_per_mm=2.0)[..., :3] for c in full_deck()]).astype(np.int16)
    box = index_regions(design)[0]  # the recogniser's crop, at about the scale of the real photographs
    crops = np.stack([_crop(card_face(c, design=design, px_per_mm=3.0), box, ppm=3.0) for c in full_deck()])
    crops = crops[..., :3].astype(np.int16)
    assert _min_pairwise_difference(faces) > 1.0
    assert _min_pairwise_difference(crops) > 3.0


@pytest.mark.parametrize("design", DESIGNS)
def test_index_ink_is_red_for_hearts_diamonds_and_dark_for_spades_clubs(design: int) -> None:
    for card in full_deck():
        face = card_face(card, design=design, px_per_mm=PPM)
        for box in index_regions(design):
            crop = _crop(face, box, ppm=PPM)[..., :3].astype(np.int32)
            ink = crop[_ink(crop, threshold=100)]
            assert len(ink) > 0.08 * crop.shape[0] * crop.shape[1], f"{card} {box}: too little ink"
            b, g, r = ink.mean(axis=0)
            if card.suit.is_red:
                assert r - g > 90 and r - b > 80, f"{card}: index ink is not red, BGR {b:.0f},{g:.0f},{r:.0f}"
            else:
                assert max(b, g, r) < 80, f"{card}: index ink is not dark, BGR {b:.0f},{g:.0f},{r:.0f}"


@pytest.mark.parametrize("design", DESIGNS)
def test_index_regions_are_tight_around_the_rank_and_pip(design: int) -> None:
    ppm = 8.0
    spec = deck_design(design)
    regions = index_regions(design)
    assert len(regions) == len(spec.index_corners) >= 2
    w_mm, h_mm = spec.size_mm
    for box in regions:
        x0, y0, x1, y1 = box
        assert 0 < x0 < x1 < w_mm and 0 < y0 < y1 < h_mm
        assert 6.0 <= y1 - y0 <= 25.0 and 4.0 <= x1 - x0 <= 14.0
    for text in ("10S", "AH", "10D", "AC"):
        face = card_face(Card.parse(text), design=design, px_per_mm=ppm)
        for box in regions:
            window = _crop(face, box, ppm=ppm, pad_mm=0.6)
            ys, xs = np.nonzero(_ink(window))
            # ink spans the box: top to bottom (rank glyph to pip) and most of its width for "10"
            pad = 0.6 * ppm
            assert ys.min() >= pad - 2 and ys.max() <= window.shape[0] - pad + 2, f"{text}: ink leaves {box}"
            assert xs.min() >= pad - 2 and xs.max() <= window.shape[1] - pad + 2, f"{text}: ink leaves {box}"
            assert ys.max() - ys.min() > 0.9 * (box[3] - box[1]) * ppm
            if text.startswith("10"):
                assert xs.max() - xs.min() > 0.85 * (box[2] - box[0]) * ppm


@pytest.mark.parametrize("design", DESIGNS)
def test_centre_pips_keep_clear_of_the_indices(design: int) -> None:
    spec = deck_design(design)
    w_mm, h_mm = spec.size_mm
    half_w, half_h = spec.pip_height_mm * 0.5, spec.pip_height_mm * 0.5  # no suit is wider than tall
    for rank in NUMBER_RANKS:
        for column, row in pip_positions(rank):
            x = {-1: spec.pip_columns[0], 0: 0.5, 1: spec.pip_columns[1]}[column] * w_mm
            y = (spec.pip_rows[0] + (spec.pip_rows[1] - spec.pip_rows[0]) * row) * h_mm
            for x0, y0, x1, y1 in index_regions(design):
                apart = x - half_w > x1 + 0.8 or x + half_w < x0 - 0.8 or y - half_h > y1 + 0.8 or y + half_h < y0 - 0.8
                assert apart, f"{rank.code}: pip at ({x:.1f}, {y:.1f}) mm crowds the index {(x0, y0, x1, y1)}"


@pytest.mark.parametrize("design", DESIGNS)
def test_number_cards_carry_their_pips_in_the_centre(design: int) -> None:
    for suit in Suit:
        inked = []
        for rank in NUMBER_RANKS:
            face = card_face(Card(rank, suit), design=design, px_per_mm=PPM).copy()
            for box in index_regions(design):  # blank the indices: count the centre pips only
                _crop(face, box, ppm=PPM, pad_mm=0.3)[...] = 255
            ink = _ink(face).astype(np.uint8)
            count, _ = cv2.connectedComponents(ink)
            assert count - 1 == int(rank) == len(pip_positions(rank)), f"{rank.code}{suit.value}: {count - 1} pips"
            inked.append(int(ink.sum()))
        assert all(a < b for a, b in itertools.pairwise(inked)), "more pips, more ink"


@pytest.mark.parametrize("design", DESIGNS)
def test_court_cards_are_colourful_and_aces_have_one_big_pip(design: int) -> None:
    spec = deck_design(design)
    w_mm, h_mm = spec.size_mm
    centre = (w_mm * 0.3, h_mm * 0.3, w_mm * 0.7, h_mm * 0.7)
    for suit in Suit:
        for rank in (Rank.JACK, Rank.QUEEN, Rank.KING):
            crop = _crop(card_face(Card(rank, suit), design=design, px_per_mm=PPM), centre, ppm=PPM)
            hsv = cv2.cvtColor(np.ascontiguousarray(crop[..., :3]), cv2.COLOR_BGR2HSV)
            saturated = hsv[..., 1] > 100
            assert saturated.mean() > 0.25, f"{rank.code}{suit.value}: a court figure should be colourful"
            hues = np.unique(hsv[..., 0][saturated] // 20)
            assert len(hues) >= 3, f"{rank.code}{suit.value}: expected several colours"
        ace = _crop(card_face(Card(Rank.ACE, suit), design=design, px_per_mm=PPM), centre, ppm=PPM)
        _, _, stats, _ = cv2.connectedComponentsWithStats(_ink(ace).astype(np.uint8))
        assert stats[1:, cv2.CC_STAT_AREA].max() > 0.05 * ace.shape[0] * ace.shape[1]


@pytest.mark.parametrize("design", DESIGNS)
def test_a_court_card_shows_another_figure_with_its_own_indices(design: int) -> None:
    spec = deck_design(design)
    queen = Card(Rank.QUEEN, Suit.HEARTS)
    own = card_face(queen, design=design, px_per_mm=PPM)
    kings = card_face(queen, design=design, px_per_mm=PPM, figure=Rank.KING)
    king = card_face(Card(Rank.KING, Suit.HEARTS), design=design, px_per_mm=PPM)
    assert card_face(queen, design=design, px_per_mm=PPM, figure=Rank.QUEEN) is own  # its own figure: same face
    x0, y0, x1, y1 = spec.court_frame()
    frame = (slice(round(y0 * PPM) + 4, round(y1 * PPM) - 4), slice(round(x0 * PPM) + 4, round(x1 * PPM) - 4))
    drawn = np.abs(kings[frame].astype(int) - king[frame].astype(int)).mean()
    assert np.abs(kings[frame].astype(int) - own[frame].astype(int)).mean() > 4 * max(drawn, 1.0)
    for region in index_regions(design):  # the corner indices still say queen
        index = tuple(slice(math.floor(a * PPM), math.ceil(b * PPM)) for a, b in ((region[1], region[3]),
                                                                                (region[0], region[2])))
        assert np.array_equal(kings[index], own[index])


def test_a_figure_is_only_for_a_court_card_and_only_a_court_figure() -> None:
    with pytest.raises(ValueError, match=r"figure <Rank\.KING: 13> for 7H"):
        card_face(Card.parse("7H"), design=0, px_per_mm=2.0, figure=Rank.KING)
    with pytest.raises(ValueError, match=r"figure <Rank\.TEN: 10> for QH"):
        card_face(Card.parse("QH"), design=0, px_per_mm=2.0, figure=Rank.TEN)


def _symbol_mask(suit: Suit, shape: int) -> np.ndarray:
    mask = np.zeros((80, 80), np.uint8)
    draw_suit(mask, suit, centre=(40.0, 40.0), height=64.0, colour=255, shape=shape)
    return mask > 127


def test_other_decks_suit_shapes_are_whole_symbols_unlike_ours() -> None:
    own = {suit: _symbol_mask(suit, 0) for suit in Suit}
    unlike = 0
    for shape in range(1, N_SUIT_SHAPES + 1):
        for suit in Suit:
            points = np.concatenate(suit_polygons(suit, shape))
            assert points[:, 1].min() == pytest.approx(-0.5, abs=0.03)  # one symbol height tall, centred
            assert points[:, 1].max() == pytest.approx(0.5, abs=0.03)
            assert abs(points[:, 0].min() + points[:, 0].max()) < 0.02
            assert 0.55 < suit_aspect(suit, shape) < 1.2
            mask = _symbol_mask(suit, shape)
            unlike += int((mask & own[suit]).sum() / (mask | own[suit]).sum() < 0.9)
    assert unlike > 2 * N_SUIT_SHAPES  # most symbols of most shapes are not ours
    assert suit_shape_params(0) == SuitShapeParams()
    assert len({suit_shape_params(k) for k in range(N_SUIT_SHAPES + 1)}) == N_SUIT_SHAPES + 1


@pytest.mark.parametrize("design", DESIGNS)
def test_a_face_in_another_decks_suit_shapes_changes_only_its_symbols(design: int) -> None:
    card = Card.parse("7S")
    own = card_face(card, design=design, px_per_mm=PPM)
    assert card_face(card, design=design, px_per_mm=PPM, suit_shape=0) is own  # ours: the same face
    other = card_face(card, design=design, px_per_mm=PPM, suit_shape=5)
    differ = np.abs(own[..., :3].astype(int) - other[..., :3].astype(int)).max(axis=-1) > 40
    assert differ.sum() > 100  # the pips and the indices' spades
    ink = np.zeros(differ.shape, np.uint8)
    for shape in (0, 5):  # every changed pixel lies on a symbol of one deck or the other
        mask = np.zeros(differ.shape, np.uint8)
        for column, row in pip_positions(card.rank):
            spec = deck_design(design)
            left, right = spec.pip_columns
            top, bottom = spec.pip_rows
            x = {-1: left, 0: 0.5, 1: right}[column] * spec.size_mm[0] * PPM
            y = (top + (bottom - top) * row) * spec.size_mm[1] * PPM
            draw_suit(mask, card.suit, centre=(x, y), height=spec.pip_height_mm * PPM, colour=255,
                      rotate=row > 0.5, shape=shape)
        ink |= mask
    for region in index_regions(design):
        x0, y0, x1, y1 = (round(v * PPM) for v in region)
        ink[max(0, y0 - 2) : y1 + 2, max(0, x0 - 2) : x1 + 2] = 255
    ink = cv2.dilate(ink, np.ones((3, 3), np.uint8))
    assert not (differ & (ink == 0)).any()


def test_a_suit_shape_out_of_range_is_named() -> None:
    with pytest.raises(ValueError, match=rf"suit shape: expected an integer in 0\.\.{N_SUIT_SHAPES}, got 65"):
        card_face(Card.parse("7S"), design=0, px_per_mm=2.0, suit_shape=65)
    with pytest.raises(ValueError, match="got -1"):
        suit_polygons(Suit.CLUBS, -1)


def test_contact_sheet_shows_all_52_faces() -> None:
    sheet = contact_sheet(0, px_per_mm=1.5)
    face = card_face(Card.parse("2S"), design=0, px_per_mm=1.5)
    assert sheet.dtype == np.uint8 and sheet.ndim == 3 and sheet.shape[2] == 3
    assert sheet.shape[1] > 13 * face.shape[1] and sheet.shape[0] > 4 * face.shape[0]
    assert sheet.shape[1] < 13 * face.shape[1] * 1.2 and sheet.shape[0] < 4 * face.shape[0] * 1.2


# --- backs --------------------------------------------------------------------------------------------------------


def test_backs_have_the_card_shape_and_all_differ() -> None:
    assert N_BACK_DESIGNS >= 6
    size = (63.5, 88.9)
    backs = [card_back(b, size_mm=size, px_per_mm=2.0) for b in range(N_BACK_DESIGNS)]
    for back in backs:
        assert back.dtype == np.uint8 and back.shape == (178, 127, 4)
        assert back[0, 0, 3] == 0 and back[89, 63, 3] == 255
    assert _min_pairwise_difference(np.stack([b[..., :3] for b in backs])) > 4.0
    bridge = card_back(0, size_mm=(57.0, 89.0), px_per_mm=2.0)
    assert bridge.shape == (178, 114, 4)


def test_backs_include_several_red_or_pink_and_some_other_colours() -> None:
    means = [
        card_back(b, size_mm=(63.5, 88.9), px_per_mm=2.0)[30:-30, 30:-30, :3].reshape(-1, 3).mean(axis=0)
        for b in range(N_BACK_DESIGNS)
    ]
    reddish = [m for m in means if m[2] > m[1] + 40 and m[2] > m[0] + 20]
    assert len(reddish) >= 4
    assert any(m[0] > m[2] + 30 for m in means), "a blue back"
    assert len(means) - len(reddish) >= 2


# --- surfaces -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("surface", list(SurfaceKind))
def test_table_surface_is_deterministic_per_seed_and_varies_between_seeds(surface: SurfaceKind) -> None:
    colour = (38, 110, 62) if surface is SurfaceKind.FELT else (214, 178, 132)
    look = TableAppearance(surface=surface, colour=colour, texture_seed=11)
    first = table_surface(look, width_px=320, height_px=200, px_per_mm=1.4)
    again = table_surface(look, width_px=320, height_px=200, px_per_mm=1.4)
    other = table_surface(
        TableAppearance(surface=surface, colour=colour, texture_seed=12), width_px=320, height_px=200, px_per_mm=1.4
    )
    assert first.shape == (200, 320, 3) and first.dtype == np.uint8
    assert np.array_equal(first, again)
    assert np.abs(first.astype(np.int16) - other).mean() > 1.0
    mean_rgb = first.reshape(-1, 3).mean(axis=0)[::-1]
    assert np.all(np.abs(mean_rgb - np.asarray(colour)) < 0.15 * np.asarray(colour) + 8)
    assert 1.0 < first.astype(np.float32).std(axis=(0, 1)).mean() < 30.0, "textured, but not noisy"


def test_table_surface_rejects_bad_sizes() -> None:
    with pytest.raises(ValueError, match="width_px"):
        table_surface(TableAppearance(), width_px=0, height_px=10, px_per_mm=1.0)
    with pytest.raises(ValueError, match="px_per_mm"):
        table_surface(TableAppearance(), width_px=10, height_px=10, px_per_mm=0.0)


# --- chips and button ---------------------------------------------------------------------------------------------


def _rgb_to_bgr(rgb: tuple[int, int, int]) -> np.ndarray:
    return np.array(rgb[::-1], dtype=np.int32)


@pytest.mark.parametrize("denomination", ChipSet.default().denominations, ids=lambda d: d.label)
def test_chip_top_shows_edge_spots_on_the_rim(denomination: ChipDenomination) -> None:
    ppm = 6.0
    top = chip_top(denomination, diameter_mm=39.0, px_per_mm=ppm)
    n = round(39.0 * ppm)
    assert top.shape == (n, n, 4) and top.dtype == np.uint8
    assert top[0, 0, 3] == 0 and top[n // 2, n // 2, 3] == 255
    radius = n / 2
    spots = denomination.edge_spots
    for k in range(spots):
        for phase, expected in ((0.0, denomination.edge_rgb), (0.5, denomination.rgb)):
            angle = 2 * math.pi * (k + phase) / spots
            x, y = radius + 0.88 * radius * math.cos(angle), radius + 0.88 * radius * math.sin(angle)
            pixel = top[int(y), int(x), :3].astype(np.int32)
            assert np.abs(pixel - _rgb_to_bgr(expected)).max() < 45, f"spot {k} phase {phase}: {pixel}"


@pytest.mark.parametrize("denomination", ChipSet.default().denominations, ids=lambda d: d.label)
def test_chip_edge_colours_alternate_body_and_spots(denomination: ChipDenomination) -> None:
    colours = chip_edge_colours(denomination, segments=96)
    assert colours.shape == (96, 3) and colours.dtype == np.uint8
    is_spot = np.all(colours == _rgb_to_bgr(denomination.edge_rgb), axis=1)
    assert np.all(is_spot | np.all(colours == _rgb_to_bgr(denomination.rgb), axis=1))
    runs = int(np.sum(is_spot & ~np.roll(is_spot, 1)))
    assert runs == denomination.edge_spots
    assert 0.3 < is_spot.mean() < 0.55
    top = chip_top(denomination, diameter_mm=39.0, px_per_mm=6.0)
    radius = top.shape[0] / 2
    for i in range(96):  # the side band agrees with the top face's spots, away from a spot's boundary
        if is_spot[i - 1] != is_spot[i] or is_spot[(i + 1) % 96] != is_spot[i]:
            continue
        angle = 2 * math.pi * (i + 0.5) / 96
        x, y = radius + 0.95 * radius * math.cos(angle), radius + 0.95 * radius * math.sin(angle)
        pixel = top[int(y), int(x), :3].astype(np.int32)
        expected = denomination.edge_rgb if is_spot[i] else denomination.rgb
        assert np.abs(pixel - _rgb_to_bgr(expected)).max() < 60, f"segment {i}: {pixel}"


def test_dealer_button_is_a_white_disc_with_dark_lettering() -> None:
    button = dealer_button_top(diameter_mm=60.0, px_per_mm=3.0)
    assert button.shape == (180, 180, 4)
    assert button[0, 0, 3] == 0 and button[90, 90, 3] == 255
    assert button[20:40, 80:100, :3].min() > 180  # white body
    middle = button[75:105, 40:140, :3]
    assert (middle.max(axis=-1) < 90).mean() > 0.1  # "DEALER" across the middle


# --- bad arguments ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [-1, N_DECK_DESIGNS, 99, True])
def test_bad_design_index_raises_naming_it(bad: int) -> None:
    with pytest.raises(ValueError, match=f"got {bad!r}"):
        deck_design(bad)
    with pytest.raises(ValueError, match=f"got {bad!r}"):
        card_face(Card.parse("AS"), design=bad, px_per_mm=2.0)
    with pytest.raises(ValueError, match=f"got {bad!r}"):
        index_regions(bad)


@pytest.mark.parametrize("bad", [-1, N_BACK_DESIGNS, 1000])
def test_bad_back_index_raises_naming_it(bad: int) -> None:
    with pytest.raises(ValueError, match=f"got {bad!r}"):
        card_back(bad, size_mm=(63.5, 88.9), px_per_mm=2.0)


def test_bad_scales_and_segments_raise() -> None:
    with pytest.raises(ValueError, match="px_per_mm"):
        card_face(Card.parse("AS"), design=0, px_per_mm=-1.0)
    denomination = ChipSet.default().denominations[0]
    with pytest.raises(ValueError, match="segments"):
        chip_edge_colours(denomination, segments=2)
    with pytest.raises(ValueError, match="diameter"):
        chip_top(denomination, diameter_mm=1.0, px_per_mm=2.0)


# --- cache --------------------------------------------------------------------------------------------------------


def test_image_cache_is_bounded_by_bytes_and_evicts_the_least_recently_used() -> None:
    cache = ImageCache(max_bytes=3000)
    made: list[int] = []

    def make(n: int) -> np.ndarray:
        made.append(n)
        return np.full((10, 100), n, dtype=np.uint8)  # 1000 bytes each

    for n in (1, 2, 3):
        cache.get(n, lambda n=n: make(n))
    assert cache.get(1, lambda: make(99))[0, 0] == 1  # a hit: 1 becomes the most recent
    image = cache.get(4, lambda: make(4))  # over budget: 2, the least recently used, goes
    assert not image.flags.writeable
    assert len(cache) == 3 and cache.nbytes == 3000
    cache.get(2, lambda: make(2))
    assert made == [1, 2, 3, 4, 2]
