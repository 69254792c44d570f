"""A Judge with a model starts importing litellm on a background thread, once per process;
loading it freezes the heap it leaves."""

from __future__ import annotations

import subprocess
import sys


def in_fresh_process(code: str) -> str:
    """Run ``code`` in a new interpreter (litellm not yet imported); its stdout."""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=180)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_a_judge_with_a_model_imports_litellm_in_the_background() -> None:
    code = (
        "import sys, threading\n"
        "from tracescore.scoring import Judge\n"
        "Judge()  # no model: nothing to warm\n"
        "assert 'litellm' not in sys.modules\n"
        "Judge(model='openai/gpt-4o-mini')\n"
        "[t] = [t for t in threading.enumerate() if t.name == 'tracescore-litellm-import']\n"
        "Judge(model='openai/gpt-4o-mini')  # once per process\n"
        "assert sum(t.name == 'tracescore-litellm-import' for t in threading.enumerate()) <= 1\n"
        "t.join(120)\n"
        "assert 'litellm' in sys.modules\n"
        "print('ok')\n"
    )
    assert in_fresh_process(code).strip() == "ok"


def test_loading_litellm_takes_its_objects_out_of_full_collections() -> None:
    code = (
        "import gc\n"
        "from tracescore.scoring import load_litellm\n"
        "assert gc.get_freeze_count() == 0\n"
        "load_litellm()\n"
        "frozen = gc.get_freeze_count()\n"
        "load_litellm()  # once per process\n"
        "assert gc.get_freeze_count() == frozen\n"
        "print(frozen, len(gc.get_objects()))\n"
    )
    frozen, left = map(int, in_fresh_process(code).split())
    # litellm's import leaves several hundred thousand objects; a full collection now walks
    # only what was made since.
    assert frozen > 100_000 and left < frozen / 10
