from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import cv2
import numpy as np
import pytest

from floorman.cli import main
from floorman.core.chips import ChipSet
from floorman.core.errors import ConfigError
from floorman.vision.detect_cli import ChipTotal, DetectedObject, FrameReport, colour_name
from floorman.vision.photo_labels import CardLabel, PhotoLabel, load_labels, write_labels
from floorman.vision.photo_score import PhotoScore, Tally, chip_words, match, score_photo, summary


def _write(path: Path, records: list[object]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def test_labels_load_with_identities_normalised_and_optional_parts_left_unlabelled(tmp_path: Path) -> None:
    labels = _write(tmp_path / "labels.jsonl", [
        {"image": "a.jpg", "cards": [{"box": [10, 20, 110, 160], "card": "th"}, {"box": [200, 20, 300, 160],
                                                                                "card": None}]},
        "",
        {"image": "b.jpg", "cards": [], "card_backs": [[1, 2, 3, 4]], "chips": {"Red": 2}, "checked": False},
    ])
    first, second = load_labels(labels)
    assert [c.card for c in first.label.cards] == ["10H", None]
    assert first.label.card_backs is None and first.label.chips is None and first.label.checked
    assert first.path == (tmp_path / "a.jpg").resolve() and first.source == f"{labels}:1"
    assert second.label.chips == {"red": 2} and not second.label.checked and second.source == f"{labels}:3"


@pytest.mark.parametrize(("record", "message"), [
    ("{not json", r"labels\.jsonl:1: not a JSON object"),
    ({"image": "a.jpg"}, r"labels\.jsonl:1: field 'cards': Field required"),
    ({"image": "a.jpg", "cards": [], "cardz": []}, r"field 'cardz': Extra inputs are not permitted"),
    ({"image": "a.jpg", "cards": [{"box": [10, 20, 110, 160], "card": "1H"}]},
     r"field 'cards\.0\.card': Value error, invalid card '1H': expected a rank"),
    ({"image": "a.jpg", "cards": [{"box": [110, 20, 10, 160], "card": "AS"}]},
     r"field 'cards\.0\.box': Value error, expected 0 <= x1 < x2 .*\[110\.0, 20\.0, 10\.0, 160\.0\]"),
    ({"image": "a.jpg", "cards": [], "chips": {"red": -1}}, r"field 'chips': .*expected a count of 0 or more"),
    ({"image": "", "cards": []}, r"field 'image'"),
])
def test_a_bad_label_names_the_file_line_field_and_value(tmp_path: Path, record: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_labels(_write(tmp_path / "labels.jsonl", [record]))


def test_a_photo_labelled_twice_or_no_photo_at_all_is_refused(tmp_path: Path) -> None:
    twice = _write(tmp_path / "labels.jsonl", [{"image": "a.jpg", "cards": []}, {"image": "./a.jpg", "cards": []}])
    with pytest.raises(ConfigError, match=r"labels\.jsonl:2: field 'image': \./a\.jpg is labelled twice \(also on "
                                          r".*labels\.jsonl:1\)"):
        load_labels(twice)
    with pytest.raises(ConfigError, match="no labelled photo"):
        load_labels(_write(tmp_path / "empty.jsonl", [""]))
    with pytest.raises(ConfigError, match="no such labels file"):
        load_labels(tmp_path / "missing.jsonl")


def test_labels_are_never_written_over_an_existing_file(tmp_path: Path) -> None:
    out = tmp_path / "labels.jsonl"
    label = PhotoLabel(image="a.jpg", cards=(CardLabel(box=(1, 2, 30, 40), card="QS"),))
    assert write_labels(out, [label]) == 1
    kept = out.read_text()
    with pytest.raises(ConfigError, match="already exists; labels are never overwritten"):
        write_labels(out, [label, label])
    assert out.read_text() == kept
    assert load_labels(out)[0].label == label


def _report(objects: list[tuple[str, tuple[float, float, float, float], float, str | None]],
            totals: dict[int, int] | None = None) -> FrameReport:
    chipset = ChipSet.default()
    return FrameReport(
        source="a.jpg", frame=None, width=1000, height=800,
        objects=[DetectedObject(class_name=name, class_id=0, confidence=conf, box=box, identity=identity)
                 for name, box, conf, identity in objects],
        chip_totals=[ChipTotal(value=v, name=chipset.by_value(v).label, colour=chipset.by_value(v).colour,
                               colour_name=colour_name(chipset.by_value(v).rgb), chips=n, stacks=n)
                     for v, n in (totals or {}).items()])


def test_each_labelled_card_is_right_wrong_unread_or_missed_and_the_boxes_scored_as_coco_does() -> None:
    chipset = ChipSet.default()
    tally = Tally(chip_words(chipset))
    label = PhotoLabel(image="a.jpg", cards=(
        CardLabel(box=(0, 0, 100, 140), card="AS"), CardLabel(box=(200, 0, 300, 140), card="KH"),
        CardLabel(box=(400, 0, 500, 140), card="2C"), CardLabel(box=(600, 0, 700, 140), card="9D"),
        CardLabel(box=(800, 0, 900, 140), card=None)))
    found = _report([("card_face", (2, 1, 101, 141), 0.9, "AS"), ("card_face", (200, 0, 300, 140), 0.8, "KD"),
                     ("card_face", (400, 0, 500, 140), 0.7, None), ("card_face", (810, 5, 905, 140), 0.6, "3S"),
                     ("card_face", (0, 500, 100, 640), 0.95, "5H"), ("chip", (600, 0, 700, 140), 0.9, None)])
    score_photo(tally, label, found, name="a.jpg")
    result = summary(tally, photos=1, model="m.onnx", conf=0.25)
    assert result.card_identity.model_dump() == {"cards": 4, "right": 1, "wrong": 1, "unread": 1, "missed": 1,
                                                 "accuracy": 0.25}
    assert result.misses == ["a.jpg: KH read KD at [200, 0, 300, 140]", "a.jpg: 2C boxed, unread at [400, 0, 500, 140]",
                             "a.jpg: 9D no card_face box at [600, 0, 700, 140]"]
    # 4 of 5 boxes found, and the most confident detection is a false one: precision 0 at the first recall point
    assert result.card_face.boxes == 5 and result.card_face.detections == 5
    assert result.card_face.ap50 is not None and 0.6 < result.card_face.ap50 < 0.8
    assert result.card_back.ap50 is None and result.card_back.photos == 0
    assert result.chips.photos == 0 and result.chips.all_exact is None


def test_the_best_overlaps_pair_first_one_detection_per_card() -> None:
    truth = np.array([[0, 0, 100, 100], [50, 0, 150, 100]], dtype=np.float64)
    found = np.array([[45, 0, 145, 100], [0, 0, 100, 100]], dtype=np.float64)  # each nearer the other's order
    assert match(truth, found) == {0: 1, 1: 0}
    assert match(truth[:1], np.array([[0, 0, 100, 100], [0, 0, 100, 99]], dtype=np.float64)) == {0: 0}
    assert match(truth, np.zeros((0, 4))) == {}


def test_chips_are_compared_per_colour_word_a_colour_left_out_counting_zero() -> None:
    chipset = ChipSet.default()
    words = chip_words(chipset)
    by_word = {colour_name(d.rgb): d.value for d in chipset.denominations}
    assert len(by_word) == len(chipset.denominations)  # one word per denomination in the shipped set
    first, second = words[0], words[1]
    tally = Tally(words)
    score_photo(tally, PhotoLabel(image="a.jpg", cards=(), chips={first: 3}),
                _report([], {by_word[first]: 3}), name="a.jpg")
    score_photo(tally, PhotoLabel(image="b.jpg", cards=(), chips={first: 1, second: 2}),
                _report([], {by_word[first]: 1, by_word[second]: 1, by_word[words[2]]: 1}), name="b.jpg")
    chips = summary(tally, photos=2, model="m", conf=0.25).chips
    assert chips.photos == 2 and chips.all_exact == 0.5
    assert chips.colours[first].model_dump() == {"chips": 4, "counted": 4, "exact": 1.0, "mean_absolute_error": 0.0}
    assert chips.colours[second].model_dump() == {"chips": 2, "counted": 1, "exact": 0.5, "mean_absolute_error": 0.5}
    assert chips.colours[words[2]].counted == 1 and chips.colours[words[2]].exact == 0.5
    assert f"b.jpg: {second} chips 2, counted 1" in tally.misses
    # a colour the chip set does not name, counted on a saved output read with another set, is no match for 0
    saved = _report([]).model_copy(update={"chip_totals": [ChipTotal(value=7, name="7", colour="#a020f0",
                                                                     colour_name="purple", chips=2, stacks=1)]})
    score_photo(tally, PhotoLabel(image="c.jpg", cards=(), chips={}), saved, name="c.jpg")
    chips = summary(tally, photos=3, model="m", conf=None).chips
    assert chips.colours["purple"].counted == 2 and chips.colours["purple"].exact == round(2 / 3, 4)
    assert chips.colours[first].exact == 1.0 and "c.jpg: purple chips 0, counted 2" in tally.misses


def _benchmark(name: str) -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"benchmarks_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def photos(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, object]]]:
    """Two rendered photo-like frames (home style, 3000x2000) and their truth as labels
    (`benchmarks/photo_labels.py`)."""
    folder = tmp_path_factory.mktemp("photos")
    labels = _benchmark("photo_labels").photo_set(folder, count=2, seed=23500, size=(3000, 2000), min_visible=0.7)
    return folder, [json.loads(label.model_dump_json()) for label in labels]


@pytest.mark.slow
def test_rendered_photos_scored_from_their_truth_read_as_floorman_detect_reads_them(
        photos: tuple[Path, list[dict[str, object]]], capsys: pytest.CaptureFixture[str]) -> None:
    folder, records = photos
    labels = _write(folder / "labels.jsonl", records)
    assert main(["photos", "score", str(labels), "--json"]) == 0
    result = PhotoScore.model_validate_json(capsys.readouterr().out)
    assert result.photos == 2 and result.card_identity.cards >= 6
    assert result.card_identity.accuracy is not None and result.card_identity.accuracy >= 0.9
    assert result.card_face.ap50 is not None and result.card_face.ap50 >= 0.8
    assert result.chips.photos == 2
    # the same photos, every identity swapped for another card: none can be right
    swapped = [{**r, "cards": [{**c, "card": "2C" if c["card"] != "2C" else "3D"} for c in r["cards"]]}  # type: ignore[attr-defined]
               for r in records]
    assert main(["photos", "score", str(_write(folder / "swapped.jsonl", swapped)), "--json"]) == 0
    wrong = PhotoScore.model_validate_json(capsys.readouterr().out)
    assert wrong.card_identity.right == 0 and wrong.card_identity.cards == result.card_identity.cards
    assert wrong.card_face.ap50 == result.card_face.ap50
    # a saved `floorman detect --json` output scores the same
    assert main(["detect", str(folder), "--json"]) == 0
    saved = folder / "detect.jsonl"
    saved.write_text(capsys.readouterr().out)
    assert main(["photos", "score", str(labels), "--detections", str(saved), "--json"]) == 0
    again = PhotoScore.model_validate_json(capsys.readouterr().out)
    assert again.model_dump(exclude={"model", "conf"}) == result.model_dump(exclude={"model", "conf"})
    # straight down: `floorman detect --straight-down` saved scores as `photos score --straight-down` reads
    assert main(["photos", "score", str(labels), "--straight-down", "--json"]) == 0
    down = PhotoScore.model_validate_json(capsys.readouterr().out)
    assert down.card_identity == result.card_identity and down.chips.photos == 2 and down.straight_down
    assert main(["detect", str(folder), "--json", "--straight-down"]) == 0
    saved.write_text(capsys.readouterr().out)
    assert main(["photos", "score", str(labels), "--detections", str(saved), "--json"]) == 0
    assert PhotoScore.model_validate_json(capsys.readouterr().out).chips == down.chips
    assert main(["photos", "score", str(labels), "--detections", str(saved), "--straight-down"]) == 2
    assert "--straight-down reads the photos; a saved output holds the counts" in capsys.readouterr().err
    assert main(["photos", "score", str(labels), "--misses"]) == 0
    text = capsys.readouterr().out
    assert "face-up cards: AP50" in text and f"card identity: {result.card_identity.right} of" in text


@pytest.mark.slow
def test_a_draft_is_refused_until_checked_and_then_scores_what_floorman_read(
        photos: tuple[Path, list[dict[str, object]]], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder, _ = photos
    draft = tmp_path / "draft.jsonl"
    assert main(["photos", "draft", str(folder), "--out", str(draft)]) == 0
    assert "drafts (\"checked\": false)" in capsys.readouterr().out
    assert main(["photos", "score", str(draft)]) == 2
    assert f"{draft}:1: field 'checked': a draft no person has checked" in capsys.readouterr().err
    assert main(["photos", "draft", str(folder), "--out", str(draft)]) == 2  # never written over
    assert "already exists" in capsys.readouterr().err
    checked = tmp_path / "checked.jsonl"
    checked.write_text(draft.read_text().replace('"checked":false', '"checked":true'))
    assert main(["photos", "score", str(checked), "--json"]) == 0
    result = PhotoScore.model_validate_json(capsys.readouterr().out)
    read = result.card_identity
    assert read.cards > 0 and read.right == read.cards and result.card_face.ap50 == 1.0
    assert result.chips.all_exact == 1.0


def test_labels_from_another_size_or_colour_words_outside_the_chip_set_are_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cv2.imwrite(str(tmp_path / "small.png"), np.full((100, 150, 3), 200, dtype=np.uint8))
    big = _write(tmp_path / "big.jsonl", [{"image": "small.png", "cards": [{"box": [10, 10, 300, 90], "card": "AS"}]}])
    assert main(["photos", "score", str(big)]) == 2
    assert ("big.jsonl:1: field 'cards.0.box': box reaches (300, 90), outside the 150x100 photo"
            in capsys.readouterr().err)
    teal = _write(tmp_path / "teal.jsonl", [{"image": "small.png", "cards": [], "chips": {"teal": 1}}])
    assert main(["photos", "score", str(teal)]) == 2
    assert "field 'chips': expected colour words of the chip set (" in capsys.readouterr().err
    missing = _write(tmp_path / "missing.jsonl", [{"image": "gone.jpg", "cards": []}])
    assert main(["photos", "score", str(missing)]) == 2
    assert "missing.jsonl:1: field 'image': no such photo" in capsys.readouterr().err
    line = FrameReport(source=str(tmp_path / "small.png"), frame=None, width=150, height=100, objects=[])
    saved = _write(tmp_path / "detect.jsonl", [line.model_dump_json(), line.model_dump_json()])
    alone = _write(tmp_path / "alone.jsonl", [{"image": "small.png", "cards": []}])
    assert main(["photos", "score", str(alone), "--detections", str(saved)]) == 2
    assert "2 lines for small.png in" in capsys.readouterr().err
    assert main(["photos", "score", str(missing), "--detections", str(saved)]) == 2
    assert "field 'image': no line for gone.jpg in" in capsys.readouterr().err
    _write(saved, ["{}"])
    assert main(["photos", "score", str(alone), "--detections", str(saved)]) == 2
    assert "detect.jsonl:1: not a `floorman detect --json` line" in capsys.readouterr().err
