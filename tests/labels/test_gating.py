"""Gating on agreement: ``run_evals`` and ``tracescore experiments compare`` warn about judge
scorers that gate a result while their agreement with people is low or unknown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner

from tracescore import labels
from tracescore.cli import main
from tracescore.evals import run_evals
from tracescore.scoring import Judge, PromptStep, create_scorer
from tracescore.testing import Reply

from .conftest import write_scores

PEOPLE = [True] * 11 + [False] * 9
JUDGE = [1.0] * 10 + [0.0] + [1.0] * 2 + [0.0] * 7  # κ 0.69 with people


def _judge_scorer(url: str) -> Any:
    judge = Judge(model="openai/gpt-4o-mini", instructions="Grade.", api_base=url)
    return create_scorer("graded", judge=judge).generate_score(
        PromptStep("grade", lambda run, results: f"Grade: {run.output}"))


def _trusted(store: Any, traces: Any) -> None:
    ids = traces(20)
    write_scores(store, ids, JUDGE, scorer_id="graded")
    labels.create_schema(store, {"name": "ok", "kind": "boolean", "scorer_id": "graded"})
    labels.add(store, [{"trace_id": t, "schema": "ok", "value": p}
                       for t, p in zip(ids, PEOPLE, strict=True)])
    labels.refresh_agreement(store, resamples=200)


async def test_run_evals_warns_about_gating_judges(store: Any, traces: Any,
                                                   llm_server: Any) -> None:
    llm_server.set_default(lambda body: Reply(content={"score": 1}))
    code = create_scorer("short").generate_score(lambda run, results: 1.0)
    data = [{"input": "q1"}, {"input": "q2"}]
    kwargs: dict[str, Any] = {"store": store, "progress": False}
    unknown = await run_evals(lambda q: "a", data, scorers=[
        {"scorer": _judge_scorer(llm_server.url), "threshold": 0.5},
        {"scorer": code, "threshold": 0.5}], **kwargs)
    assert unknown.agreement_warnings == [
        "scorer 'graded' gates this result but its agreement with people is unknown (no labels "
        "of a schema that checks it)"]  # the code scorer calls no judge: not a question
    _trusted(store, traces)
    low = await run_evals(lambda q: "a", data, gates=[_judge_scorer(llm_server.url)],
                          agreement_floor=0.8, **kwargs)
    [line] = low.agreement_warnings
    assert line.startswith("scorer 'graded' gates this result but agrees with people κ 0.69 [")
    assert line.endswith("below the floor κ 0.8")
    fine = await run_evals(lambda q: "a", data, gates=[_judge_scorer(llm_server.url)],
                           agreement_floor=0.5, **kwargs)
    off = await run_evals(lambda q: "a", data, gates=[_judge_scorer(llm_server.url)],
                          agreement_floor=None, **kwargs)
    ungated = await run_evals(lambda q: "a", data, scorers=[_judge_scorer(llm_server.url)],
                              **kwargs)  # no threshold: it gates nothing
    assert fine.agreement_warnings == off.agreement_warnings == ungated.agreement_warnings == []


def test_experiments_compare_warns(tmp_path: Path, traces: Any, store: Any,
                                   llm_server: Any) -> None:
    llm_server.set_default(lambda body: Reply(content={"score": 1}))
    _trusted(store, traces)
    data = [{"input": "q1"}]
    for name in ("base", "cand"):
        result = run_evals_sync(store, llm_server.url, data, name)
        assert result.experiment_id is not None
    path = store.path
    store.close()  # the CLI opens the file itself
    runner = CliRunner()
    low = runner.invoke(main, ["experiments", "compare", "base", "cand", "--db", path,
                               "--agreement-floor", "0.8"])
    assert low.exit_code == 0, low.output
    assert "warning: scorer 'graded' gates this result but agrees with people κ 0.69" in \
        low.stderr
    fine = runner.invoke(main, ["experiments", "compare", "base", "cand", "--db", path,
                                "--agreement-floor", "0.5"])
    assert fine.exit_code == 0 and "warning" not in fine.stderr


def run_evals_sync(store: Any, url: str, data: list[dict[str, Any]], name: str) -> Any:
    from tracescore.evals import run_evals_sync as run

    return run(lambda q: "a", data, scorers=[_judge_scorer(url)], store=store,
               experiment=name, progress=False)
