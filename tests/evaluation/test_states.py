from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from floorman.core.errors import ConfigError
from floorman.core.table_state import SeenButton, SeenCard, SeenChips, SeenHand, TableState
from floorman.evaluation.states import (
    VISION_SOURCES,
    StatesHeader,
    cached_states,
    header_for,
    read_states,
    read_states_as_made,
    stale_header,
    vision_digest,
)


def states() -> list[TableState]:
    chips = SeenChips(box=(1.0, 2.0, 3.0, 4.0), confidence=0.9, position_mm=(10.5, -3.0), zone="stack_2",
                      denominations=(100, 100, 500), denomination_confidence=0.8, count_confidence=0.7,
                      visible_fraction=0.5, track_id=4)
    card = SeenCard(face_up=True, box=(5.0, 6.0, 7.0, 8.0), confidence=0.95, zone="board", identity="10H",
                    identity_confidence=0.99)
    hand = SeenHand(box=(0.0, 0.0, 9.0, 9.0), confidence=0.6, position_mm=(1.0, 2.0), zone="bet_2", seat=2)
    return [TableState(frame=0, t=0.0, chips=(chips,), size=(1280, 720)),
            TableState(frame=1, t=1 / 30, cards=(card,), hands=(hand,), button=SeenButton(box=(1, 1, 2, 2),
                       confidence=0.5, seat=3), extra={"detect_ms": 12.5})]


def header(tmp_path: Path, *, model: bytes = b"model") -> StatesHeader:
    if not (tmp_path / "video.mp4").is_file():
        (tmp_path / "video.mp4").write_bytes(b"video")
        (tmp_path / "cam.yaml").write_text("camera", encoding="utf-8")
    if not (tmp_path / "m.onnx").is_file() or (tmp_path / "m.onnx").read_bytes() != model:
        (tmp_path / "m.onnx").write_bytes(model)
    return header_for(tmp_path / "video.mp4", model=tmp_path / "m.onnx", calibration=tmp_path / "cam.yaml")


def test_states_are_stored_as_they_go_by_and_read_back_equal(tmp_path: Path) -> None:
    made = states()
    first = list(cached_states(tmp_path / "s.jsonl", header=header(tmp_path), make=iter(made)))
    assert first == made

    def never() -> Iterator[TableState]:
        raise AssertionError("the stored states should have been read")
        yield TableState(frame=0, t=0.0)

    again = list(cached_states(tmp_path / "s.jsonl", header=header(tmp_path), make=never()))
    assert again == made  # tuples, nested dataclasses and None fields all come back as they were
    assert not list(tmp_path.glob(".*part"))


def test_states_made_from_another_detector_are_made_again(tmp_path: Path) -> None:
    list(cached_states(tmp_path / "s.jsonl", header=header(tmp_path), make=iter(states())))
    other = header(tmp_path, model=b"another model")
    assert read_states(tmp_path / "s.jsonl", expected=other) is None
    fresh = [TableState(frame=0, t=0.0)]
    assert list(cached_states(tmp_path / "s.jsonl", header=other, make=iter(fresh))) == fresh
    assert read_states(tmp_path / "s.jsonl", expected=other) == fresh
    assert read_states(tmp_path / "s.previous.jsonl", expected=header(tmp_path, model=b"model")) == states()  # kept


def test_an_interrupted_run_keeps_the_stored_file(tmp_path: Path) -> None:
    list(cached_states(tmp_path / "s.jsonl", header=header(tmp_path), make=iter(states())))
    before = (tmp_path / "s.jsonl").read_bytes()

    def broken() -> Iterator[TableState]:
        yield TableState(frame=0, t=0.0)
        raise RuntimeError("video ended badly")

    with pytest.raises(RuntimeError, match="video ended badly"):
        list(cached_states(tmp_path / "s.jsonl", header=header(tmp_path, model=b"new"), make=broken()))
    assert (tmp_path / "s.jsonl").read_bytes() == before and not list(tmp_path.glob(".*part"))
    assert not (tmp_path / "s.previous.jsonl").exists()  # nothing replaced, nothing moved


def test_a_damaged_line_is_named(tmp_path: Path) -> None:
    list(cached_states(tmp_path / "s.jsonl", header=header(tmp_path), make=iter(states())))
    with (tmp_path / "s.jsonl").open("a", encoding="utf-8") as f:
        f.write('{"frame": "x"}\n')
    with pytest.raises(ConfigError, match=r"s\.jsonl, line 4: expected a table state"):
        read_states(tmp_path / "s.jsonl", expected=header(tmp_path))


def fake_package(root: Path) -> None:
    for name in VISION_SOURCES:
        path = root / name
        if path.suffix:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"# {name}\n", encoding="utf-8")
        else:
            (path / "data").mkdir(parents=True, exist_ok=True)
            (path / "chips.py").write_text("SHARE = 0.6\n", encoding="utf-8")
            (path / "data" / "classifier.onnx").write_bytes(b"weights")


