from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from floorman.cli import main
from floorman.core.errors import ConfigError
from floorman.core.geometry import apply_homography
from floorman.core.layout import TableLayout
from floorman.datasets.camera import Camera
from floorman.vision.calibration import (
    Calibration,
    CalibrationError,
    PointPair,
    calibrate_from_markers,
    calibrate_from_points,
    parse_point_pair,
)
from floorman.vision.table_state import table_camera

SCALE = 1.0  # canvas px per mm


def table_with_markers(layout: TableLayout, camera: Camera) -> np.ndarray:
    """A felt-grey table with the layout's markers (white margin), seen through `camera`."""
    length, width = 2400, 1200
    canvas = np.full((int(width * SCALE), int(length * SCALE), 3), (70, 110, 60), np.uint8)
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    for marker in layout.markers:
        side = int(marker.size_mm * SCALE)
        image = cv2.aruco.generateImageMarker(dictionary, marker.id, side)
        margin = side // 5
        image = cv2.copyMakeBorder(image, margin, margin, margin, margin, cv2.BORDER_CONSTANT, value=255)
        cx = int((marker.center[0] + length / 2) * SCALE)
        cy = int((width / 2 - marker.center[1]) * SCALE)  # canvas rows run toward -y
        half = image.shape[0] // 2
        canvas[cy - half: cy - half + image.shape[0], cx - half: cx - half + image.shape[1]] = image[:, :, None]
    canvas_to_mm = np.array([[1 / SCALE, 0, -length / 2], [0, -1 / SCALE, width / 2], [0, 0, 1]])
    homography = camera.table_homography() @ canvas_to_mm
    return cv2.warpPerspective(canvas, homography, (camera.width, camera.height), flags=cv2.INTER_LINEAR)


@pytest.fixture(scope="module")
def layout() -> TableLayout:
    return TableLayout.default()


CAMERAS = {
    "overhead": Camera.look_at(eye=(0, 0, 1700), target=(0, 0, 0), size=(1920, 1080), hfov_deg=80),
    "tilted": Camera.look_at(eye=(150, -1300, 1300), target=(0, 0, 0), size=(1920, 1080), hfov_deg=75),
}


@pytest.mark.parametrize("name", sorted(CAMERAS))
def test_markers_recover_the_camera(layout: TableLayout, name: str) -> None:
    camera = CAMERAS[name]
    image = table_with_markers(layout, camera)
    calibration = calibrate_from_markers(image, layout=layout)
    assert calibration.method == "aruco"
    assert len({p.marker_id for p in calibration.points}) >= 4
    assert calibration.reprojection_error.mean_mm < 2.0
    rng = np.random.default_rng(0)
    table_points = np.column_stack([rng.uniform(-1000, 1000, 50), rng.uniform(-500, 500, 50)])
    pixels = apply_homography(camera.table_homography(), table_points)
    errors = np.linalg.norm(calibration.to_table(pixels) - table_points, axis=1)
    assert errors.max() < 5.0, errors.max()


def test_no_markers_is_a_clear_error(layout: TableLayout) -> None:
    blank = np.full((720, 1280, 3), 90, np.uint8)
    with pytest.raises(CalibrationError, match=r"found 0 of the layout's markers \[0, 1, 2, 3, 4, 5\]"):
        calibrate_from_markers(blank, layout=layout)


def test_four_points(layout: TableLayout) -> None:
    camera = CAMERAS["tilted"]
    corners = np.array([[-900.0, -400.0], [900.0, -400.0], [900.0, 400.0], [-900.0, 400.0]])
    pixels = apply_homography(camera.table_homography(), corners)
    pairs = [PointPair(pixel=(float(u), float(v)), table_mm=(float(x), float(y)))
             for (u, v), (x, y) in zip(pixels, corners, strict=True)]
    calibration = calibrate_from_points(pairs, layout=layout, image_size=(1920, 1080))
    assert calibration.reprojection_error.max_mm < 1e-6
    assert np.allclose(calibration.to_image(np.array([[0.0, 0.0]])), camera.project(np.zeros((1, 3)))[0], atol=1e-6)
    with pytest.raises(CalibrationError, match="at least 4 point pairs, got 3"):
        calibrate_from_points(pairs[:3], layout=layout, image_size=(1920, 1080))


