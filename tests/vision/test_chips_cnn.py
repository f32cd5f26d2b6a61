"""The chip offset net (ONNX): patches cut by the camera's geometry, the offset's evidence per count, the shipped
net on rendered stacks, and the recogniser with and without it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from floorman.core.errors import ConfigError
from floorman.vision.chips import LEARNED_TEMPERATURE, ChipRecogniser
from floorman.vision.chips_cnn import (
    MODEL_PATH,
    ChipOffsetNet,
    PatchSpec,
    cut_patch,
    default_offset_net,
    expected_offsets,
    growth_direction,
    learned_log_likelihood,
    offset_log_likelihood,
    patch_geometry,
)
from floorman.vision.chips_geometry import BOX_SIGMA_PX
from tests.vision.test_chips import CHIPSET, exact_table_camera, render_chips, tilted_camera
from tests.vision.test_chips_count import mask_box, straight_down

THICKNESS = CHIPSET.thickness_mm


def _ring(base: tuple[float, float], *, z: float = 0.0) -> np.ndarray:
    angles = np.linspace(0.0, 2.0 * np.pi, 90, endpoint=False)
    radius = CHIPSET.diameter_mm / 2.0
    return np.column_stack([base[0] + radius * np.cos(angles), base[1] + radius * np.sin(angles),
                            np.full(len(angles), z)])


@pytest.mark.parametrize(("base", "tilt"), [((60.0, 40.0), 30.0), ((-150.0, 90.0), 20.0), ((200.0, -60.0), 45.0)])
def test_a_patch_turns_the_stack_up_and_scales_a_chip_to_the_spec(base: tuple[float, float], tilt: float) -> None:
    camera = tilted_camera(tilt_deg=tilt, size=(1280, 960))
    model = exact_table_camera(camera)
    spec = PatchSpec()
    box = mask_box(camera, base=base, count=8)
    geometry = patch_geometry(model, box, diameter_mm=CHIPSET.diameter_mm, spec=spec)
    foot, top = geometry.to_patch(model.project(np.array([[*base, 0.0], [*base, 8 * THICKNESS]])))
    assert top[1] < foot[1] - 2.0  # the top above the base
    assert abs(top[0] - foot[0]) < 0.05 * (foot[1] - top[1])  # straight up
    ring = geometry.to_patch(model.project(_ring(base)))
    # a chip's projected felt axes average to the spec's diameter; across the patch it shows its widest
    assert spec.diameter_px * 0.98 < np.ptp(ring[:, 0]) < spec.diameter_px * 1.4
    corners = geometry.to_patch(np.array([[box[0], box[1]], [box[2], box[3]]]))
    assert np.linalg.norm(corners.mean(axis=0) - (spec.width / 2.0, spec.height / 2.0)) < 1e-6  # the box centred
    offsets = expected_offsets(model, geometry, thickness_mm=THICKNESS, max_count=30)
    assert np.all(np.diff(offsets) > 0) and offsets[7] == pytest.approx(foot[1] - top[1], abs=0.5)


def test_a_stack_straight_under_the_camera_grows_nowhere_and_its_patch_is_upright() -> None:
    model = exact_table_camera(straight_down(), height_mm=1400.0)
    assert growth_direction(model, (0.0, 0.0)).tolist() == [0.0, -1.0]
    assert growth_direction(model, (300.0, 0.0))[0] > 0.99  # away from the point under the camera
    image = np.zeros((720, 1280, 3), np.uint8)
    image[300:420, 600:700] = 200
    spec = PatchSpec(width=32, height=40, diameter_px=20.0)
    patch = cut_patch(image, patch_geometry(model, (600.0, 300.0, 700.0, 420.0), diameter_mm=39.0, spec=spec),
                      spec=spec)
    assert patch.shape == (40, 32, 3) and patch[20, 16, 0] == 200


def test_a_patch_spec_reads_back_and_names_bad_text() -> None:
    spec = PatchSpec(width=40, height=80, diameter_px=24.5, supersample=3)
    assert PatchSpec.decode(spec.encode()) == spec
    with pytest.raises(ValueError, match="width,height,diameter_px,supersample"):
        PatchSpec.decode("48,96")
    with pytest.raises(ValueError, match="at least 8x8"):
        PatchSpec(width=4)


def test_the_offset_evidence_peaks_at_the_count_it_reads_and_keeps_a_tail() -> None:
    expected = np.arange(1, 31) * 2.0
    logs = offset_log_likelihood(10.2, 0.8, expected)
    assert int(np.argmax(logs)) == 4  # 5 chips
    # 12 spreads off: unlikely, yet not ruled out as a Gaussian alone would (-72)
    assert logs[4] - 10.0 < logs[9] < logs[4] - 5.0


def test_missing_or_undeclared_models_raise_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="expected the chip offset net"):
        ChipOffsetNet(tmp_path / "none.onnx")
    onnx = pytest.importorskip("onnx")
    helper = onnx.helper
    graph = helper.make_graph([helper.make_node("Identity", ["patch"], ["offset"])], "bare",
                              [helper.make_tensor_value_info("patch", onnx.TensorProto.FLOAT, [1, 2])],
                              [helper.make_tensor_value_info("offset", onnx.TensorProto.FLOAT, [1, 2])])
    path = tmp_path / "bare.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    with pytest.raises(ConfigError, match="floorman_patch"):
        ChipOffsetNet(path)


def test_the_shipped_net_declares_its_patch_and_is_small() -> None:
    net = default_offset_net()
    assert net is not None
    assert net.spec == PatchSpec()
    assert MODEL_PATH.stat().st_size < 2_000_000


def test_the_shipped_net_reads_rendered_stacks_tops_within_a_chip() -> None:
    """Stacks of 1-14 chips under a 30 degree camera, on their mask boxes: the offset read is the true count's."""
    stacks: list[tuple[int, ...]] = [(100,), (500,) * 3, (25,) * 6, (1000,) * 9, (5000,) * 14]
    camera = tilted_camera(tilt_deg=30.0, size=(1280, 960), hfov=45.0)
    rendered = render_chips(stacks, camera=camera, seed=93102)
    model = exact_table_camera(camera)
    net = default_offset_net()
    assert net is not None and len(rendered.chips) == len(stacks)
    for chip in rendered.chips:
        geometry = patch_geometry(model, chip.box, diameter_mm=CHIPSET.diameter_mm, spec=net.spec)
        (reading,) = net.read([cut_patch(rendered.image, geometry, spec=net.spec)])
        offsets = expected_offsets(model, geometry, thickness_mm=THICKNESS, max_count=30)
        count = len(chip.chips or ())
        step = offsets[1] - offsets[0]
        assert abs(reading.offset - offsets[count - 1]) < step, (count, reading, offsets[count - 1])
        assert 0.0 < reading.sigma < 2.0 * step


