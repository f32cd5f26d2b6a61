"""Text of the derivation evaluation: one line per scenario, per-type event scores, and the totals."""

from __future__ import annotations

from collections.abc import Sequence

from floorman.evaluation.derivation import ScenarioScore, TypeScore


def scenario_lines(score: ScenarioScore, *, events: bool = False) -> list[str]:
    alerts = score.alerts
    met = sum(1 for o in alerts.outcomes if o.met_by is not None)
    lines = [f"{score.name:<26} {score.frames:5d} frames  alerts: {met}/{len(alerts.outcomes)} expected met, "
             f"{alerts.raised} raised, precision {alerts.precision:.2f} recall {alerts.recall:.2f}"]
    lines += [f"    unexpected {r.alert.rule.value} seat {r.alert.seat} at {r.raised_at:.2f}s: "
              f"{r.alert.explanation.en[:90]}" for r in alerts.unexpected]
    lines += [f"    missed {o.expected.rule.value} seat {o.expected.seat} in [{o.expected.t_start:.1f}, "
              f"{o.expected.t_end:.1f}]" for o in alerts.outcomes if o.met_by is None]
    if events:
        lines += [type_line(kind, value, indent=4) for kind, value in score.events.items()]
        names = score.names
        if names.truth:
            wrong = f" ({', '.join(names.misread)})" if names.misread else ""
            lines.append(f"    face-up names  {names.right} right, {names.wrong} wrong{wrong}, {names.unread} unread, "
                         f"{names.missed} not derived of {names.truth}")
    return lines


def type_line(kind: str, value: TypeScore, *, indent: int = 2) -> str:
    return (f"{' ' * indent}{kind:<14} truth {value.truth:4d}  derived {value.derived:4d}  matched {value.matched:4d}"
            f"  precision {value.precision:.2f}  recall {value.recall:.2f}  median delay {value.median_delay:+.2f}s")


def summary_lines(scores: Sequence[ScenarioScore], totals: dict[str, TypeScore]) -> list[str]:
    expected = sum(len(s.alerts.outcomes) for s in scores)
    met = sum(1 for s in scores for o in s.alerts.outcomes if o.met_by is not None)
    raised = sum(s.alerts.raised for s in scores)
    matched = sum(1 for s in scores for o in s.alerts.outcomes if o.met_by is not None)
    precision = 1.0 if raised == 0 else matched / raised
    recall = 1.0 if expected == 0 else met / expected
    lines = [f"\n{len(scores)} scenarios: alerts {met}/{expected} expected met, {raised} raised: precision "
             f"{precision:.3f}, recall {recall:.3f}", "events by type (all scenarios):"]
    lines += [type_line(kind, value) for kind, value in sorted(totals.items())]
    return lines
