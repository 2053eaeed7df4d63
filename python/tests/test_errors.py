"""Errors are WselError exceptions with the diagnostic's code, message and source span."""

import numpy as np
import pytest

import wsel

BROKEN = """import std.nn.{dense};

model m(x: f32[B, 64]) -> f32[B, 10] {
    param w: f32[32, 10];
    param b: f32[10];
    return dense(x, w, b);
}
"""


def test_a_wse_error_is_raised_with_its_code_and_span():
    with pytest.raises(wsel.WselError) as caught:
        wsel.run(BROKEN, inputs={"x": np.zeros((2, 64), np.float32)})
    error = caught.value
    assert error.code == "E0402"
    assert "parameter `w` is declared `f32[32, 10]`" in error.message
    assert error.span["line"] == 6 and error.span["file"].endswith("<string>")
    assert "E0402" in str(error)


def test_a_missing_param_file_names_a_near_one(tmp_path, digits):
    program = tmp_path / "m.wse"
    (tmp_path / "data").mkdir()
    np.save(tmp_path / "data" / "w1.npy", digits["params"]["w3"])
    np.save(tmp_path / "data" / "b1.npy", digits["params"]["b3"])
    program.write_text(
        "import std.nn.{dense};\n"
        "model m(x: f32[B, 16]) -> f32[B, 10] {\n"
        '    param w: f32[16, 10] from "data/w2.npy";\n'
        '    param b: f32[10] from "data/b1.npy";\n'
        "    return dense(x, w, b);\n}\n"
    )
    with pytest.raises(wsel.WselError) as caught:
        wsel.run(program, inputs={"x": np.zeros((1, 16), np.float32)})
    assert caught.value.code == "E0801"
    assert caught.value.span["line"] == 3
    assert caught.value.diagnostics[0]["help"] == "did you mean `data/w1.npy`?"
    # The same parameter given in memory needs no file.
    result = wsel.run(program, inputs={"x": np.ones((1, 16), np.float32)},
                      params={"w": digits["params"]["w3"]})
    assert result.output.shape == (1, 10)


def test_a_transposed_param_in_memory_is_a_shape_error(digits):
    params = dict(digits["params"], w1=digits["params"]["w1"].T)
    with pytest.raises(wsel.WselError) as caught:
        wsel.run(digits["program"], inputs={"x": digits["x"][:2]}, params=params)
    assert caught.value.code == "E0803"
    assert "looks transposed" in caught.value.message
    # The declared type as declared (not `f32[B, 32]`).
    assert "(for `w1`, declared `f32[64, 32]`)" in caught.value.message


def test_data_errors_have_codes(digits):
    with pytest.raises(wsel.WselError) as caught:
        wsel.run(digits["program"], inputs={"y": digits["x"]})
    assert caught.value.code == "E0805" and "no input `y`" in caught.value.message
    with pytest.raises(wsel.WselError) as caught:
        wsel.run(digits["program"], inputs={"x": digits["x"][:, :32]})
    assert caught.value.code == "E0803"


def test_check_returns_diagnostics():
    found = wsel.check(BROKEN)
    assert [d.code for d in found] == ["E0402"]
    assert found[0].span["line"] == 6
    assert wsel.check("import std.nn.{relu};\nmodel m(x: f32[B, 4]) -> f32[B, 4] { return relu(x); }\n") == []
