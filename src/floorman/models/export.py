"""Export a trained checkpoint to ONNX fp32 and to a static-QDQ INT8 ONNX calibrated on rendered windows.

Static INT8 keeps the Detect head's decode tail in fp32: YOLO's output concatenates pixel-scale boxes with
0..1 scores, and one int8 scale over both wipes the scores out. Every node of the last model layer outside its
convolution branches (`cv2.*`, `cv3.*`) — DFL, reshapes, concats, sigmoid, box maths — is excluded from
quantisation. So are the convolutions that read the image (the stem) and that write the head's outputs (the
last 1x1 convolution of each scale's box and class branch: box regressions and class logits): on a rendered
development set, leaving them in fp32 took mAP50-95 from 0.773 to 0.781 (MinMax), and with them the ranges of
the activations from Percentile calibration (99.999 %, histograms) rather than MinMax gave 0.785 (fp32 0.784).
Calibration runs 16 images at a time (the intermediate tensors of one 320 px window take ~128 MB). The ONNX
metadata (names, imgsz, stride) is copied to the INT8 file, with the pyramid levels the model was trained on added
as `floorman_levels`, so a detector needs nothing but the .onnx file.
"""

from __future__ import annotations

import importlib
import logging
import re
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

import cv2
import numpy as np
import numpy.typing as npt
import onnx
from pydantic import BaseModel, ConfigDict, Field

from floorman.core.errors import FloormanError
from floorman.models.crops import IMAGE_SUFFIXES
from floorman.models.registry import LEVELS_KEY
from floorman.models.yolo_env import load_ultralytics

logger = logging.getLogger(__name__)

_LAYER = re.compile(r"^/model\.(\d+)/")
_HEAD_OUTPUT_CONV = re.compile(r"cv[23]\.\d+/cv[23]\.\d+\.\d+/Conv$")  # cv3.0/cv3.0.2/Conv: no activation after it
CALIBRATION_CHUNK = 16  # calibration images run together (their intermediate tensors are held in memory)

CalibrationName = Literal["minmax", "percentile", "entropy"]
_CALIBRATION_METHODS = {"minmax": "MinMax", "percentile": "Percentile", "entropy": "Entropy"}


class ExportError(FloormanError):
    """A model could not be exported or quantised."""


class ExportConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    weights: Path | None = Field(default=None, description="Trained Ultralytics checkpoint (.pt) to export.")
    fp32: Path | None = Field(default=None, description="An fp32 ONNX exported before (e.g. the shipped "
                              "detector.onnx): quantise it as it is instead of exporting weights.")
    out_dir: Path = Field(description="Folder for the ONNX files.")
    name: str = Field(default="detector", min_length=1, description="File stem: NAME.onnx and NAME_int8.onnx.")
    imgsz: int = Field(default=320, ge=32, description="Network input size (square).")
    levels: tuple[int, ...] = Field(default=(320, 960), min_length=1, description="Pyramid levels (metadata).")
    calibration_images: tuple[Path, ...] = Field(default=(), description="Images (windows) for INT8 calibration.")
    calibration_count: int = Field(default=64, ge=1, description="At most this many calibration images.")
    calibration_method: CalibrationName = Field(
        default="percentile", description="How activation ranges are taken from the calibration images: minmax "
        "(every value), percentile (histogram, the central calibration_percentile % of values) or entropy.")
    calibration_percentile: float = Field(default=99.999, gt=90.0, le=100.0,
                                          description="With percentile calibration: the share of values kept.")
    int8: bool = Field(default=True, description="Also write the INT8 model.")