@pytest.mark.parametrize("text", ["1,2=3", "a,b=c,d", "1,2,3,4", ""])
def test_bad_point_text(text: str) -> None:
    with pytest.raises(ValueError, match="expected a point pair as 'u,v=x,y'"):
        parse_point_pair(text)


def test_cli_round_trip(tmp_path: Path, layout: TableLayout, capsys: pytest.CaptureFixture[str]) -> None:
    image_path = tmp_path / "frame.png"
    cv2.imwrite(str(image_path), table_with_markers(layout, CAMERAS["overhead"]))
    out = tmp_path / "cam0.yaml"
    assert main(["calibrate", str(image_path), "--layout", "oval9", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "method aruco, markers [0, 1, 2, 3, 4, 5]" in printed
    assert "reprojection error: mean" in printed
    loaded = Calibration.load(out)
    assert loaded.image_size == (1920, 1080)

    assert main(["calibrate", str(image_path), "--out", str(tmp_path / "p.yaml"),
                 "--points", "0,0=-1000,500", "1919,0=1000,500", "1919,1079=1000,-500", "0,1079=-1000,-500"]) == 0
    assert "method points, 4 points" in capsys.readouterr().out

    assert main(["calibrate", str(tmp_path / "missing.png"), "--out", str(out)]) == 2
    assert "missing.png: image file not found" in capsys.readouterr().err
    assert main(["calibrate", str(image_path), "--out", str(out), "--points", "1,2=3"]) == 2
    assert "field '--points'" in capsys.readouterr().err


def test_markers_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["markers", "--out", str(tmp_path)]) == 0
    files = sorted(tmp_path.glob("marker_*.png"))
    assert len(files) == 6
    image = cv2.imread(str(files[0]), cv2.IMREAD_GRAYSCALE)
    found = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)).detectMarkers(image)
    assert found[1] is not None and int(found[1].reshape(-1)[0]) == 0
    assert "100 mm square" in capsys.readouterr().out


def test_bad_calibration_file(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("layout: oval9\nimage_size: [10, 10]\nmethod: aruco\nhomography: [[1,0,0],[0,1,0]]\n"
                    "points: []\nreprojection_error: {mean_mm: 0, max_mm: 0}\n")
    with pytest.raises(ConfigError, match=r"c\.yaml: field 'homography': expected 3 rows"):
        Calibration.load(path)


def test_measured_camera_height(tmp_path: Path, layout: TableLayout, capsys: pytest.CaptureFixture[str]) -> None:
    """`--camera-height` is kept in the file and tells the stacks' camera model how high a straight-down camera is;
    a file without it (older ones too) leaves the height to the frame, and a bad value is refused, naming the flag,
    without writing the file."""
    image_path = tmp_path / "frame.png"
    cv2.imwrite(str(image_path), table_with_markers(layout, CAMERAS["overhead"]))
    plain, measured = tmp_path / "plain.yaml", tmp_path / "measured.yaml"
    assert main(["calibrate", str(image_path), "--out", str(plain)]) == 0
    assert "camera height: not given" in capsys.readouterr().out
    assert main(["calibrate", str(image_path), "--out", str(measured), "--camera-height", "1700"]) == 0
    assert "camera height: 1700 mm (measured)" in capsys.readouterr().out
    assert Calibration.load(plain).camera_height_mm is None
    assert Calibration.load(measured).camera_height_mm == 1700.0
    assert "camera_height_mm: null" in plain.read_text()

    assumed = table_camera(Calibration.load(plain))
    told = table_camera(Calibration.load(measured))
    assert abs(float(told.eye[2]) - 1700.0) < 5.0
    assert abs(float(assumed.eye[2]) - 1700.0) > 100.0  # the assumed height is another
    assert abs(float(table_camera(Calibration.load(measured), camera_height_mm=1200.0).eye[2]) - 1200.0) < 5.0

    for bad in ("-5", "0", "nan", "20000"):
        assert main(["calibrate", str(image_path), "--out", str(tmp_path / "bad.yaml"), "--camera-height", bad]) == 2
        assert "field '--camera-height'" in capsys.readouterr().err
        assert not (tmp_path / "bad.yaml").exists()
    path = tmp_path / "c.yaml"
    path.write_text(measured.read_text().replace("camera_height_mm: 1700.0", "camera_height_mm: -3"))
    with pytest.raises(ConfigError, match=r"c\.yaml: field 'camera_height_mm'"):
        Calibration.load(path)
