"""Object detector backends chosen by config; the ONNX Runtime backend runs YOLO models exported by
`floorman models export` (no torch, no Ultralytics here).

`OnnxDetector.detect(frame)` looks at the frame through a small pyramid, the one the model was trained on
(`floorman models train`): for each level L the frame is resized so its long side is L pixels and cut into
overlapping square windows of the network input size (a single letterboxed window when it fits). Each window
is run through the session; YOLO's (1, 4 + classes, anchors) output (centre-size boxes in input pixels, class
scores 0..1) is decoded, filtered by confidence and reduced by class-wise NMS. Any frame size works: small
objects are found in the fine level's windows, large ones in the coarse level. Across windows, duplicates are
suppressed by NMS, and a box cut by a window's inner edge that lies mostly inside another window's box of the
same class is merged into it (their union). Last, boxes of `refine_classes` (chip stacks) that the finest level
saw small and crowded are found again at a finer scale, in windows laid over them only (`OnnxDetector.refine`).
"""

from __future__ import annotations

import ast
import importlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol

import cv2
import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field

from floorman.core.errors import ConfigError
from floorman.core.geometry import tile_origins
from floorman.vision.detections import ALTERNATIVE_BOX, Detections, FloatArray, IntArray
from floorman.vision.onnx_session import open_session

logger = logging.getLogger(__name__)

LEVELS_KEY = "floorman_levels"
EDGE_PX = 2.0  # a box this close to a window edge inside the frame is a fragment
REFINE_GAIN = 1.25  # a finer look is taken only at least this much finer than the pyramid's finest level
# Frames at most this many times the finest level's long side (1280x720 against 960) are not looked at again: their
# native pixels add little (1280x720, fresh seeds 99014 / 99114: count exact 48.2 -> 48.5 %, seats 34.9 -> 35.1 %)
# and the edge took ~1.3x as long per frame of a scenario video.
REFINE_MIN_FRAME = 1.5
ALTERNATIVE_APART_PX = 1.0  # the second finer look's box is kept where a side lies this far from the first's
LETTERBOX_GREY = 114
Image = npt.NDArray[np.uint8]


