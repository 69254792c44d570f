"""A scorer's version hashes its source: editing its code makes a new version (a rename or new
arguments did before; an edited step function did not)."""

from __future__ import annotations

from pathlib import Path

from tracescore.live import Registry, load_live_config
from tracescore.scoring import create_scorer

SOURCE = '''
from tracescore import create_scorer


def length_check(limit=10):
    return create_scorer("length", "short answers").generate_score(
        lambda run, results: 1.0 if len(str(run.output)) < limit else {score})
'''


def version_of(tmp_path: Path, score: str) -> str:
    (tmp_path / "mine.py").write_text(SOURCE.format(score=score))
    _, registry = load_live_config({"scorers": [{"use": "mine.py:length_check"}]},
                                   base_dir=tmp_path)
    reg = registry.get("length")
    assert reg is not None
    return reg.version


def test_editing_a_scorers_code_makes_a_new_version(tmp_path: Path) -> None:
    first = version_of(tmp_path, "0.0")
    assert version_of(tmp_path, "0.0") == first  # the same code, the same version
    assert version_of(tmp_path, "0.5") != first  # the step's code changed
    (tmp_path / "unrelated.py").write_text("x = 1\n")
    assert version_of(tmp_path, "0.0") == first


def test_scorers_registered_from_python_hash_their_functions_files(tmp_path: Path) -> None:
    scorer = create_scorer("py", "x").generate_score(lambda run, results: 1.0)
    one, two = Registry(), Registry()
    assert one.register(scorer).version == two.register(scorer).version
    assert Registry().register(scorer, sample=[{"where": "true", "rate": 0.5}]).version != (
        one.get("py").version)  # type: ignore[union-attr]
