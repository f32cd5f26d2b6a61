"""Rules checker throughput: events/s through the checker on one core, against the DESIGN.md target.

    .venv/bin/python benchmarks/rules.py [--repeat 30]

The events are the ground-truth streams of every bundled scenario (compiled without rendering), each replayed
through a fresh `RulesChecker` under the scenario's rulebook, `--repeat` times. Two measures:

- checker: decoded events (pydantic objects) in, alerts out: the hand state machine, every check the rulebook
  turns on, alert building and merging;
- decode + checker: the same from the JSON payloads the service receives (`decode_event` first).

Rates are per wall second and per CPU second of this single-threaded process (the machine may be shared).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable

from floorman.core.events import EventBase, decode_event, encode_event
from floorman.datasets.scenario import bundled_scenario_names, load_scenario
from floorman.datasets.timeline import compile_timeline
from floorman.rules.checker import RulesChecker
from floorman.rules.rulebook import Rulebook, load_rulebook

TARGET_EVENTS_PER_S = 100_000.0

Streams = list[tuple[Rulebook, list[EventBase]]]


def streams() -> Streams:
    out: Streams = []
    for name in bundled_scenario_names():
        timeline = compile_timeline(load_scenario(name))
        out.append((load_rulebook(timeline.spec.rulebook), list(timeline.events)))
    return out


def run_checker(data: Streams, repeat: int) -> int:
    count = 0
    for _ in range(repeat):
        for book, events in data:
            checker = RulesChecker(rulebook=book)
            for event in events:
                checker.process(event)
            checker.flush()
            count += len(events)
    return count


def run_decode(payloads: list[tuple[Rulebook, list[bytes]]], repeat: int) -> int:
    count = 0
    for _ in range(repeat):
        for book, items in payloads:
            checker = RulesChecker(rulebook=book)
            for payload in items:
                checker.process(decode_event(payload))
            checker.flush()
            count += len(items)
    return count


def measure(work: Callable[[], int]) -> tuple[float, float, int]:
    """(events per wall second, events per CPU second, events)."""
    wall, cpu = time.perf_counter(), time.process_time()
    count = work()
    return count / (time.perf_counter() - wall), count / (time.process_time() - cpu), count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=30, help="replays of the whole library (default 30)")
    args = parser.parse_args()
    data = streams()
    payloads = [(book, [encode_event(e) for e in events]) for book, events in data]
    run_checker(data, 1)  # warm-up: imports, rulebook caches
    rows = [("checker", *measure(lambda: run_checker(data, args.repeat))),
            ("decode + checker", *measure(lambda: run_decode(payloads, args.repeat)))]
    out = sys.stdout
    out.write(f"rules checker, {len(data)} scenario streams x {args.repeat} replays, one thread\n")
    out.write(f"{'measure':18} {'events':>9} {'events/s (wall)':>16} {'events/s (CPU)':>15} {'target':>10} ok\n")
    for name, per_wall, per_cpu, count in rows:
        verdict = "yes" if per_cpu >= TARGET_EVENTS_PER_S else "no"
        target = f">= {TARGET_EVENTS_PER_S:,.0f}" if name == "checker" else "-"
        if name != "checker":
            verdict = "-"
        out.write(f"{name:18} {count:9d} {per_wall:16,.0f} {per_cpu:15,.0f} {target:>10} {verdict}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
