"""YOLO export: label lines from rendered truth, a per-image JSON sidecar for the recognisers, `data.yaml`.

Labels follow Ultralytics' format (`class cx cy w h`, normalised to the image), classes in `DetectorClass`
order, one `chip` box per stack. An object is labelled when at least `MIN_VISIBLE_FRACTION` of it is
visible and its visible box is at least `MIN_BOX_PX` on both sides.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field

from floorman.datasets.camera import Camera
from floorman.datasets.effects import Effects
from floorman.datasets.render import ObjectTruth, RenderResult
from floorman.datasets.scene import DetectorClass, Scene

MIN_VISIBLE_FRACTION = 0.2
MIN_BOX_PX = 4.0
SCHEMA_VERSION = 1

_Point = tuple[float, float]
_Box = tuple[float, float, float, float]


class YoloLabel(BaseModel):
    """One YOLO box, normalised to the image."""

    model_config = ConfigDict(frozen=True)

    cls: int = Field(ge=0, description="Class index (DetectorClass order).")
    cx: float = Field(description="Box centre x / image width.")
    cy: float = Field(description="Box centre y / image height.")
    w: float = Field(description="Box width / image width.")
    h: float = Field(description="Box height / image height.")

    def line(self) -> str:
        return f"{self.cls} {self.cx:.6f} {self.cy:.6f} {self.w:.6f} {self.h:.6f}"


def is_labelled(obj: ObjectTruth) -> bool:
    x0, y0, x1, y1 = obj.box
    return obj.visible_fraction >= MIN_VISIBLE_FRACTION and x1 - x0 >= MIN_BOX_PX and y1 - y0 >= MIN_BOX_PX


def yolo_label(obj: ObjectTruth, *, width: int, height: int) -> YoloLabel:
    x0, y0, x1, y1 = obj.box
    return YoloLabel(cls=int(obj.cls), cx=(x0 + x1) / 2.0 / width, cy=(y0 + y1) / 2.0 / height,
                     w=(x1 - x0) / width, h=(y1 - y0) / height)


def yolo_labels(result: RenderResult) -> list[YoloLabel]:
    height, width = result.image.shape[:2]
    return [yolo_label(obj, width=width, height=height) for obj in result.objects if is_labelled(obj)]


def labels_text(labels: list[YoloLabel]) -> str:
    return "".join(label.line() + "\n" for label in labels)


class ObjectMeta(BaseModel):
    """Everything known about one rendered object (also the ones too hidden to be labelled)."""

    model_config = ConfigDict(frozen=True)

    id: int = Field(description="Object id in the scene and in the instance mask.")
    cls: str = Field(description="Detector class name.")
    cls_index: int = Field(description="Detector class index.")
    labelled: bool = Field(description="Whether the object has a line in the YOLO label file.")
    box: _Box = Field(description="Visible-pixel box xyxy (x1, y1 exclusive).")
    full_box: _Box = Field(description="Box of the whole projected object, clipped to the image.")
    visible_fraction: float = Field(description="Visible pixels / projected pixels.")
    occluded_fraction: float = Field(description="1 - visible_fraction (off-image parts count as hidden).")
    position_mm: _Point = Field(description="Table position in mm.")
    zone: str | None = Field(description="Layout zone under the object.")
    card: str | None = Field(default=None, description="Card identity, also for face-down cards.")
    face_up: bool | None = Field(default=None, description="Whether the card shows its face.")
    corners_px: tuple[_Point, ...] | None = Field(
        default=None, description="A card's corners in pixels: TL, TR, BR, BL of the upright card.")
    index_regions_px: tuple[tuple[_Point, ...], ...] | None = Field(
        default=None, description="Each corner index of the card as 4 pixel corners (TL, TR, BR, BL).")
    chips: tuple[int, ...] | None = Field(default=None, description="A stack's denominations, bottom to top.")
    count: int | None = Field(default=None, description="Chips in a stack, cards in a deck stub.")


class CameraMeta(BaseModel):
    model_config = ConfigDict(frozen=True)

    width: int
    height: int
    intrinsics: tuple[tuple[float, float, float], ...] = Field(description="3x3 camera matrix.")
    rotation: tuple[tuple[float, float, float], ...] = Field(description="3x3 world -> camera rotation.")
    translation: tuple[float, float, float] = Field(description="World -> camera translation, mm.")
    eye_mm: tuple[float, float, float] = Field(description="Camera centre in table mm.")
    tilt_deg: float
    homography: tuple[tuple[float, float, float], ...] = Field(description="Pixels <- table mm on the felt.")

    @classmethod
    def of(cls, camera: Camera) -> CameraMeta:
        def rows(m: np.ndarray) -> tuple[tuple[float, float, float], ...]:
            return tuple((float(r[0]), float(r[1]), float(r[2])) for r in np.asarray(m, dtype=np.float64))

        t = np.asarray(camera.translation, dtype=np.float64)
        e = camera.eye
        return cls(width=camera.width, height=camera.height, intrinsics=rows(camera.intrinsics),
                   rotation=rows(camera.rotation), translation=(float(t[0]), float(t[1]), float(t[2])),
                   eye_mm=(float(e[0]), float(e[1]), float(e[2])), tilt_deg=camera.tilt_deg,
                   homography=rows(camera.table_homography()))


class ImageMeta(BaseModel):
    """The sidecar of one dataset image."""

    model_config = ConfigDict(frozen=True)

    schema_version: int = SCHEMA_VERSION
    image: str = Field(description="Image path relative to the dataset root.")
    seed: int = Field(description="The dataset seed.")
    index: int = Field(description="The image's index: its rng is SeedSequence(seed, spawn_key=(index,)).")
    layout: str = Field(description="Table layout name.")
    surface: str = Field(description="Table surface kind.")
    camera: CameraMeta
    effects: Effects | None = Field(description="The camera effects applied after rendering.")
    objects: tuple[ObjectMeta, ...]


def object_meta(obj: ObjectTruth) -> ObjectMeta:
    return ObjectMeta(
        id=obj.id, cls=DetectorClass(obj.cls).label, cls_index=int(obj.cls), labelled=is_labelled(obj),
        box=obj.box, full_box=obj.full_box, visible_fraction=obj.visible_fraction,
        occluded_fraction=1.0 - obj.visible_fraction, position_mm=obj.position_mm, zone=obj.zone, card=obj.card,
        face_up=obj.face_up, corners_px=obj.corners_px, index_regions_px=obj.index_regions_px, chips=obj.chips,
        count=obj.count)


def image_meta(result: RenderResult, *, image: str, seed: int, index: int, scene: Scene, camera: Camera,
               effects: Effects | None) -> ImageMeta:
    return ImageMeta(image=image, seed=seed, index=index, layout=scene.layout.name,
                     surface=str(scene.appearance.surface), camera=CameraMeta.of(camera), effects=effects,
                     objects=tuple(object_meta(obj) for obj in result.objects))


def write_data_yaml(root: Path) -> Path:
    """`data.yaml` for Ultralytics: dataset root, split folders, class count and names."""
    names = [c.label for c in DetectorClass]
    data = {"path": str(root.resolve()), "train": "images/train", "val": "images/val", "nc": len(names),
            "names": names}
    path = root / "data.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path
