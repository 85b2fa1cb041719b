"""The phase-tree contract (tests/contract/phase_tree/README.md) run by the notebook
view's fold of the event stream. The view is pure Python: it is loaded from its file, so
this test needs neither the built module nor IPython."""
import importlib.util
import json
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "tests" / "contract" / "phase_tree"
CASES = sorted(p.stem for p in CONTRACT.glob("*.jsonl"))


def _notebook_module():
    spec = importlib.util.spec_from_file_location("trtwatch_notebook_view", ROOT / "python" / "trtwatch" / "_notebook.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class QuietView(_notebook_module().NotebookView):
    """The view without a display: the fold alone."""

    def _show(self, force):
        pass


def test_the_contract_has_its_streams():
    assert len(CASES) >= 9, CONTRACT


@pytest.mark.parametrize("name", CASES)
def test_phase_tree_contract(name):
    view = QuietView()
    for line in (CONTRACT / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
        view(json.loads(line))
    expected = json.loads((CONTRACT / f"{name}.json").read_text(encoding="utf-8"))
    summary = {"phases_started": view.phases_started, "phases_finished": view.phases_finished,
               "finished": view.status is not None, "status": view.status}
    assert {"active": view.active_tree(), "summary": summary} == {
        "active": expected["active"], "summary": expected["summary"]}, expected["description"]


def test_the_text_nests_a_child_under_its_parent_when_a_later_root_started_first():
    view = QuietView()
    for line in (CONTRACT / "nested.jsonl").read_text(encoding="utf-8").splitlines():
        view(json.loads(line))
    names = [line.split("[")[0].rstrip() for line in view.text().splitlines()[1:]]
    assert names == ["Building engine", "  Computing profile costs", "  Timing graph nodes", "Writing timing cache"]
