"""The shared ONNX runtime: a file is loaded once per process, only when its bytes are the ones recorded, with the
threads asked for, and nothing of ONNX Runtime is imported before the first load."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from contracts.errors import CiteboundError
from stages.adapters import onnx_runtime
from stages.adapters.onnx_runtime import OnnxModelError, load_session, write_model

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[3]


def _tiny_model(offset: float) -> bytes:
    """y = x + offset, float32 [n]: a real ONNX graph, different bytes per offset."""
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "offset"], ["y"])], "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])],
        [numpy_helper.from_array(np.array([offset], dtype=np.float32), "offset")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


def test_a_model_written_and_loaded_by_its_hash_runs_and_is_loaded_once(tmp_path):
    data = _tiny_model(2.0)
    sha = write_model(tmp_path / "tiny.onnx", data)
    assert sha == hashlib.sha256(data).hexdigest() and (tmp_path / "tiny.onnx").read_bytes() == data
    assert [p.name for p in tmp_path.iterdir()] == ["tiny.onnx"], "no temp file is left behind"
    session = load_session(tmp_path / "tiny.onnx", sha)
    (y,) = session.run(None, {"x": np.array([1.0, 5.0], dtype=np.float32)})
    assert y.tolist() == [3.0, 7.0]
    assert load_session(str(tmp_path / "tiny.onnx"), sha.upper()) is session, "one session per (path, sha256)"
    assert (str((tmp_path / "tiny.onnx").resolve()), sha) in onnx_runtime.loaded_sessions()


def test_threads_are_the_callers_choice(tmp_path):
    sha = write_model(tmp_path / "tiny.onnx", _tiny_model(1.0))
    one = load_session(tmp_path / "tiny.onnx", sha, threads=1)
    two = load_session(tmp_path / "tiny.onnx", sha, threads=2)
    assert one is not two
    assert one.get_session_options().intra_op_num_threads == 1
    assert two.get_session_options().intra_op_num_threads == 2
    assert one.get_session_options().inter_op_num_threads == 1


def test_changed_bytes_are_refused_with_the_files_name(tmp_path):
    path = tmp_path / "verifier.onnx"
    sha = write_model(path, _tiny_model(1.0))
    path.write_bytes(_tiny_model(9.0))  # replaced after its hash was recorded
    with pytest.raises(OnnxModelError) as caught:
        load_session(path, sha)
    assert isinstance(caught.value, CiteboundError)
    assert str(caught.value).startswith(str(path.resolve())) and "not the recorded" in str(caught.value)


def test_a_missing_or_unloadable_file_is_the_same_named_error(tmp_path):
    with pytest.raises(OnnxModelError, match="cannot read"):
        load_session(tmp_path / "absent.onnx", "0" * 64)
    junk = b"this is not an ONNX graph"
    path = tmp_path / "junk.onnx"
    sha = write_model(path, junk)
    with pytest.raises(OnnxModelError, match="ONNX Runtime cannot load it") as caught:
        load_session(path, sha)
    assert str(path.resolve()) in str(caught.value)


def test_importing_the_module_imports_no_onnxruntime():
    code = ("import sys; import stages.adapters.onnx_runtime, stages.adapters.onnx_embedder; "
            "print(sorted(m for m in ('onnxruntime', 'onnx', 'tokenizers', 'torch') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