def test_the_vision_digest_follows_its_code_and_data_but_not_compiled_caches(tmp_path: Path) -> None:
    fake_package(tmp_path)
    first = vision_digest(tmp_path)
    (tmp_path / "vision" / "__pycache__").mkdir()
    (tmp_path / "vision" / "__pycache__" / "chips.cpython-311.pyc").write_bytes(b"compiled")
    (tmp_path / "rules.py").write_text("# not vision\n", encoding="utf-8")
    assert vision_digest(tmp_path) == first
    (tmp_path / "vision" / "chips.py").write_text("SHARE = 0.5\n", encoding="utf-8")
    changed_code = vision_digest(tmp_path)
    assert changed_code != first
    (tmp_path / "vision" / "data" / "classifier.onnx").write_bytes(b"retrained")
    assert vision_digest(tmp_path) not in (first, changed_code)


def test_states_made_by_other_vision_code_are_made_again(tmp_path: Path) -> None:
    made = header(tmp_path)
    assert made.vision_sha256 == vision_digest()  # the package's own
    list(cached_states(tmp_path / "s.jsonl", header=made, make=iter(states())))
    assert read_states(tmp_path / "s.jsonl", expected=made.model_copy(update={"vision_sha256": "0" * 64})) is None
    older = made.model_dump()
    del older["vision_sha256"]  # a file of session 4
    assert StatesHeader.model_validate(older) != made


def test_stale_states_of_the_same_video_are_read_and_named(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    made = states()
    list(cached_states(tmp_path / "s.jsonl", header=header(tmp_path), make=iter(made)))
    other = header(tmp_path, model=b"another model")
    with caplog.at_level("WARNING"):
        stored = stale_header(tmp_path / "s.jsonl", expected=other)
    assert stored is not None and stored != other
    assert "another model" in caplog.text
    assert read_states(tmp_path / "s.jsonl", expected=stored) == made
    assert stale_header(tmp_path / "missing.jsonl", expected=other) is None


def test_stale_states_of_another_video_are_refused(tmp_path: Path) -> None:
    list(cached_states(tmp_path / "s.jsonl", header=header(tmp_path), make=iter(states())))
    (tmp_path / "video.mp4").write_bytes(b"another, longer video")
    other = header(tmp_path)
    with pytest.raises(ConfigError, match=r"s\.jsonl: made from other videos"):
        stale_header(tmp_path / "s.jsonl", expected=other)


def test_fused_states_name_every_camera_s_video_and_calibration(tmp_path: Path,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    first = header(tmp_path)
    other = tmp_path / "pairB"
    other.mkdir()
    (other / "video.mp4").write_bytes(b"the other camera's video")
    (other / "cam.yaml").write_text("other camera", encoding="utf-8")

    def fused() -> StatesHeader:
        return header_for(tmp_path / "video.mp4", model=tmp_path / "m.onnx", calibration=tmp_path / "cam.yaml",
                          views=[(other / "video.mp4", other / "cam.yaml")])

    made = fused()
    assert [v.video for v in made.views] == ["pairB/video.mp4"] and made != first
    list(cached_states(tmp_path / "s.jsonl", header=made, make=iter(states())))
    assert read_states(tmp_path / "s.jsonl", expected=made) == states()
    assert read_states(tmp_path / "s.jsonl", expected=first) is None  # one camera's states are other states
    (other / "cam.yaml").write_text("recalibrated", encoding="utf-8")
    assert read_states(tmp_path / "s.jsonl", expected=fused()) is None
    with caplog.at_level("WARNING"):
        assert stale_header(tmp_path / "s.jsonl", expected=fused()) == made
    assert "views' calibration" in caplog.text
    (other / "video.mp4").write_bytes(b"the other camera's video, rendered again")
    with pytest.raises(ConfigError, match=r"s\.jsonl: made from other videos \(video\.mp4, pairB/video\.mp4"):
        stale_header(tmp_path / "s.jsonl", expected=fused())
    with pytest.raises(ConfigError, match="made from other videos"):
        stale_header(tmp_path / "s.jsonl", expected=first)  # made fused, asked for one camera's


def test_states_are_read_as_made_whatever_made_them(tmp_path: Path) -> None:
    list(cached_states(tmp_path / "s.jsonl", header=header(tmp_path), make=iter(states())))
    (tmp_path / "m.onnx").write_bytes(b"another model")  # what made them is gone: read them anyway
    assert read_states_as_made(tmp_path / "s.jsonl") == states()
    (tmp_path / "bad.jsonl").write_text('{"frame": 0}\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad\.jsonl: not a states file"):
        read_states_as_made(tmp_path / "bad.jsonl")


def test_the_vision_sources_hold_every_core_module_the_vision_imports() -> None:
    # A stored state is read back while the vision's sources are unchanged: a core module the vision uses but the
    # digest leaves out (core/geometry.py was, until session 20) could change the readings unnoticed.
    package = Path(__file__).resolve().parents[2] / "src" / "floorman"
    sources = [p for name in VISION_SOURCES if (p := package / name).suffix == ".py"]
    sources += sorted((package / "vision").rglob("*.py"))
    imported: set[str] = set()
    for path in sources:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("floorman.core."):
                imported.add(node.module.removeprefix("floorman.").replace(".", "/") + ".py")
            elif isinstance(node, ast.ImportFrom) and node.module == "floorman.core":
                imported.update(f"core/{alias.name}.py" for alias in node.names)
    missing = sorted(m for m in imported if m not in VISION_SOURCES and m not in ("core/errors.py", "core/config.py",
                                                                                  "core/frame_truth.py"))
    assert missing == []