class OnnxDetectorConfig(BaseModel):
    """The ONNX Runtime detector backend."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["onnx"] = Field(default="onnx", description="Backend discriminator.")
    model: Path = Field(description="ONNX file exported by `floorman models export` (fp32 or INT8).")
    imgsz: int | None = Field(default=None, ge=32, description="Input size; None reads it from the model.")
    conf: float = Field(default=0.25, ge=0.0, le=1.0, description="Minimum class score kept.")
    iou: float = Field(default=0.5, gt=0.0, le=1.0, description="NMS IoU threshold.")
    threads: int = Field(default=1, ge=1, description="ONNX Runtime intra-op threads.")
    levels: tuple[int, ...] | None = Field(default=None, description="Pyramid levels (long side in px of the "
                                           "resized frame); None reads the model's; () letterboxes whole frames.")
    overlap: float = Field(default=0.2, ge=0.0, lt=0.9, description="Overlap between neighbouring windows.")
    merge_containment: float = Field(default=0.5, gt=0.0, le=1.0, description="Across windows, merge a cut "
                                     "box into a box of its class holding at least this fraction of it.")
    merge_cut_classes: tuple[str, ...] = Field(default=(), description="Classes whose boxes cut by an inner "
                                               "window edge at a finer level are kept and merged across windows. "
                                               "Other classes' cut boxes are dropped there: an object smaller than "
                                               "the windows' overlap lies whole in a neighbouring window, a larger "
                                               "one is seen whole by the coarser level (measured: card AP50 +0.04, "
                                               "chip +0.015 on the test render; hands, since they are labelled "
                                               "palm and fingers without the arm, +0.48 to +0.60). For a model "
                                               "whose objects are rarely whole in any window.")
    coarse_min_px: float = Field(default=24.0, ge=0.0, description="At a level coarser than the finest, "
                                 "drop boxes whose long side is below this (px at that level): the finer "
                                 "level sees them better (measured: +0.018 mAP50 on the test render).")
    fine_max_px: float = Field(default=250.0, gt=0.0, description="At a level finer than the coarsest, drop "
                               "boxes whose long side is above this (px at that level): pieces of large objects "
                               "the coarser level sees whole.")
    max_detections: int = Field(default=300, ge=1, description="At most this many detections per window "
                                "(the best, before NMS) and per frame.")
    refine_classes: tuple[str, ...] = Field(default=("chip",), description="Classes whose boxes are found again "
                                            "at a finer scale, in windows around them (see refine_px); () never.")
    refine_px: float = Field(default=34.0, gt=0.0, description="The finer scale makes the frame's median box of "
                             "a refined class this long (px at that scale). 34 since session 54: seats' stacks at "
                             "3840x2160, camera height given, count exact / zone value 79.4 / 52.5 -> 81.5 / 57.5 % "
                             "(held-out seed 50104) against 28, which session 10 had chosen over 20 and 41 for a "
                             "recogniser long since changed; on the dev seeds 50101 / 49006 (82.2 / 78.0 % at 34) "
                             "22 read 79.6 / 80.3 % and 40 80.3 / 76.7 %.")
    refine_max_scale: float = Field(default=1.0, gt=0.0, description="At most this scale (frame px -> window "
                                    "px) for the finer look; above 1 the frame is enlarged.")
    refine_min_confidence: float = Field(default=0.25, ge=0.0, le=1.0, description="Only boxes at least this "
                                         "sure are looked at again (a mAP run keeps boxes down to 0.001).")
    refine_near: float | None = Field(default=0.25, ge=0.0, description="Only boxes with another of a refined "
                                      "class within this fraction of their long side are looked at again (None: "
                                      "all). Measured at 3840x2160: a lone stack's box lost a point or two when "
                                      "looked at again, touching stacks' boxes gained 10-17 points count exact.")
    refine_iou: float = Field(default=0.6, gt=0.0, le=1.0, description="A box found again replaces the "
                              "pyramid's box when their IoU is at least this.")
    refine_native_px: float | None = Field(default=None, gt=0.0, description="A second finer look over the same "
                                           "boxes, the frame resized so that their median box is this long (at "
                                           "most refine_max_scale: at 3840x2160 the frame's own pixels): the box "
                                           "found there, where it differs from the first look's by more than a "
                                           "pixel, is kept as a second box of the object (`Detections.data"
                                           "[ALTERNATIVE_BOX]`), which the chip recogniser reads too, keeping the "
                                           "surer count. None: no second look. Session 57: a stack boxed round its "
                                           "top disc alone at the first look is boxed whole at the frame's own "
                                           "pixels, and another the other way round; held-out seats (50104, "
                                           "camera height given) count exact 83.0 -> 85.7 % at 90; but from "
                                           "video tilted_pair's D2 lost and a false D3 in pair4k, so off (None) "
                                           "by default.")
    refine_model: Path | None = Field(default=None, description="ONNX file (the same classes as `model`) that "
                                      "takes the finer looks at crowded boxes (refine_px, refine_native_px) "
                                      "instead of `model`: a detector fine-tuned on windows at that scale. None: "
                                      "`model` looks again itself.")


DetectorConfig = Annotated[OnnxDetectorConfig, Field(discriminator="type")]


class Detector(Protocol):
    names: dict[int, str]

    def detect(self, frame: Image) -> Detections: ...


# --- geometry ------------------------------------------------------------------------------------------


def letterbox(image: Image, imgsz: int) -> tuple[Image, float, tuple[float, float]]:
    """Resize keeping the aspect ratio into an imgsz square, centred on grey; returns (image, scale, (dx, dy))."""
    height, width = image.shape[:2]
    scale = min(imgsz / width, imgsz / height)
    new_w, new_h = max(1, round(width * scale)), max(1, round(height * scale))
    left, top = (imgsz - new_w) // 2, (imgsz - new_h) // 2
    canvas = np.full((imgsz, imgsz, 3), LETTERBOX_GREY, dtype=np.uint8)
    resized = image if (new_w, new_h) == (width, height) else cv2.resize(image, (new_w, new_h),
                                                                          interpolation=cv2.INTER_LINEAR)
    canvas[top:top + new_h, left:left + new_w] = resized
    return canvas, scale, (float(left), float(top))


def to_tensor(image: Image) -> npt.NDArray[np.float32]:
    """BGR HWC uint8 -> RGB (1, 3, H, W) float32 in 0..1."""
    tensor = image[:, :, ::-1].transpose(2, 0, 1)[None].astype(np.float32) * np.float32(1.0 / 255.0)
    return np.ascontiguousarray(tensor)


def decode(output: npt.NDArray[np.float32], *, conf: float) -> tuple[FloatArray, FloatArray, IntArray]:
    """YOLO output (1, 4 + C, A) or (4 + C, A) -> (xyxy (N, 4), score (N,), class (N,)) above `conf`."""
    predictions = output[0] if output.ndim == 3 else output
    if predictions.ndim != 2 or predictions.shape[0] < 5:
        raise ValueError(f"expected a YOLO output of shape (1, 4 + classes, anchors), got {output.shape}")
    scores_all = predictions[4:]
    class_id = scores_all.argmax(axis=0)
    score = scores_all[class_id, np.arange(predictions.shape[1])]
    keep = score >= conf
    cx, cy, w, h = predictions[:4, keep]
    xyxy = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1).astype(np.float32)
    return xyxy, score[keep].astype(np.float32), class_id[keep].astype(np.int64)


def box_iou(box: FloatArray, boxes: FloatArray) -> tuple[FloatArray, FloatArray]:
    """IoU and intersection-over-smaller-area of one box (4,) against boxes (N, 4)."""
    x1, y1 = np.maximum(box[0], boxes[:, 0]), np.maximum(box[1], boxes[:, 1])
    x2, y2 = np.minimum(box[2], boxes[:, 2]), np.minimum(box[3], boxes[:, 3])
    inter = np.clip(x2 - x1, 0, None) * np.clip(y2 - y1, 0, None)
    area = max(float((box[2] - box[0]) * (box[3] - box[1])), 0.0)
    areas = np.clip(boxes[:, 2] - boxes[:, 0], 0, None) * np.clip(boxes[:, 3] - boxes[:, 1], 0, None)
    iou = inter / np.maximum(area + areas - inter, 1e-9)
    ios = inter / np.maximum(np.minimum(area, areas), 1e-9)
    return iou.astype(np.float32), ios.astype(np.float32)


def nms(detections: Detections, *, iou: float, containment: float | None = None,
        group: IntArray | None = None, cut: npt.NDArray[np.bool_] | None = None) -> Detections:
    """Class-wise greedy NMS by confidence. With `containment`, `group` (window index per detection) and `cut`
    (box touches an inner window edge), a box from another window, where either is cut, that lies mostly
    inside the other (intersection / smaller area > containment) is merged: the kept box grows to the union."""
    if len(detections) == 0:
        return detections
    order = np.argsort(-detections.confidence, kind="stable")
    boxes = detections.xyxy.copy()
    alive = np.ones(len(detections), dtype=bool)
    kept: list[int] = []
    for i in order:
        if not alive[i]:
            continue
        kept.append(int(i))
        alive[i] = False
        rest = np.flatnonzero(alive & (detections.class_id == detections.class_id[i]))
        if rest.size == 0:
            continue
        overlap, inside = box_iou(boxes[i], boxes[rest])
        hit = overlap > iou
        if containment is not None and group is not None and cut is not None:
            merge = (group[rest] != group[i]) & (cut[rest] | cut[i]) & (inside > containment) & ~hit
            if merge.any():
                members = boxes[rest[merge]]
                boxes[i] = [min(boxes[i, 0], members[:, 0].min()), min(boxes[i, 1], members[:, 1].min()),
                            max(boxes[i, 2], members[:, 2].max()), max(boxes[i, 3], members[:, 3].max())]
            hit = hit | merge
        alive[rest[hit]] = False
    index = np.asarray(kept, dtype=np.int64)
    result = detections[index]
    result.xyxy = boxes[index]
    return result


# --- the ONNX Runtime backend --------------------------------------------------------------------------


def _metadata(session: Any, *, source: Path) -> dict[str, str]:
    meta: dict[str, str] = dict(session.get_modelmeta().custom_metadata_map)
    if "names" not in meta:
        raise ConfigError("expected ONNX metadata 'names' (export with `floorman models export`), got none",
                          source=str(source), field="names")
    return meta


def parse_names(text: str, *, source: Path) -> dict[int, str]:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise ConfigError(f"expected a dict of class names, got {text!r}", source=str(source),
                          field="names") from None
    if isinstance(value, list):
        value = dict(enumerate(value))
    if not isinstance(value, dict):
        raise ConfigError(f"expected a dict of class names, got {text!r}", source=str(source), field="names")
    return {int(key): str(name) for key, name in value.items()}


def parse_levels(text: str) -> tuple[int, ...]:
    """ "320,960" -> (320, 960); "" -> ()."""
    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise ConfigError(f"expected comma-separated sizes, got {text!r}", field=LEVELS_KEY) from None


class OnnxDetector:
    """YOLO detector on ONNX Runtime (CPU)."""

    def __init__(self, config: OnnxDetectorConfig) -> None:
        if not config.model.is_file():
            raise ConfigError(f"expected an ONNX model file, got no such file: {config.model}", field="model")
        self.config = config
        ort = importlib.import_module("onnxruntime")  # untyped; imported here, not at module import
        options = ort.SessionOptions()
        options.intra_op_num_threads = config.threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session: Any = open_session(config.model, options, what="detector")
        meta = _metadata(self.session, source=config.model)
        self.names = parse_names(meta["names"], source=config.model)
        model_input = self.session.get_inputs()[0]
        self.input_name = model_input.name
        shape = model_input.shape
        native = shape[2] if isinstance(shape[2], int) else None
        self.imgsz = config.imgsz or native or 640
        if native is not None and self.imgsz != native:
            raise ConfigError(f"expected imgsz {native} (the model's fixed input), got {self.imgsz}",
                              source=str(config.model), field="imgsz")
        levels = config.levels if config.levels is not None else parse_levels(meta.get(LEVELS_KEY, ""))
        self.levels: tuple[int, ...] = levels or (self.imgsz,)
        self.merge_cut_ids = np.asarray([i for i, name in self.names.items() if name in config.merge_cut_classes],
                                        dtype=np.int64)
        self.refine_ids = np.asarray([i for i, name in self.names.items() if name in config.refine_classes],
                                     dtype=np.int64)
        self.refiner = self
        if config.refine_model is not None:
            self.refiner = OnnxDetector(config.model_copy(update={"model": config.refine_model, "imgsz": None,
                                                                  "levels": (), "refine_model": None}))
            if self.refiner.names != self.names:
                raise ConfigError(f"expected the classes of {config.model} ({self.names}), got "
                                  f"{self.refiner.names}", source=str(config.refine_model), field="refine_model")
        logger.debug("detector %s: imgsz %d, levels %s, %d threads", config.model, self.imgsz, self.levels,
                     config.threads)

    def infer(self, image: Image) -> Detections:
        """Detections in `image` letterboxed whole to the input size (pixels of `image`), before NMS."""
        boxed, scale, (dx, dy) = letterbox(image, self.imgsz)
        output = self.session.run(None, {self.input_name: to_tensor(boxed)})[0]
        xyxy, score, class_id = decode(np.asarray(output, dtype=np.float32), conf=self.config.conf)
        if len(score) > self.config.max_detections:
            best = np.argpartition(-score, self.config.max_detections)[: self.config.max_detections]
            xyxy, score, class_id = xyxy[best], score[best], class_id[best]
        xyxy = (xyxy - np.array([dx, dy, dx, dy], dtype=np.float32)) / np.float32(scale)
        height, width = image.shape[:2]
        xyxy = np.clip(xyxy, 0, np.array([width, height, width, height], dtype=np.float32))
        return Detections(xyxy=xyxy, confidence=score, class_id=class_id)

    def windows(self, width: int, height: int, *, level: int) -> tuple[float, list[tuple[int, int, int, int]]]:
        """The frame's scale at this level and its windows (x0, y0, x1, y1) in scaled pixels."""
        scale = level / max(width, height)
        scaled_w, scaled_h = max(1, round(width * scale)), max(1, round(height * scale))
        overlap = self.config.overlap
        return scale, [(x, y, min(x + self.imgsz, scaled_w), min(y + self.imgsz, scaled_h))
                       for y in tile_origins(scaled_h, tile=self.imgsz, overlap=overlap)
                       for x in tile_origins(scaled_w, tile=self.imgsz, overlap=overlap)]

    def _in_range(self, found: Detections, *, level: int) -> Detections:
        """The detections of one window whose size suits its level (see coarse_min_px, fine_max_px)."""
        if len(self.levels) == 1 or len(found) == 0:
            return found
        side = np.maximum(found.xyxy[:, 2] - found.xyxy[:, 0], found.xyxy[:, 3] - found.xyxy[:, 1])
        keep = np.ones(len(found), dtype=bool)
        if level != max(self.levels):  # a coarser level than the finest
            keep &= side >= self.config.coarse_min_px
        if level != min(self.levels):  # a finer level than the coarsest
            keep &= side <= self.config.fine_max_px
        return found if keep.all() else found[np.flatnonzero(keep)]

    def _level(self, frame: Image, *, level: int, first_group: int) -> list[Detections]:
        height, width = frame.shape[:2]
        scale, windows = self.windows(width, height, level=level)
        size = (max(1, round(width * scale)), max(1, round(height * scale)))
        scaled: Image = frame if size == (width, height) else np.asarray(cv2.resize(
            frame, size, interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR), dtype=np.uint8)
        parts = []
        for index, (x0, y0, x1, y1) in enumerate(windows):
            found = self._in_range(nms(self.infer(scaled[y0:y1, x0:x1]), iou=self.config.iou), level=level)
            box = found.xyxy
            cut = (((box[:, 0] <= EDGE_PX) & (x0 > 0)) | ((box[:, 2] >= x1 - x0 - EDGE_PX) & (x1 < size[0]))
                   | ((box[:, 1] <= EDGE_PX) & (y0 > 0)) | ((box[:, 3] >= y1 - y0 - EDGE_PX) & (y1 < size[1])))
            if level != min(self.levels) and cut.any():
                keep = ~cut | np.isin(found.class_id, self.merge_cut_ids)
                found, box, cut = found[np.flatnonzero(keep)], box[keep], cut[keep]
            found.xyxy = (box + np.array([x0, y0, x0, y0], dtype=np.float32)) / np.float32(scale)
            parts.append(found.with_data(group=np.full(len(found), first_group + index, dtype=np.int64), cut=cut))
        return parts

    def detect(self, frame: Image) -> Detections:
        if frame.ndim != 3 or frame.shape[2] != 3 or frame.dtype != np.uint8:
            raise ValueError(f"expected a BGR uint8 image (H, W, 3), got {frame.dtype} {frame.shape}")
        parts: list[Detections] = []
        for level in self.levels:
            parts.extend(self._level(frame, level=level, first_group=len(parts)))
        merged = Detections.merge(parts)
        if len(parts) > 1 and len(merged) > 0:
            merged = nms(merged, iou=self.config.iou, containment=self.config.merge_containment,
                         group=merged.data["group"], cut=merged.data["cut"])
        merged = merged[np.argsort(-merged.confidence, kind="stable")[: self.config.max_detections]]
        found = Detections(xyxy=merged.xyxy, confidence=merged.confidence, class_id=merged.class_id)
        return self.refine(frame, found)

    def refine(self, frame: Image, found: Detections) -> Detections:
        """`found` with the boxes of `refine_classes` found again at a finer scale, where the pyramid's finest
        level saw them small and crowded (`refine_near`): windows of the input size are laid over those boxes only,
        the frame resized so that their median box is `refine_px` long (at most `refine_max_scale`, and only when
        that is REFINE_GAIN times finer than the finest level, on frames REFINE_MIN_FRAME times its size), and each
        box is replaced by the box of its class there that overlaps it most (IoU >= refine_iou). The finest level
        places a box to about a pixel of its scale: a 14 px stack at the 960 level of a 3840x2160 frame is then 4
        frame px off on each side, and touching stacks' boxes take in or lose a neighbour's side. With
        `refine_native_px`, a second look's boxes are each box's second box (`ALTERNATIVE_BOX`, NaN where there is
        none; every detection set this detector returns then has it, so that the edge's gate can merge a region's
        detections with the last frame's)."""
        refined = self._refined(frame, found)
        if self.config.refine_native_px is None or ALTERNATIVE_BOX in refined.data:
            return refined
        return refined.with_data(**{ALTERNATIVE_BOX: np.full((len(refined), 4), np.nan, dtype=np.float32)})

    def _refined(self, frame: Image, found: Detections) -> Detections:
        """`refine`'s detections, with the second boxes' field only where the second look was taken."""
        ids = np.flatnonzero(np.isin(found.class_id, self.refine_ids)
                             & (found.confidence >= self.config.refine_min_confidence))
        height, width = frame.shape[:2]
        if len(ids) == 0 or max(width, height) < REFINE_MIN_FRAME * max(self.levels):
            return found
        box = found.xyxy[ids].astype(np.float64)
        side = np.maximum(box[:, 2] - box[:, 0], box[:, 3] - box[:, 1])
        scale = min(self.config.refine_max_scale, self.config.refine_px / max(float(np.median(side)), 1.0))
        if scale <= REFINE_GAIN * max(self.levels) / max(width, height):
            return found
        if self.config.refine_near is not None:
            near = crowded(box, gap=self.config.refine_near)
            ids, box = ids[near], box[near]
        xyxy = found.xyxy.copy()
        for index, again in self._found_again(frame, found, ids, box, scale=scale).items():
            xyxy[index] = again
        refined = Detections(xyxy=xyxy, confidence=found.confidence, class_id=found.class_id)
        if self.config.refine_native_px is None:
            return refined
        native = min(self.config.refine_max_scale, self.config.refine_native_px / max(float(np.median(side)), 1.0))
        if native <= scale * REFINE_GAIN:
            return refined
        second = np.full((len(found), 4), np.nan, dtype=np.float32)
        for index, again in self._found_again(frame, found, ids, box, scale=native).items():
            if float(np.abs(again - xyxy[index]).max()) > ALTERNATIVE_APART_PX:
                second[index] = again
        return refined.with_data(**{ALTERNATIVE_BOX: second})

    def _found_again(self, frame: Image, found: Detections, ids: IntArray, box: npt.NDArray[np.float64], *,
                     scale: float) -> dict[int, FloatArray]:
        """Boxes `ids` of `found` (`box`: theirs) found again in windows of the input size laid over them, the frame
        resized by `scale`: per detection index, the box of its class there overlapping it most (IoU >=
        refine_iou), in frame pixels."""
        height, width = frame.shape[:2]
        result: dict[int, FloatArray] = {}
        for window, members in cover_windows(box, span=self.refiner.imgsz / scale, width=width, height=height,
                                             margin=EDGE_PX / scale):
            x0, y0, x1, y1 = window
            crop = frame[y0:y1, x0:x1]
            size = (max(1, round((x1 - x0) * scale)), max(1, round((y1 - y0) * scale)))
            scaled = np.asarray(cv2.resize(crop, size, interpolation=cv2.INTER_AREA if scale < 1 else
                                           cv2.INTER_LINEAR), dtype=np.uint8)
            again = nms(self.refiner.infer(scaled), iou=self.config.iou)
            again_box = again.xyxy / np.float32(scale) + np.array([x0, y0, x0, y0], dtype=np.float32)
            for member in members:
                same = np.flatnonzero(again.class_id == found.class_id[ids[member]])
                if len(same) == 0:
                    continue
                overlap, _ = box_iou(found.xyxy[ids[member]], again_box[same])
                best = int(np.argmax(overlap))
                if overlap[best] >= self.config.refine_iou:
                    result[int(ids[member])] = again_box[same[best]]
        return result


