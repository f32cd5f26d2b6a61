"""Files of `floorman rules check-truth`: where the truth is, which rulebook it names, and the report's text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from floorman.core.errors import ConfigError, SchemaError
from floorman.rules.truth_check import RaisedAlert, TruthReport


def truth_paths(path: Path) -> tuple[Path, Path]:
    """(truth.jsonl, scenario.yaml beside it) from a scenario output folder or a truth file."""
    truth = path / "truth.jsonl" if path.is_dir() else path
    if not truth.is_file():
        raise SchemaError(f"{truth}: no such truth file (expected a scenario output folder or its truth.jsonl)")
    return truth, truth.parent / "scenario.yaml"


def scenario_rulebook(spec: Path, *, truth: Path) -> str:
    """The 'rulebook' field of the scenario copy beside the truth."""
    if not spec.is_file():
        raise ConfigError(f"no scenario.yaml beside {truth}: give the rulebook with --rulebook", source=str(spec))
    try:
        data: Any = yaml.safe_load(spec.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read the scenario: {exc}", source=str(spec)) from None
    name = data.get("rulebook") if isinstance(data, dict) else None
    if not isinstance(name, str):
        raise ConfigError("expected the rulebook id, e.g. 'ggc'", source=str(spec), field="rulebook")
    return name


def _alert_line(raised: RaisedAlert) -> str:
    alert = raised.alert
    seat = "-" if alert.seat is None else str(alert.seat)
    return f"{alert.rule.value:3} seat {seat:>2} raised at {raised.raised_at:7.2f}s  {alert.alert_id}"


def report_text(report: TruthReport, *, source: str) -> str:
    lines = [f"{source}: {report.events} events, rulebook {report.rulebook}"]
    for outcome in report.outcomes:
        want = outcome.expected
        seat = "-" if want.seat is None else str(want.seat)
        head = f"  expected {want.rule.value:3} seat {seat:>2} in [{want.t_start:.2f}, {want.t_end:.2f}]"
        if outcome.met_by is None:
            lines.append(f"{head}: MISSED")
        else:
            lines.append(f"{head}: raised at {outcome.met_by.raised_at:.2f}s ({outcome.met_by.alert.alert_id})")
    for raised in report.unexpected:
        lines.append(f"  unexpected {_alert_line(raised)}: {raised.alert.explanation.en}")
    lines.append(f"  precision {report.precision:.3f}  recall {report.recall:.3f}  "
                 f"({len(report.outcomes)} expected, {report.raised} raised)")
    return "\n".join(lines) + "\n"


def report_json(report: TruthReport) -> dict[str, Any]:
    return {
        "rulebook": report.rulebook,
        "events": report.events,
        "precision": report.precision,
        "recall": report.recall,
        "expected": [{"expected": o.expected.model_dump(mode="json"), "raised": o.met_by is not None,
                      "raised_at": None if o.met_by is None else o.met_by.raised_at,
                      "alert_id": None if o.met_by is None else o.met_by.alert.alert_id} for o in report.outcomes],
        "unexpected": [{"raised_at": r.raised_at, "alert": r.alert.model_dump(mode="json")}
                       for r in report.unexpected],
    }
