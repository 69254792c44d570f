"""Issue 27 defects 3, 5, 6 and 7: API bodies, datasets and experiments, against a real server.

On the old code: ``/api/*`` bodies had no size limit (2,000,000 tiny dataset items took 6 GB and
360 s); a dataset answered every item of its version to every change and read (past ~100 MB it
could not be read, and the write that crossed the line answered 500 after it committed); one
experiment row with ``metadata: "just text"`` made ``GET /api/experiments`` a 500 for everyone;
a missing ``experiment_id``, a result without ``item_id``, ``item_count`` 2^40 and items nested
300 levels deep were 500s; names with ``/``, ``..``, NUL, newlines or 100,000 characters were
stored; concurrent appenders were answered another request's version; a re-posted experiment
stored its results again; an empty ``items`` list made a new identical version.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from server_process import ServerProcess, running_server, sql

from tracescore.datasets import get_dataset

MAX_BODY = 2 * 1024 * 1024
MAX_ITEMS = 1000
MAX_VALUE = 4096
PAGE_BYTES = 1024 * 1024


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One server with small limits, shared by the tests of this module."""
    root = tmp_path_factory.mktemp("api-bodies")
    config = root / "limits.toml"
    config.write_text(
        f"[server]\napi_max_body_bytes = {MAX_BODY}\napi_max_items = {MAX_ITEMS}\n"
        f"max_attribute_bytes = {MAX_VALUE}\nsql_max_bytes = {PAGE_BYTES}\n"
        "[live]\nenabled = false\n"
    )
    with running_server(root / "bodies.duckdb", args=["--config", str(config)]) as running:
        yield running


def post(server: ServerProcess, path: str, **kwargs: Any) -> httpx.Response:
    return httpx.post(f"{server.url}{path}", timeout=120, **kwargs)


