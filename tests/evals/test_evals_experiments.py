"""run_evals(..., experiment=...) on a dataset in a database file, compare_experiments'
arithmetic, assert_no_regression, and the `tracescore experiments compare` gate's exit code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tracescore.cli import main
from tracescore.datasets import create_dataset, get_dataset, remove_items
from tracescore.evals import (
    EvalValidationError,
    ExperimentInfo,
    compare_experiments,
    compare_results,
    list_experiments,
    run_evals,
)
from tracescore.model import get_assistant_message, get_user_message
from tracescore.scoring import create_scorer
from tracescore.store import Store
from tracescore.testing import assert_no_regression

ANSWERS = {"Paris": "cloudy in Paris", "Lima": "sunny in Lima", "Oslo": "snow in Oslo"}


class WeatherAgent:
    """Answers from a table; ``broken`` cities get a wrong answer, ``crash`` cities raise."""

    def __init__(self, broken: tuple[str, ...] = (), crash: tuple[str, ...] = ()) -> None:
        self.broken, self.crash = broken, crash

    def generate(self, input: Any, **options: Any) -> str:
        city = get_user_message(input)
        if city in self.crash:
            raise RuntimeError(f"weather service down for {city}")
        return "no idea" if city in self.broken else ANSWERS[city]


def exact() -> Any:
    return create_scorer("exact", "equals ground truth").generate_score(
        lambda run, results: 1.0 if get_assistant_message(run.output) == run.ground_truth
        else 0.0)


def hallucination(rate: dict[str, float]) -> Any:
    """A lower-is-better scorer (the catalogue's id) scoring per city."""
    return create_scorer("hallucination-scorer", "fake").generate_score(
        lambda run, results: rate.get(get_user_message(run.input), 0.0))


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "exp.duckdb"
    create_dataset(path, "weather", items=[
        {"item_id": city.lower(), "input": city, "ground_truth": answer}
        for city, answer in ANSWERS.items()])
    return path


async def test_dataset_backed_runs_are_recorded_and_compared(db: Path) -> None:
    v1 = await run_evals(WeatherAgent(), "weather@1", scorers=[exact()], store=db,
                         experiment="v1", experiment_metadata={"prompt": "short"})
    v2 = await run_evals(WeatherAgent(broken=("Lima",)), get_dataset(db, "weather"),
                         scorers=[exact()], store=db, experiment="v2",
                         target_options={"model": "gpt-4o-mini"})
    assert v1.store_errors == [] and v2.store_errors == []
    assert v1.experiment_id and v2.experiment_id and v1.experiment_id != v2.experiment_id
    with Store(db) as store:
        runs = store.read("SELECT * FROM experiments ORDER BY created_at")
        results = store.read("SELECT item_id, score FROM experiment_results "
                             "WHERE experiment_id = ? ORDER BY item_id", [v2.experiment_id])
        scored = store.read("SELECT count(*) AS n FROM scores WHERE experiment_id = ?",
                            [v1.experiment_id])
        dataset_id = store.read("SELECT dataset_id FROM datasets")[0]["dataset_id"]
    assert [(r["name"], r["status"], r["item_count"], r["error_count"], r["dataset_version"],
             r["dataset_id"]) for r in runs] == [
        ("v1", "completed", 3, 0, 1, dataset_id), ("v2", "completed", 3, 0, 1, dataset_id)]
    assert runs[0]["finished_at"] >= runs[0]["created_at"]
    meta1, meta2 = (json.loads(r["metadata"]) for r in runs)
    assert meta1["prompt"] == "short" and meta1["dataset"] == "weather@1"
    assert meta2["model"] == "gpt-4o-mini" and meta1["git_commit"] == meta2["git_commit"]
    assert [(r["item_id"], r["score"]) for r in results] == [
        ("lima", 0.0), ("oslo", 1.0), ("paris", 1.0)]
    assert scored[0]["n"] == 3  # the scores rows carry the experiment id

    comparison = compare_experiments(db, "v1", "v2")
    exact_row = comparison.scorers["exact"]
    assert exact_row.baseline_avg == 1.0 and exact_row.candidate_avg == pytest.approx(2 / 3)
    assert exact_row.delta == pytest.approx(-1 / 3) and exact_row.regressed
    assert (exact_row.baseline_pass_rate, exact_row.candidate_pass_rate) == (1.0, 2 / 3)
    assert [i.item_id for i in comparison.items] == ["lima"]
    assert comparison.items[0].candidate_output[0]["content"] == "no idea"
    assert comparison.items[0].baseline_output[0]["content"] == "sunny in Lima"
    with pytest.raises(AssertionError, match=r"(?s)exact \(higher is better\).*item lima"):
        assert_no_regression(db, baseline="v1", candidate=v2)
    assert not assert_no_regression(db, baseline="v2", candidate=v1).regressed

    # a re-run of a name is a new experiment; the name then means the newest
    v1b = await run_evals(WeatherAgent(), "weather", scorers=[exact()], store=db,
                          experiment="v1")
    assert v1b.experiment_id != v1.experiment_id
    assert compare_experiments(db, "v1", v1.experiment_id).baseline.experiment_id == \
        v1b.experiment_id
    listed = list_experiments(db, dataset="weather")
    assert [e.name for e in listed] == ["v1", "v2", "v1"]  # newest first


async def test_target_errors_are_null_scores_counted_as_errors(db: Path) -> None:
    await run_evals(WeatherAgent(), "weather", scorers=[exact()], store=db, experiment="base")
    crashed = await run_evals(WeatherAgent(crash=("Oslo",)), "weather", scorers=[exact()],
                              store=db, experiment="cand")
    with Store(db) as store:
        row = store.read("SELECT score, error FROM experiment_results WHERE experiment_id = ? "
                         "AND item_id = 'oslo'", [crashed.experiment_id])
        errors = store.read("SELECT error_count FROM experiments WHERE name = 'cand'")
    assert row[0]["score"] is None and "weather service down" in row[0]["error"]
    assert errors[0]["error_count"] == 1
    scorer = compare_experiments(db, "base", "cand").scorers["exact"]
    assert scorer.candidate_avg == 1.0  # the error is not a zero in the average
    assert scorer.candidate_errors == 1 and scorer.candidate_pass_rate == pytest.approx(2 / 3)
    assert scorer.regressed  # but a third of the runs now error


async def test_removed_items_and_old_versions_are_what_runs(db: Path) -> None:
    remove_items(db, "weather", ["oslo"])
    new = await run_evals(WeatherAgent(), "weather", scorers=[exact()], store=db,
                          experiment="v2")
    old = await run_evals(WeatherAgent(), "weather@1", scorers=[exact()], store=db,
                          experiment="v1")
    assert (new.summary.total_items, old.summary.total_items) == (2, 3)
    with pytest.raises(EvalValidationError, match="pass store="):
        await run_evals(WeatherAgent(), [{"input": "Paris"}], scorers=[exact()],
                        experiment="x")


async def test_lower_is_better_and_the_cli_gate(db: Path) -> None:
    await run_evals(WeatherAgent(), "weather", scorers=[hallucination({"Lima": 0.1})],
                    store=db, experiment="v1")
    await run_evals(WeatherAgent(), "weather", scorers=[hallucination({"Lima": 0.9})],
                    store=db, experiment="v2")
    runner = CliRunner()
    worse = runner.invoke(main, ["experiments", "compare", "v1", "v2", "--db", str(db)])
    assert worse.exit_code == 1, worse.output
    assert "hallucination-scorer ↓" in worse.output and "REGRESSED" in worse.output
    better = runner.invoke(main, ["experiments", "compare", "v2", "v1", "--db", str(db),
                                  "--format", "markdown"])
    assert better.exit_code == 0, better.output
    assert "✅ **No regression**" in better.output
    loose = runner.invoke(main, ["experiments", "compare", "v1", "v2", "--db", str(db),
                                 "--threshold", "0.5", "--format", "json"])
    assert loose.exit_code == 0, loose.output  # the average rose 0.8 / 3 ≈ 0.27 < 0.5
    body = json.loads(loose.output)
    assert body["scorers"]["hallucination-scorer"]["lower_is_better"] is True
    assert body["regressed"] is False
    assert [i["item_id"] for i in body["items"]] == ["lima"]  # one item rose 0.8 > 0.5


def _info(name: str, **metadata: Any) -> ExperimentInfo:
    return ExperimentInfo(experiment_id=name, name=name, metadata=metadata)


def _rows(scores: dict[str, float | None], scorer: str = "s") -> list[dict[str, Any]]:
    return [{"item_id": item, "scorer_id": scorer, "score": score, "reason": None,
             "output": None, "error": None if score is not None else "boom"}
            for item, score in scores.items()]


def test_threshold_edges() -> None:
    base = _rows({"a": 0.8, "b": 0.8})
    at_edge = compare_results(_info("b"), base, _info("c"), _rows({"a": 0.75, "b": 0.75}),
                              threshold=0.05)
    assert at_edge.scorers["s"].delta == pytest.approx(-0.05)
    assert not at_edge.regressed and at_edge.items == []  # exactly the threshold: tolerated
    past = compare_results(_info("b"), base, _info("c"), _rows({"a": 0.74, "b": 0.75}),
                           threshold=0.05)
    assert past.regressed and [i.item_id for i in past.items] == ["a"]
    zero = compare_results(_info("b"), base, _info("c"), _rows({"a": 0.8, "b": 0.79}),
                           threshold=0.0)
    assert zero.regressed and zero.regressed_scorers == ["s"]
    better = compare_results(_info("b"), base, _info("c"), _rows({"a": 1.0, "b": 1.0}))
    assert not better.regressed and better.scorers["s"].delta == pytest.approx(0.2)


def test_nulls_are_errors_not_zeros() -> None:
    base = _rows({"a": 1.0, "b": 0.6, "c": 0.6, "d": 0.6})
    cand = _rows({"a": None, "b": 0.6, "c": 0.6, "d": 0.6})
    result = compare_results(_info("b"), base, _info("c"), cand, threshold=0.3)
    s = result.scorers["s"]
    assert s.candidate_avg == pytest.approx(0.6)  # over the three scores, not 1.8 / 4
    assert (s.candidate_errors, s.candidate_count) == (1, 4)
    assert s.candidate_pass_rate == 0.75 and s.baseline_pass_rate == 1.0
    assert not s.regressed  # 0.6 - 0.7 is within 0.3 and a quarter errored (< 0.3)
    assert result.items[0].item_id == "a" and result.items[0].drops[0].drop is None
    assert result.items[0].drops[0].candidate_error == "boom"
    stricter = compare_results(_info("b"), base, _info("c"), cand, threshold=0.2)
    assert stricter.regressed  # the error rate rose by 0.25 > 0.2


def test_lower_is_better_direction_and_given_thresholds() -> None:
    base = _rows({"a": 0.1, "b": 0.2}, scorer="toxicity-scorer")
    rising = _rows({"a": 0.5, "b": 0.2}, scorer="toxicity-scorer")
    result = compare_results(_info("b"), base, _info("c"), rising)
    tox = result.scorers["toxicity-scorer"]
    assert tox.lower_is_better and tox.delta == pytest.approx(0.2) and tox.regressed
    assert result.items[0].drops[0].drop == pytest.approx(0.4)
    assert tox.candidate_pass_rate == 1.0  # 0.5 <= 0.5 passes a lower-is-better scorer
    falling = compare_results(_info("b"), rising, _info("c"), base)
    assert not falling.regressed
    custom = compare_results(_info("b"), _rows({"a": 0.3}, "mine"), _info("c"),
                             _rows({"a": 0.6}, "mine"), lower_is_better=["mine"])
    assert custom.scorers["mine"].regressed
    strict = compare_results(_info("b", thresholds={"s": {"min": 0.9, "max": 1.0}}),
                             _rows({"a": 0.8, "b": 0.95}), _info("c"),
                             _rows({"a": 0.8, "b": 0.95}))
    assert strict.scorers["s"].baseline_pass_rate == 0.5  # the run's threshold decides
    assert strict.scorers["s"].candidate_pass_rate == 1.0  # default: >= 0.5
    with pytest.raises(EvalValidationError, match="threshold must be a number >= 0"):
        compare_results(_info("b"), base, _info("c"), base, threshold=-1)
