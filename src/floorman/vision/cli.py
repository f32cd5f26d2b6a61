"""`floorman calibrate`, `floorman markers` and `floorman chips` (chips_cli)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from floorman.core.errors import CameraError, ConfigError, FloormanError
from floorman.core.layout import TableLayout, bundled_layout_names
from floorman.vision.calibration import (
    Calibration,
    calibrate_from_markers,
    calibrate_from_points,
    check_camera_height,
    parse_point_pair,
)
from floorman.vision.chips_cli import register as register_chips


def load_layout(spec: str) -> TableLayout:
    """A bundled layout name or a path to a layout YAML."""
    if spec in bundled_layout_names():
        return TableLayout.bundled(spec)
    return TableLayout.load(spec)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "calibrate",
        help="fit a camera's pixels -> table mm homography from ArUco markers or four points",
        description="Fit the homography from image pixels to table millimetres. With no --points, the layout's "
        "ArUco markers are detected in IMAGE; with --points, the pairs given are used.",
    )
    parser.add_argument("image", help="a frame from the camera (any size)")
    parser.add_argument("--layout", default="oval9", help="bundled layout name or layout YAML (default oval9)")
    parser.add_argument("--points", nargs="+", metavar="U,V=X,Y",
                        help="four or more pairs 'u,v=x,y': pixel u,v is table point x,y mm")
    parser.add_argument("--camera-id", default="cam0", help="camera id written in the file")
    parser.add_argument("--camera-height", type=float, metavar="MM",
                        help="the camera lens's height above the felt in mm, measured with a tape; kept in the file "
                        "for the stack counts (a straight-down view cannot tell it)")
    parser.add_argument("--out", required=True, help="calibration YAML to write")
    parser.set_defaults(handler=run_calibrate)

    markers = subparsers.add_parser("markers", help="write the layout's ArUco calibration markers as PNGs to print")
    markers.add_argument("--layout", default="oval9", help="bundled layout name or layout YAML")
    markers.add_argument("--out", required=True, help="folder for the PNGs")
    markers.add_argument("--dpi", type=int, default=300, help="print resolution (default 300)")
    markers.set_defaults(handler=run_markers)
    register_chips(subparsers)


def output_folder(path: Path, *, field: str) -> Path:
    """`path` made (with its parents) to write files into; ConfigError naming it (and the option `field` that gave
    it) when it cannot be (a file of that name, a folder that takes no files)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot make the folder {path}: {exc.strerror or exc}", field=field) from None
    return path


def write_image(path: Path, image: np.ndarray[Any, Any]) -> None:
    """`image` written to `path` in the format its extension names; FloormanError naming the file when OpenCV writes
    nothing (it says so only by its return value)."""
    try:
        written = cv2.imwrite(str(path), image)
    except cv2.error as exc:
        raise FloormanError(f"{path}: could not write the image: {str(exc).strip().splitlines()[-1]}") from None
    if not written:
        raise FloormanError(f"{path}: could not write the image (a folder that takes no files, or a full disk)")


def read_image(path: Path) -> npt.NDArray[np.uint8]:
    """The image as it is shown: a phone photo's EXIF orientation applied (OpenCV does), so boxes labelled in a
    photo viewer are in its pixels; CameraError naming the file where there is none or it is no image."""
    if not path.is_file():
        raise CameraError(f"{path}: image file not found")
    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image is None:
        raise CameraError(f"{path}: not a readable image")
    return np.asarray(image, dtype=np.uint8)


def run_calibrate(args: argparse.Namespace) -> int:
    lens = check_camera_height(args.camera_height, field="--camera-height")
    layout = load_layout(args.layout)
    image = read_image(Path(args.image))
    height, width = image.shape[:2]
    calibration: Calibration
    if args.points:
        try:
            pairs = [parse_point_pair(text) for text in args.points]
        except ValueError as exc:
            raise ConfigError(str(exc), field="--points") from None
        calibration = calibrate_from_points(pairs, layout=layout, image_size=(width, height),
                                            camera_id=args.camera_id, camera_height_mm=lens)
    else:
        calibration = calibrate_from_markers(image, layout=layout, camera_id=args.camera_id, camera_height_mm=lens)
    calibration.save(args.out)
    error = calibration.reprojection_error
    markers = sorted({p.marker_id for p in calibration.points if p.marker_id is not None})
    used = f"markers {markers}" if markers else f"{len(calibration.points)} points"
    sys.stdout.write(
        f"calibration written to {args.out}: method {calibration.method}, {used}, image {width}x{height}\n"
        f"reprojection error: mean {error.mean_mm:.2f} mm, max {error.max_mm:.2f} mm\n"
        + ("camera height: not given (told by the stacks in view; give --camera-height MM for surer counts)\n"
           if lens is None else f"camera height: {lens:.0f} mm (measured)\n")
    )
    return 0


def run_markers(args: argparse.Namespace) -> int:
    layout = load_layout(args.layout)
    out = output_folder(Path(args.out), field="--out")
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, layout.marker_dictionary))
    for marker in layout.markers:
        side = max(32, round(marker.size_mm / 25.4 * args.dpi))
        image = cv2.aruco.generateImageMarker(dictionary, marker.id, side)
        border = side // 6
        image = cv2.copyMakeBorder(image, border, border, border, border, cv2.BORDER_CONSTANT, value=255)
        path = out / f"marker_{marker.id:03d}.png"
        write_image(path, image)
        sys.stdout.write(f"{path}: id {marker.id}, {marker.size_mm:.0f} mm square (without the white margin), "
                         f"centre at ({marker.center[0]:.0f}, {marker.center[1]:.0f}) mm, top edge toward +y\n")
    return 0
