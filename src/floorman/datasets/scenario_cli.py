"""`floorman datasets scenario` and `floorman datasets preview`: scripted scenarios to video and truth."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from floorman.core.errors import FloormanError


def register_scenario(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("scenario", help="render a scripted scenario to video.mp4 + truth.jsonl + frames.jsonl",
                            description="Render a scenario (a YAML file, or a bundled name) to DIR: video.mp4, "
                            "truth.jsonl (events then expected alerts), frames.jsonl (objects per frame) and a "
                            "copy of the spec. See docs/scenarios.md.")
    parser.add_argument("spec", nargs="?", help="scenario YAML file or bundled scenario name")
    parser.add_argument("--out", type=Path, help="output folder (must be empty unless --overwrite)")
    parser.add_argument("--size", help="image size WIDTHxHEIGHT (default: the scenario's camera size)")
    parser.add_argument("--truth-only", action="store_true", help="write the truth only, no video or frames")
    parser.add_argument("--overwrite", action="store_true", help="replace the scenario files in a non-empty folder")
    parser.add_argument("--list", action="store_true", help="list the bundled scenarios and exit")
    parser.set_defaults(handler=_scenario)

    preview = sub.add_parser("preview", help="render an annotated preview of a bundled scenario (make demo)",
                             description="Render a bundled scenario with its truth boxes, zones and captions "
                             "to DIR/preview.mp4.")
    preview.add_argument("--out", type=Path, required=True, help="output folder")
    preview.add_argument("--scenario", default=None, help="bundled scenario name or YAML file")
    preview.add_argument("--size", default="960x540", help="image size WIDTHxHEIGHT (default 960x540)")
    preview.set_defaults(handler=_preview)


def _size(text: str | None) -> tuple[int, int] | None:
    from floorman.datasets.scenario_render import parse_size

    if text is None:
        return None
    try:
        return parse_size(text)
    except ValueError as exc:
        raise FloormanError(f"--size: {exc}") from None


def _scenario(args: argparse.Namespace) -> int:
    if args.list:
        return _list()
    if args.spec is None or args.out is None:
        sys.stderr.write("floorman datasets scenario: give SPEC and --out DIR (or --list)\n")
        return 2
    from floorman.datasets.scenario_render import run_scenario

    run = run_scenario(args.spec, args.out, size=_size(args.size), truth_only=args.truth_only,
                       overwrite=args.overwrite)
    what = f"{run.size[0]}x{run.size[1]} {run.codec}" if run.rendered else "truth only"
    sys.stdout.write(f"{run.name}: {run.frames} frames, {run.events} events, {run.expected_alerts} expected "
                     f"alerts, {run.seconds:.1f} s ({what}) -> {run.out_dir}\n")
    return 0


def _list() -> int:
    from floorman.datasets.scenario import bundled_scenario_names, load_scenario
    from floorman.datasets.timeline import compile_timeline

    for name in bundled_scenario_names():
        timeline = compile_timeline(load_scenario(name))
        alerts = ", ".join(f"{a.rule.value}{'' if a.seat is None else f'@{a.seat}'}" for a in timeline.expected)
        sys.stdout.write(f"{name:28s} {timeline.spec.duration:5.1f} s  {alerts or '-'}\n")
    return 0


def _preview(args: argparse.Namespace) -> int:
    from floorman.datasets.preview import DEFAULT_PREVIEW, write_preview

    run = write_preview(args.out, scenario=args.scenario or DEFAULT_PREVIEW, size=_size(args.size))
    sys.stdout.write(f"wrote {run.path}: {run.name}, {run.frames} frames at {run.size[0]}x{run.size[1]}, "
                     f"{run.events} events, {run.expected_alerts} expected alerts, {run.seconds:.1f} s "
                     f"({run.frames / max(run.seconds, 1e-6):.1f} frames/s)\n")
    return 0
