"""`python -m floorman.evaluation DIR [DIR ...] [--vision CALIB]`: derive each rendered scenario's events from its
truth frames (or, with --vision, from the edge's vision on its video) and score them (events by type against the
truth events; alerts against the expected alerts)."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from floorman.core.errors import ConfigError, FloormanError, os_error_text
from floorman.evaluation.derivation import TypeScore, evaluate_scenario
from floorman.evaluation.report import scenario_lines, summary_lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m floorman.evaluation", description=__doc__)
    parser.add_argument("folders", nargs="+", type=Path, help="scenario output folders (floorman datasets scenario)")
    parser.add_argument("--oracle", default="", help="comma-separated event types taken from the truth instead "
                        "of the derivation (e.g. tap,shuffle), besides the clock and keypad feeds")
    parser.add_argument("--tolerance", type=float, default=1.0, help="seconds within which events match")
    parser.add_argument("--events", action="store_true", help="print the per-type event scores of each scenario")
    parser.add_argument("--model", type=Path, help="with --vision: the ONNX detector (default: the shipped INT8)")
    parser.add_argument("--vision", metavar="CALIB", help="derive from the edge's vision on each folder's video.mp4, "
                        "calibrated by DIR/CALIB (made by `floorman calibrate DIR/calibration.png`), instead of "
                        "from the truth frames")
    parser.add_argument("--states", metavar="NAME", help="with --vision: keep the vision's table states in DIR/NAME "
                        "and read them back on the next run made from the same video, detector, calibration and "
                        "vision code (re-scores the derivation in seconds; a change to the recognisers makes them "
                        "again)")
    parser.add_argument("--stale-states", action="store_true", help="with --states: read DIR/NAME back even when "
                        "the detector, calibration or vision code changed since it was made (same video; a warning "
                        "says what differs): re-scores the derivation alone while the recognisers are being changed")
    parser.add_argument("--view", nargs=2, action="append", default=[], metavar=("DIR", "CALIB"),
                        help="with --vision and one folder: the same scenario rendered from another camera (DIR, "
                        "calibrated by DIR/CALIB), read in step and fused with the first as `floorman edge --view` "
                        "fuses them (repeatable; with --states the fused states are kept)")
    parser.add_argument("--rulebook", metavar="R", help="check every scenario under this rulebook (a shipped id or a "
                        "YAML file) instead of its own; the expected alerts are those whose rule it checks")
    args = parser.parse_args(argv)
    if args.states is not None and args.vision is None:
        parser.error("--states needs --vision")
    if args.stale_states and args.states is None:
        parser.error("--stale-states needs --states")
    if args.view and (args.vision is None or len(args.folders) != 1):
        parser.error("--view needs --vision and one folder")
    logging.basicConfig(level=logging.WARNING)
    oracle = tuple(t for t in args.oracle.split(",") if t)
    scores = []
    try:
        if args.model is not None and not args.model.is_file():
            raise ConfigError(f"no such ONNX detector: {args.model}", field="--model")
        for folder in args.folders:
            calibration = None if args.vision is None else folder / args.vision
            if calibration is not None and not calibration.is_file():
                raise ConfigError(f"no such calibration file: {calibration} (CALIB is read in each folder: make "
                                  f"it with `floorman calibrate {folder / 'calibration.png'} --out {calibration}`)",
                                  field="--vision")
            score = evaluate_scenario(folder, oracle=oracle, tolerance_s=args.tolerance, calibration=calibration,
                                      model=args.model, states=args.states, stale_states=args.stale_states,
                                      rulebook=args.rulebook,
                                      views=[(Path(d), Path(d) / c) for d, c in args.view])
            scores.append(score)
            sys.stdout.write("\n".join(scenario_lines(score, events=args.events)) + "\n")
    except FloormanError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    except OSError as exc:  # a file the scenario's folder lacks or cannot be read, named (not a traceback)
        sys.stderr.write(f"error: {os_error_text(exc)}\n")
        return 2
    totals: dict[str, TypeScore] = {}
    for score in scores:
        for kind, value in score.events.items():
            totals.setdefault(kind, TypeScore()).add(value)
    sys.stdout.write("\n".join(summary_lines(scores, totals)) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