def test_the_recogniser_adds_the_nets_evidence_and_works_without_it() -> None:
    """Without a net the evidence is the geometry's alone; with it, both tempered (LEARNED_TEMPERATURE)."""
    camera = tilted_camera(tilt_deg=30.0, size=(1280, 960), hfov=45.0)
    rendered = render_chips([(500,) * 7], camera=camera, seed=93103)
    model = exact_table_camera(camera)
    net = default_offset_net()
    assert net is not None
    (chip,) = rendered.chips
    plain = ChipRecogniser(CHIPSET, camera=model, box_sigma_px=BOX_SIGMA_PX, offset_net=None)
    learned = ChipRecogniser(CHIPSET, camera=model, box_sigma_px=BOX_SIGMA_PX)
    assert learned.offset_net is net and plain.offset_net is None
    alone = plain.evidence(rendered.image, chip.box).log_likelihood
    both = learned.evidence(rendered.image, chip.box).log_likelihood
    assert alone is not None and both is not None
    extra = learned_log_likelihood(net, rendered.image, chip.box, model, diameter_mm=CHIPSET.diameter_mm,
                                   thickness_mm=THICKNESS, max_count=30)
    np.testing.assert_allclose(both, (alone + extra) / LEARNED_TEMPERATURE)
    assert plain.read(rendered.image, chip.box).count == learned.read(rendered.image, chip.box).count == 7
    assert ChipRecogniser(CHIPSET).read(rendered.image, chip.box).count_confidence == 0.0  # no camera: no net