def error(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text[:500]
    message: str = response.json()["error"]["message"]
    return message


def alive(server: ServerProcess) -> None:
    assert server.process is not None and server.process.poll() is None
    assert httpx.get(f"{server.url}/healthz", timeout=10).status_code == 200


# -- defect 3: body limits -------------------------------------------------------------------


def test_a_body_over_api_max_body_bytes_is_refused_before_parsing(server: ServerProcess) -> None:
    items = [{"input": "x" * 1000} for _ in range(3000)]  # ~3 MB
    message = error(post(server, "/api/datasets", json={"name": "too-big", "items": items}), 413)
    assert "api_max_body_bytes" in message and str(MAX_BODY) in message
    message = error(post(server, "/api/sql", json={"sql": "SELECT 1 -- " + "x" * MAX_BODY}), 413)
    assert "larger than" in message
    # without Content-Length (chunked), the limit is counted while reading
    chunks = (b'{"name": "chunked", "items": [' + b'{"input": "' + b"y" * 60_000 + b'"},'
              for _ in range(40))
    error(post(server, "/api/datasets", content=chunks,
               headers={"content-type": "application/json"}), 413)
    assert httpx.get(f"{server.url}/api/datasets/too-big", timeout=10).status_code == 404
    alive(server)


def test_too_many_items_in_one_request_are_refused(server: ServerProcess) -> None:
    tiny = [{"input": i} for i in range(MAX_ITEMS + 1)]
    message = error(post(server, "/api/datasets", json={"name": "many", "items": tiny}), 413)
    assert "`items`" in message and "api_max_items" in message
    scores = [{"score_id": str(i)} for i in range(MAX_ITEMS + 1)]
    assert "`scores`" in error(post(server, "/api/scores", json={"scores": scores}), 413)
    ids = [str(i) for i in range(MAX_ITEMS + 1)]
    error(post(server, "/api/datasets/many/remove", json={"item_ids": ids}), 413)
    # at the cap it is accepted
    created = post(server, "/api/datasets", json={"name": "many", "items": tiny[:MAX_ITEMS]})
    assert created.status_code == 200, created.text[:300]
    assert created.json()["item_count"] == MAX_ITEMS


# -- defect 6: experiments validated on write, odd rows tolerated on read ---------------------


def experiment(**fields: Any) -> dict[str, Any]:
    return {"experiment_id": uuid.uuid4().hex, "name": "exp", **fields}


@pytest.mark.parametrize(("body", "words"), [
    ({"experiment": {"name": "no-id"}}, "experiment_id"),
    ({"experiment": experiment(), "results": [{"scorer_id": "s", "score": 1}]}, "item_id"),
    ({"experiment": experiment(item_count=2**40)}, "item_count"),
    ({"experiment": experiment(metadata="just text")}, "metadata"),
    ({"experiment": experiment(), "results": [{"item_id": "a", "scorer_id": "s",
                                               "experiment_id": "another"}]}, "experiment_id"),
    ({"experiment": experiment(unknown=1)}, "unknown"),
])
def test_bad_experiments_are_400_with_a_sentence(server: ServerProcess, body: dict[str, Any],
                                                 words: str) -> None:
    message = error(post(server, "/api/experiments", json=body), 400)
    assert words in message
    listed = httpx.get(f"{server.url}/api/experiments", timeout=30)
    assert listed.status_code == 200, listed.text[:300]


def test_items_nested_300_levels_are_400(server: ServerProcess) -> None:
    deep: Any = 0
    for _ in range(300):
        deep = [deep]
    message = error(post(server, "/api/datasets", json={"name": "deep",
                                                       "items": [{"input": deep}]}), 400)
    assert "deeper than" in message
    alive(server)


def test_a_stored_odd_experiment_row_does_not_break_the_listing(tmp_path: Path) -> None:
    from tracescore.store import Store, experiment_writer

    db = tmp_path / "odd.duckdb"
    with Store(db) as store:  # rows as the old server accepted them
        store.write_sync(experiment_writer({"experiment_id": "odd", "name": "odd",
                                            "metadata": "just text"}))
        store.write_sync(experiment_writer({"experiment_id": "ok", "name": "ok",
                                            "metadata": {"model": "m"}}))
    with running_server(db) as server:
        listed = httpx.get(f"{server.url}/api/experiments", timeout=30)
        assert listed.status_code == 200, listed.text[:300]
        by_id = {row["experiment_id"]: row for row in listed.json()["experiments"]}
        assert by_id["odd"]["metadata"] == {"value": "just text"}
        assert by_id["ok"]["metadata"] == {"model": "m"}


# -- defect 7: names, versions, repeats ------------------------------------------------------


BAD_NAMES = ["a/b", "../etc", "a..b", "", "   ", "nul\x00name", "two\nlines", "n" * 100_000,
             "x@3", "tab\tname", "frag#1", "q?x=1", "back\\slash", "50%"]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_names_outside_the_rule_are_refused(server: ServerProcess, name: str) -> None:
    message = error(post(server, "/api/datasets", json={"name": name, "items": []}), 400)
    assert "letters and digits" in message
    assert len(message) < 1000  # a 100,000-character name is not echoed whole
    message = error(post(server, "/api/experiments",
                         json={"experiment": experiment(name=name)}), 400)
    assert "letters and digits" in message and len(message) < 1000


def test_good_names_are_reachable(server: ServerProcess) -> None:
    for name in ("qa v2 (prod)", "Données-été_2025", "a.b:c+d=e,f1"):
        assert post(server, "/api/datasets", json={"name": name}).status_code == 200
        read = httpx.get(f"{server.url}/api/datasets/{quote(name, safe='')}", timeout=30)
        assert read.status_code == 200 and read.json()["name"] == name


def test_each_concurrent_appender_gets_the_version_it_made(server: ServerProcess) -> None:
    assert post(server, "/api/datasets", json={"name": "race"}).status_code == 200

    def append(index: int) -> tuple[int, list[dict[str, Any]]]:
        mine = [{"item_id": f"r{index}-{k}", "input": k} for k in range(5)]
        response = post(server, "/api/datasets/race/items", json={"items": mine})
        assert response.status_code == 200, response.text[:300]
        answer = response.json()
        return answer["version"], answer["items"]

    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(append, range(32)))
    versions = [version for version, _ in answers]
    assert sorted(versions) == list(range(2, 34))
    for index, (version, items) in enumerate(answers):
        added = {item["item_id"]: item["version_added"] for item in items}
        assert all(added[f"r{index}-{k}"] == version for k in range(5)), (index, version)


def test_an_empty_items_list_makes_no_version(server: ServerProcess) -> None:
    post(server, "/api/datasets", json={"name": "steady", "items": [{"input": 1}]})
    for body in ({"items": []}, {"from_trace_ids": []}):
        answer = post(server, "/api/datasets/steady/items", json=body).json()
        assert answer["version"] == 1 and answer["current_version"] == 1
    answer = post(server, "/api/datasets/steady/remove", json={"item_ids": []}).json()
    assert answer["version"] == 1


