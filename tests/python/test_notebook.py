"""The Jupyter view, by executing a notebook headlessly (nbclient + ipykernel): one
display, updated in place while the build runs, not a stream of printed lines."""
import os

import nbformat
import pytest
from nbclient import NotebookClient

pytest.importorskip("ipykernel")


class RecordingClient(NotebookClient):
    """Keeps the kinds of the messages that produced outputs."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.kinds = []

    def _update_display_id(self, display_id, msg):
        self.kinds.append(msg["header"]["msg_type"])
        return super()._update_display_id(display_id, msg)


def test_a_simulated_build_shows_one_display_updated_in_place():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "import trtwatch\n"
            "r = trtwatch.simulate('small-cnn', speed=3)\n"
            "import trtwatch._notebook as view\n"
            "print('status', r.status, 'updates', view.LAST_VIEW.updates)"),
    ]
    client = RecordingClient(nb, timeout=120, kernel_name="python3",
                             resources={"metadata": {"path": os.getcwd()}})
    client.execute(env=dict(os.environ))
    outputs = nb.cells[0].outputs
    displays = [o for o in outputs if o.output_type == "display_data"]
    streams = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert len(displays) == 1, outputs
    assert client.kinds.count("update_display_data") >= 2, client.kinds
    final = displays[0].data["text/plain"]
    assert "succeeded" in final, final
    assert "status succeeded" in streams, streams
    updates = int(streams.split("updates")[1])
    assert client.kinds.count("update_display_data") == updates
    assert streams.count("\n") < 5, "no printed progress lines"
