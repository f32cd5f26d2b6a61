"""Rules checker throughput: events/s through the checker on one core, against the DESIGN.md target.

    .venv/bin/python benchmarks/rules.py [--repeat 10] [--rounds 5]

The events are the ground-truth streams of every bundled scenario (compiled without rendering), each replayed
through a fresh `RulesChecker` under the scenario's rulebook, `--repeat` times. Two measures:

- checker: decoded events (pydantic objects) in, alerts out: the hand state machine, every check the rulebook
  turns on, alert building and merging;
- decode + checker: the same from the JSON payloads the service receives (`decode_event` first).

Rates are per wall second and per CPU second of this single-threaded process. The machine may be shared: other
processes only ever slow a round down, so each measure runs `--rounds` rounds of `--repeat` replays, the two
measures interleaved round by round (the same conditions for both), and the table gives the best round of each
(as `timeit` does) and the median.
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
    """(events per wall second, events per CPU second, events) of one round."""
    wall, cpu = time.perf_counter(), time.process_time()
    count = work()
    return count / (time.perf_counter() - wall), count / (time.process_time() - cpu), count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=10, help="replays of the whole library per round (default 10)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per measure; the best is kept (default 5)")
    args = parser.parse_args()
    if args.repeat < 1 or args.rounds < 1:
        parser.error(f"expected --repeat and --rounds >= 1, got {args.repeat} and {args.rounds}")
    data = streams()
    payloads = [(book, [encode_event(e) for e in events]) for book, events in data]
    run_checker(data, 1)  # warm-up: imports, rulebook caches
    works: dict[str, Callable[[], int]] = {"checker": lambda: run_checker(data, args.repeat),
                                           "decode + checker": lambda: run_decode(payloads, args.repeat)}
    rounds: dict[str, list[tuple[float, float, int]]] = {name: [] for name in works}
    for _ in range(args.rounds):
        for name, work in works.items():
            rounds[name].append(measure(work))
    out = sys.stdout
    out.write(f"rules checker, {len(data)} scenario streams x {args.repeat} replays x {args.rounds} rounds, one "
              "thread (best round; median in brackets)\n")
    out.write(f"{'measure':18} {'events':>9} {'events/s (wall)':>16} {'events/s (CPU)':>24} {'target':>10} ok\n")
    for name, results in rounds.items():
        per_wall = max(r[0] for r in results)
        per_cpu = sorted(r[1] for r in results)
        best, median = per_cpu[-1], per_cpu[len(per_cpu) // 2]
        count = sum(r[2] for r in results)
        checker = name == "checker"
        verdict = ("yes" if best >= TARGET_EVENTS_PER_S else "no") if checker else "-"
        target = f">= {TARGET_EVENTS_PER_S:,.0f}" if checker else "-"
        cpu = f"{best:,.0f} [{median:,.0f}]"
        out.write(f"{name:18} {count:9d} {per_wall:16,.0f} {cpu:>24} {target:>10} {verdict}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
