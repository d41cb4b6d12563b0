"""Parameter validation takes any value a file or a user can produce (strings, containers, huge
integers, NaN, arrays, paths) and answers with the converted value or a one-line ParameterError."""
import math
from pathlib import Path

import numpy as np
import pytest

from pdestudio.solvers import ParameterError
from pdestudio.solvers.core.params import Param, short_repr

INT = Param("n", "int", 1, "a count", lo=0, hi=2**40)
FLOAT = Param("x", "float", 1.0, "a number", lo=0, lo_open=True)
TEXT = Param("mesh", "str", None, "a path", nullable=True)
CHOICE = Param("renumber", "str", "rcm", "order", choices=("none", "rcm"))


@pytest.mark.parametrize("p,value,expected", [
    (INT, "12", 12), (INT, 12.0, 12), (INT, np.int32(7), 7), (INT, "1e3", 1000),
    (INT, 2**40, 2**40), (FLOAT, "0.5", 0.5), (FLOAT, 3, 3.0), (FLOAT, np.float32(2), 2.0),
    (TEXT, Path("/a/b.obj"), "/a/b.obj"), (TEXT, None, None), (CHOICE, "none", "none"),
])
def test_valid_values_are_converted(p, value, expected):
    out = p.validate(value)
    assert out == expected and type(out) is type(expected)


@pytest.mark.parametrize("p,value,why", [
    (INT, [1], "is not an integer"), (INT, {"a": 1}, "is not an integer"),
    (INT, 10**400, "out of range"), (INT, "9" * 5000, "is not an integer"),
    (INT, 1.5, "is not an integer"), (INT, True, "is not an integer"),
    (INT, math.nan, "is not finite"), (INT, "inf", "is not finite"),
    (INT, np.arange(3), "is not an integer"), (INT, 2**53 + 1, "out of range"),
    (FLOAT, 10**400, "is not a number"), (FLOAT, 1j, "is not a number"),
    (FLOAT, "nan", "is not finite"), (FLOAT, -1e300, "out of range"),
    (TEXT, 3, "is not a string"), (TEXT, ["a"], "is not a string"),
    (TEXT, b"x.obj", "is not a string"), (TEXT, "a\x00b", "NUL"),
    (CHOICE, None, "is missing"), (CHOICE, "None", "not a valid choice"),
])
def test_bad_values_raise_one_line_naming_the_parameter(p, value, why):
    with pytest.raises(ParameterError, match=why) as e:
        p.validate(value, "model")
    msg = str(e.value)
    assert f"parameter '{p.name}'" in msg and "allowed:" in msg
    assert "\n" not in msg and len(msg) < 300


def test_short_repr_is_one_bounded_line():
    assert short_repr("a\nb") == "'a\\nb'"
    assert len(short_repr("x" * 10**6)) == 80
    assert short_repr(10**5000) == "<int>"  # repr itself fails (int max str digits)
