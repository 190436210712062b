"""Items that answer a user's choice from the decision table (each arm's value and 95% interval per
requirement, judged against the budget):

- `best_within`: of the arms that meet the `within` requirements, the best on `choose` (the fastest
  within the KL budget; the smallest within the decode budget). Confirmed when its interval clears
  the runner-up's, inconclusive when they overlap, refuted when no arm meets the requirements.
- `engine_vs_quantization`: from the baseline arm, does the best change of engine (same precision,
  another engine) gain more on `choose` than the best change of quantization (same engine, fewer
  bits)? Confirmed or refuted when the two best arms' intervals are apart, else inconclusive.
"""

from __future__ import annotations

import pandas as pd

from edgebench.decision import MET
from edgebench.metrics import METRICS, lower_is_better


def _cells(frame: pd.DataFrame, metric: str) -> pd.DataFrame:
    cells = frame[frame["metric"] == metric].set_index("arm")
    if cells.empty:
        raise ValueError(f"the decision table has no {metric!r} requirement; add it to config.requirements")
    return cells


def _ranked(cells: pd.DataFrame, metric: str) -> pd.DataFrame:
    measured = cells[cells["value"].notna()]
    return measured.sort_values("value", ascending=lower_is_better(metric))


def _clear(best: pd.Series, other: pd.Series, metric: str) -> bool:
    """Whether best's interval lies wholly on the better side of other's."""
    if lower_is_better(metric):
        return bool(best["high"] < other["low"])
    return bool(best["low"] > other["high"])


def _shown(row: pd.Series, metric: str) -> str:
    unit = METRICS[metric].unit
    return f"{row.name} at {row['value']:.3g} {unit} [{row['low']:.3g}, {row['high']:.3g}]"


def best_within(frame: pd.DataFrame, item: dict) -> tuple[str, pd.DataFrame]:
    choose, within = item["verify"]["choose"], item["verify"]["within"]
    arms = item["starts_from"]["arms"]
    frame = frame[frame["arm"].isin(arms)]
    meets = set(arms)
    for metric in within:
        cells = _cells(frame, metric)
        meets &= set(cells.index[cells["verdict"] == MET])
    ranked = _ranked(_cells(frame, choose), choose)
    candidates = ranked[ranked.index.isin(meets)]
    evidence = ranked.reset_index()[["arm", "value", "low", "high", "n"]].assign(
        meets=lambda t: t["arm"].isin(meets)
    )
    if candidates.empty:
        why = f"no arm meets {', '.join(within)}"
        return "refuted", evidence.assign(why=why)
    best = candidates.iloc[0]
    if len(candidates) == 1:
        return "confirmed", evidence.assign(
            why=f"{_shown(best, choose)} is the only arm that meets {', '.join(within)}"
        )
    runner = candidates.iloc[1]
    why = f"{_shown(best, choose)}; next {_shown(runner, choose)}"
    return ("confirmed" if _clear(best, runner, choose) else "inconclusive"), evidence.assign(why=why)


def engine_vs_quantization(frame: pd.DataFrame, item: dict) -> tuple[str, pd.DataFrame]:
    choose = item["verify"]["choose"]
    baseline = item["starts_from"]["arms"][0]
    cells = _cells(frame, choose)
    groups = {
        "engine change": item["verify"]["engine_changes"],
        "quantization change": item["verify"]["quantization_changes"],
    }
    best = {}
    for name, arms in groups.items():
        ranked = _ranked(cells[cells.index.isin(arms)], choose)
        if ranked.empty:
            evidence = pd.DataFrame([{"why": f"no {name} arm was measured on {choose}"}])
            return "inconclusive", evidence
        best[name] = ranked.iloc[0]
    rows = [
        {"change": name, "arm": row.name, "value": row["value"], "low": row["low"], "high": row["high"]}
        for name, row in best.items()
    ]
    if baseline in cells.index:
        base = cells.loc[baseline]
        rows.append(
            {
                "change": "baseline",
                "arm": baseline,
                "value": base["value"],
                "low": base["low"],
                "high": base["high"],
            }
        )
    evidence = pd.DataFrame(rows)
    engine, quantization = best["engine change"], best["quantization change"]
    why = f"best engine change {_shown(engine, choose)}; "
    why += f"best quantization change {_shown(quantization, choose)}"
    if _clear(engine, quantization, choose):
        return "confirmed", evidence.assign(why=why)
    if _clear(quantization, engine, choose):
        return "refuted", evidence.assign(why=why)
    return "inconclusive", evidence.assign(why=why)


CHOICES = {"best_within": best_within, "engine_vs_quantization": engine_vs_quantization}
