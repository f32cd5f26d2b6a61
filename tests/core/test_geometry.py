from __future__ import annotations

import numpy as np
import pytest

from floorman.core.geometry import (
    apply_homography,
    crosses_polyline,
    fit_homography,
    invert_homography,
    points_in_polygon,
    polygon_area,
    polygons_overlap,
    racetrack,
    reprojection_error,
    rotated_rect,
)

SQUARE = np.array([[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]])


def test_points_in_polygon() -> None:
    pts = np.array([[5.0, 5.0], [10.0, 5.0], [11.0, 5.0], [-0.1, 0.0]])
    assert points_in_polygon(pts, SQUARE).tolist() == [True, True, False, False]


def test_points_in_concave_polygon() -> None:
    u_shape = np.array([[0, 0], [30, 0], [30, 30], [20, 30], [20, 10], [10, 10], [10, 30], [0, 30]], dtype=float)
    assert points_in_polygon(np.array([[15.0, 20.0], [5.0, 20.0], [25.0, 5.0]]), u_shape).tolist() == [
        False, True, True,
    ]


def test_polygons_overlap() -> None:
    assert polygons_overlap(SQUARE, SQUARE + 5)
    assert not polygons_overlap(SQUARE, SQUARE + np.array([10.0, 0.0]))  # touching edges
    assert not polygons_overlap(SQUARE, SQUARE + 20)
    assert polygons_overlap(SQUARE, SQUARE)
    cross = rotated_rect((5, 5), (30, 2), 0)
    assert polygons_overlap(SQUARE, cross)  # no vertex inside the other, edges cross
    assert polygons_overlap(SQUARE, rotated_rect((5, 5), (2, 2), 0))  # nested


def test_crossing() -> None:
    line = np.array([[0.0, 0.0], [10.0, 0.0], [20.0, 5.0]])
    assert crosses_polyline((5.0, -3.0), (5.0, 3.0), line)
    assert not crosses_polyline((5.0, 1.0), (5.0, 3.0), line)
    assert crosses_polyline((15.0, 0.0), (15.0, 5.0), line)
    with pytest.raises(ValueError, match="at least 2 points"):
        crosses_polyline((0, 0), (1, 1), np.array([[0.0, 0.0]]))


def test_racetrack_area() -> None:
    shape = racetrack(2400, 1200, points_per_end=400)
    expected = 1200 * 1200 + np.pi * 600**2
    assert polygon_area(shape) == pytest.approx(expected, rel=1e-3)
    with pytest.raises(ValueError, match="length >= width"):
        racetrack(100, 200)


def test_homography_round_trip() -> None:
    rng = np.random.default_rng(3)
    truth = np.array([[0.8, 0.1, 300.0], [-0.05, 0.9, 200.0], [1e-4, 2e-4, 1.0]])
    table = rng.uniform(-1000, 1000, size=(12, 2))
    pixels = apply_homography(truth, table)
    fitted = fit_homography(table, pixels)
    assert np.allclose(fitted, truth, atol=1e-6)
    assert reprojection_error(fitted, table, pixels).max() < 1e-6
    back = apply_homography(invert_homography(fitted), pixels)
    assert np.allclose(back, table, atol=1e-6)


@pytest.mark.parametrize(
    ("source", "target", "message"),
    [
        (SQUARE[:3], SQUARE[:3], "at least 4 point pairs"),
        (SQUARE, SQUARE[:3], "as many source as target"),
        (np.array([[0.0, 0], [1, 1], [2, 2], [3, 3]]), SQUARE, "degenerate"),
        (np.array([[0.0, 0], [1, 1], [2, np.nan], [3, 3]]), SQUARE, "finite"),
        (np.zeros((4, 3)), SQUARE, r"shape \(N, 2\)"),
    ],
)
def test_homography_rejects(source: np.ndarray, target: np.ndarray, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        fit_homography(source, target)


def test_short_side_is_a_cards_width_whatever_its_turn() -> None:
    from floorman.core.geometry import rotated_rect, short_side

    for angle in (0.0, 30.0, 90.0, 135.0):
        assert short_side(rotated_rect((100.0, 50.0), (63.5, 88.9), angle)) == pytest.approx(63.5)
    assert short_side(np.array([[0, 0], [10, 0], [10, 4], [0, 4]], dtype=np.float32)) == pytest.approx(4.0)
    with pytest.raises(ValueError, match=r"expected 4 \(x, y\) corners, shape \(4, 2\), got \(3, 2\)"):
        short_side(np.zeros((3, 2)))