class ExportResult(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    fp32: Path = Field(description="The fp32 ONNX file.")
    int8: Path | None = Field(description="The INT8 ONNX file, when written.")


def letterbox_tensor(image: npt.NDArray[np.uint8], imgsz: int) -> npt.NDArray[np.float32]:
    """BGR image -> (1, 3, imgsz, imgsz) RGB float32 in 0..1, resized keeping aspect, padded with grey 114."""
    height, width = image.shape[:2]
    scale = min(imgsz / width, imgsz / height)
    new_w, new_h = max(1, round(width * scale)), max(1, round(height * scale))
    canvas = np.full((imgsz, imgsz, 3), 114, dtype=np.uint8)
    top, left = (imgsz - new_h) // 2, (imgsz - new_w) // 2
    canvas[top:top + new_h, left:left + new_w] = cv2.resize(image, (new_w, new_h), interpolation=cv2.INTER_LINEAR)
    tensor = canvas[:, :, ::-1].transpose(2, 0, 1)[None].astype(np.float32) / np.float32(255.0)
    return np.ascontiguousarray(tensor)


class TileCalibrationReader:
    """Feeds letterboxed images to ONNX Runtime's calibrator (its CalibrationDataReader protocol)."""

    def __init__(self, images: Sequence[Path], *, imgsz: int, input_name: str) -> None:
        self._paths = list(images)
        self._imgsz = imgsz
        self._input_name = input_name
        self._iterator: Iterator[dict[str, npt.NDArray[np.float32]]] = self._batches()

    def _batches(self, paths: Sequence[Path] | None = None) -> Iterator[dict[str, npt.NDArray[np.float32]]]:
        for path in self._paths if paths is None else paths:
            image = cv2.imread(str(path), cv2.IMREAD_COLOR)
            if image is None:
                raise ExportError(f"{path}: not a readable calibration image")
            yield {self._input_name: letterbox_tensor(np.asarray(image, dtype=np.uint8), self._imgsz)}

    def get_next(self) -> dict[str, Any] | None:
        return next(self._iterator, None)

    def rewind(self) -> None:
        self._iterator = self._batches()

    def __len__(self) -> int:
        return len(self._paths)

    def set_range(self, start_index: int, end_index: int) -> None:
        """Feed images [start_index, end_index) only (ONNX Runtime's strided calibration)."""
        self._iterator = self._batches(self._paths[start_index:end_index])


def calibration_images(folder: Path, *, count: int) -> tuple[Path, ...]:
    """Up to `count` images under folder, spread evenly over its sorted listing."""
    paths = sorted(p for p in folder.rglob("*") if p.suffix.lower() in IMAGE_SUFFIXES)
    if not paths:
        raise ExportError(f"expected calibration images under {folder}, got none")
    picks = np.linspace(0, len(paths) - 1, num=min(count, len(paths))).round().astype(int)
    return tuple(paths[i] for i in sorted(set(picks.tolist())))


def decode_tail_nodes(model: onnx.ModelProto) -> list[str]:
    """Names of the Detect head's decode nodes: the last layer's nodes outside its cv2/cv3 conv branches."""
    layers = [int(m.group(1)) for node in model.graph.node if (m := _LAYER.match(node.name))]
    if not layers:
        raise ExportError("expected Ultralytics node names like /model.N/..., got none")
    head = f"/model.{max(layers)}/"
    return [node.name for node in model.graph.node
            if node.name.startswith(head) and "/cv2." not in node.name and "/cv3." not in node.name]


def float_nodes(model: onnx.ModelProto) -> list[str]:
    """Nodes the INT8 export leaves in fp32: the decode tail, the stem (the first convolution, reading the image)
    and the head's output convolutions (the last 1x1 conv of each scale's cv2 box and cv3 class branch)."""
    tail = decode_tail_nodes(model)
    head = tail[0].split("/")[1]
    image = model.graph.input[0].name
    stem = [node.name for node in model.graph.node if node.op_type == "Conv" and node.input[0] == image]
    outputs = [node.name for node in model.graph.node if node.op_type == "Conv"
               and node.name.startswith(f"/{head}/") and _HEAD_OUTPUT_CONV.search(node.name)]
    if len(stem) != 1 or not outputs:
        raise ExportError(f"expected one Conv reading the input {image!r} and the head's cv2/cv3 output convs "
                          f"like /{head}/cv2.0/cv2.0.2/Conv, got {len(stem)} and {len(outputs)}")
    return [*tail, *stem, *outputs]


def export_fp32(config: ExportConfig) -> Path:
    """Ultralytics ONNX export (opset default, simplified, static shape) into out_dir/NAME.onnx."""
    if config.weights is None:
        raise ExportError("expected a checkpoint (weights) to export, got none")
    ultralytics = load_ultralytics()
    if not config.weights.is_file():
        raise ExportError(f"expected a checkpoint at {config.weights}, got no such file")
    exported = Path(str(ultralytics.YOLO(str(config.weights)).export(
        format="onnx", imgsz=config.imgsz, simplify=True, dynamic=False, batch=1, device="cpu")))
    config.out_dir.mkdir(parents=True, exist_ok=True)
    target = config.out_dir / f"{config.name}.onnx"
    shutil.move(str(exported), target)
    _set_metadata(target, {LEVELS_KEY: ",".join(str(level) for level in config.levels)})
    return target


def _set_metadata(path: Path, extra: dict[str, str], *, base: dict[str, str] | None = None) -> None:
    model = onnx.load(str(path))
    merged = {p.key: p.value for p in model.metadata_props}
    merged.update(base or {})
    merged.update(extra)
    del model.metadata_props[:]
    for key, value in merged.items():
        model.metadata_props.add(key=key, value=value)
    onnx.save(model, str(path))


def export_int8(fp32: Path, *, config: ExportConfig) -> Path:
    """Static QDQ INT8 (per-channel int8 weights, uint8 activations) with `float_nodes` left in fp32."""
    if not config.calibration_images:
        raise ExportError("expected calibration images for the INT8 export, got none")
    model = onnx.load(str(fp32))
    excluded = float_nodes(model)
    input_name = model.graph.input[0].name
    metadata = {p.key: p.value for p in model.metadata_props}
    config.out_dir.mkdir(parents=True, exist_ok=True)
    target = config.out_dir / f"{config.name}_int8.onnx"
    images = config.calibration_images[: config.calibration_count]
    reader = TileCalibrationReader(images, imgsz=config.imgsz, input_name=input_name)
    logger.info("quantising %s on %d images (%s calibration), %d nodes kept in fp32", fp32, len(images),
                config.calibration_method, len(excluded))
    quantization = importlib.import_module("onnxruntime.quantization")
    quantization.quantize_static(
        str(fp32), str(target), reader, quant_format=quantization.QuantFormat.QDQ, per_channel=True,
        activation_type=quantization.QuantType.QUInt8, weight_type=quantization.QuantType.QInt8,
        nodes_to_exclude=excluded,
        calibrate_method=getattr(quantization.CalibrationMethod, _CALIBRATION_METHODS[config.calibration_method]),
        extra_options={"ActivationSymmetric": False, "WeightSymmetric": True,
                       "CalibStridedMinMax": calibration_chunk(len(images)), "CalibTensorRangeSymmetric": False,
                       "CalibPercentile": config.calibration_percentile},
    )
    _set_metadata(target, {}, base=metadata)
    return target


def calibration_chunk(count: int) -> int:
    """The largest number of images up to CALIBRATION_CHUNK that divides count (ONNX Runtime's strides must)."""
    return max(size for size in range(1, min(count, CALIBRATION_CHUNK) + 1) if count % size == 0)


def export_detector(config: ExportConfig) -> ExportResult:
    if config.fp32 is not None and not config.fp32.is_file():
        raise ExportError(f"expected an fp32 ONNX model at {config.fp32}, got no such file")
    fp32 = config.fp32 if config.fp32 is not None else export_fp32(config)
    int8 = export_int8(fp32, config=config) if config.int8 else None
    for path in (None if config.fp32 is not None else fp32, int8):
        if path is not None:
            logger.info("wrote %s (%.1f MB)", path, path.stat().st_size / 1e6)
    return ExportResult(fp32=fp32, int8=int8)