def crowded(boxes: npt.NDArray[np.float64], *, gap: float) -> npt.NDArray[np.bool_]:
    """Which of `boxes` (N, 4) have another box within `gap` times their long side."""
    side = np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])
    reach = (gap * side)[:, None]
    apart_x = np.maximum(boxes[None, :, 0] - boxes[:, None, 2], boxes[:, None, 0] - boxes[None, :, 2])
    apart_y = np.maximum(boxes[None, :, 1] - boxes[:, None, 3], boxes[:, None, 1] - boxes[None, :, 3])
    close = (apart_x <= reach) & (apart_y <= reach)
    np.fill_diagonal(close, False)
    return np.asarray(close.any(axis=1), dtype=np.bool_)


def cover_windows(boxes: npt.NDArray[np.float64], *, span: float, width: int, height: int,
                  margin: float) -> list[tuple[tuple[int, int, int, int], list[int]]]:
    """Square windows of `span` frame px (clipped to the frame) covering `boxes` (N, 4), each with the indices of
    the boxes it holds whole, at least `margin` px inside its sides within the frame: greedily, a window centred
    on the top-most box not yet held, taking every box not yet held that lies inside it."""
    todo = set(range(len(boxes)))
    out: list[tuple[tuple[int, int, int, int], list[int]]] = []
    while todo:
        first = min(todo, key=lambda i: (float(boxes[i, 1]), float(boxes[i, 0])))
        cx, cy = (boxes[first, 0] + boxes[first, 2]) / 2, (boxes[first, 1] + boxes[first, 3]) / 2
        x0 = int(np.clip(round(cx - span / 2), 0, max(0, round(width - span))))
        y0 = int(np.clip(round(cy - span / 2), 0, max(0, round(height - span))))
        x1, y1 = min(width, x0 + max(1, round(span))), min(height, y0 + max(1, round(span)))
        lo = np.array([x0 + margin * (x0 > 0), y0 + margin * (y0 > 0)])
        hi = np.array([x1 - margin * (x1 < width), y1 - margin * (y1 < height)])
        held = sorted(i for i in todo if (boxes[i, :2] >= lo).all() and (boxes[i, 2:] <= hi).all())
        members = held if first in held else [*held, first]
        todo -= set(members)
        out.append(((x0, y0, x1, y1), members))
    return out


DETECTOR_TYPES: dict[str, type[OnnxDetector]] = {"onnx": OnnxDetector}


def create_detector(config: DetectorConfig) -> Detector:
    """The backend named by config.type."""
    backend = DETECTOR_TYPES.get(config.type)
    if backend is None:
        raise ConfigError(f"expected a detector type in {sorted(DETECTOR_TYPES)}, got {config.type!r}",
                          field="type")
    return backend(config)


def class_boxes(detector: Detector, name: str) -> Callable[[Image], npt.NDArray[np.float64]]:
    """A frame's boxes (N, 4) xyxy of class `name` as `detector` finds them (the chip recipe's detector boxes,
    `floorman models train-chips --detector-boxes`)."""
    ids = [i for i, label in detector.names.items() if label == name]
    if not ids:
        raise ConfigError(f"expected a class {name!r} among the detector's, got {sorted(detector.names.values())}",
                          field="names")

    def boxes(frame: Image) -> npt.NDArray[np.float64]:
        found = detector.detect(frame)
        return np.asarray(found.xyxy[np.isin(found.class_id, ids)], dtype=np.float64).reshape(-1, 4)

    return boxes