def test_an_experiment_without_a_start_time_gets_the_time_it_arrived(
        server: ServerProcess) -> None:
    """A run stored with no ``created_at`` had no place on the Experiments page's time axis
    and broke its chart (found by the stored-XSS test); the server now stamps it."""
    for row in (experiment(name="no-start"), experiment(name="null-start", created_at=None)):
        assert post(server, "/api/experiments", json={"experiment": row}).status_code == 200
        [[stamped]] = sql(server, "SELECT created_at IS NOT NULL FROM experiments WHERE "
                          "experiment_id = ?", [row["experiment_id"]])
        assert stamped, row["name"]


def test_a_reposted_experiment_stores_its_results_once(server: ServerProcess) -> None:
    row = experiment(name="repost")
    results = [{"item_id": str(i), "scorer_id": s, "score": 0.5}
               for i in range(10) for s in ("a", "b")]
    results += [{"item_id": "0", "scorer_id": "a", "repetition": 1, "score": 0.7}]
    for _ in range(4):
        response = post(server, "/api/experiments", json={"experiment": row,
                                                          "results": results})
        assert response.status_code == 200, response.text[:300]
    [[count]] = sql(server, "SELECT count(*) FROM experiment_results WHERE experiment_id = ?",
                    [row["experiment_id"]])
    assert count == 21
    # a re-post with a changed score replaces the stored one
    changed = [{**results[0], "score": 0.1}]
    post(server, "/api/experiments", json={"experiment": row, "results": changed})
    assert sql(server, "SELECT score FROM experiment_results WHERE experiment_id = ? AND "
                       "item_id = '0' AND scorer_id = 'a' ORDER BY repetition",
               [row["experiment_id"]]) == [[0.1], [0.7]]


# -- defect 5: dataset values cut, reads paged, answers bounded -------------------------------


def test_long_item_values_are_cut_with_a_marker(server: ServerProcess) -> None:
    long = "é" * MAX_VALUE  # 2 bytes each: twice the limit
    answer = post(server, "/api/datasets", json={"name": "long", "items": [
        {"item_id": "a", "input": [{"role": "user", "content": long}], "ground_truth": "ok",
         "metadata": {"tag": "t"}}]}).json()
    item = answer["items"][0]
    content = item["input"][0]["content"]
    assert len(content.encode()) <= MAX_VALUE and content == "é" * (MAX_VALUE // 2)
    assert item["metadata"] == {"tag": "t", "tracescore.truncated": ["input[0].content"]}
    assert item["ground_truth"] == "ok"


def test_dataset_reads_are_paged_and_answers_stay_bounded(server: ServerProcess) -> None:
    items = [{"item_id": f"p{i}", "input": "v" * 2000} for i in range(MAX_ITEMS)]
    assert post(server, "/api/datasets", json={"name": "paged", "items": items}).status_code \
        == 200
    for batch in range(2):
        more = [{"item_id": f"q{batch}-{i}", "input": "w" * 2000} for i in range(MAX_ITEMS)]
        answer = post(server, "/api/datasets/paged/items", json={"items": more}).json()
    # the answer of a change is one page: its size does not grow with the dataset
    assert answer["version"] == 3 and answer["item_count"] == 3 * MAX_ITEMS
    assert len(answer["items"]) == MAX_ITEMS and answer["next_offset"] == MAX_ITEMS
    page = httpx.get(f"{server.url}/api/datasets/paged", params={"limit": 100, "offset": 50},
                     timeout=30).json()
    assert [i["item_id"] for i in page["items"]] == [f"p{i}" for i in range(50, 150)]
    assert page["offset"] == 50 and page["next_offset"] == 150
    # a page stops past sql_max_bytes of item text, whatever the limit
    big = httpx.get(f"{server.url}/api/datasets/paged", params={"limit": 10_000}, timeout=30)
    assert len(big.content) < 2 * PAGE_BYTES and big.json()["next_offset"] is not None
    # the Python client reads every page
    whole = get_dataset(server.url, "paged")
    assert len(whole.items) == 3 * MAX_ITEMS and whole.next_offset is None
    assert len({item.item_id for item in whole.items}) == 3 * MAX_ITEMS
