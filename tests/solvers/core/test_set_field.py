"""set_field takes real numbers of the field's shape only (core/values.py): every other array is
refused with one line giving the expected shape, and the simulation is left as it was."""
import datetime

import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers import ParameterError


@pytest.fixture
def sim():
    s = solvers.create("shallow-water", backend="numpy", nx=8, ny=6)
    s.step(2)
    return s


@pytest.mark.parametrize("values,why", [
    (np.zeros((6, 8), complex), r"complex numbers \(dtype complex128\)"),
    (np.full((6, 8), np.datetime64("2024-01-01")), r"dates \(dtype datetime64"),
    (np.full((6, 8), np.timedelta64(1, "s")), "time spans"),
    (np.full((6, 8), None, dtype=object), r"Python objects \(dtype object\)"),
    (np.full((6, 8), "1.0"), "text"),
    (np.full((6, 8), b"1"), "bytes"),
    (np.zeros((6, 8), dtype=[("a", float)]), "records"),
    ([[1.0, 2.0], [3.0]], "not an array of numbers"),
    ([[datetime.date(2024, 1, 1)] * 8] * 6, "Python objects"),
    ([[10**400] * 8] * 6, "Python objects|not an array of numbers"),
    (np.zeros((8, 6)), r"shape \(8, 6\); allowed: real numbers \(bool, int, float\) of shape \(6, 8\)"),
    (np.zeros(48), r"shape \(48,\)"),
    (np.float64(2.0), r"shape \(\)"),
    (np.full((6, 8), np.inf), r"non-finite values \(48, the first inf at index \(0, 0\)\)"),
])
def test_refused_arrays_leave_the_simulation_alone(sim, values, why):
    before = {k: v.copy() for k, v in sim.fields().items()}
    with pytest.raises(ParameterError, match=why) as e:
        sim.set_field("h", values)
    assert str(e.value).startswith("shallow-water: field 'h' ") and "\n" not in str(e.value)
    assert "(6, 8)" in str(e.value)
    for k, v in sim.fields().items():
        np.testing.assert_array_equal(v, before[k])


def test_bool_int_and_float32_values_are_accepted_and_copied(sim):
    ones = np.ones((6, 8), dtype=bool)
    sim.set_field("hu", ones)
    np.testing.assert_array_equal(sim.fields()["hu"], 1.0)
    h = np.full((6, 8), 3, dtype=np.int16)
    sim.set_field("h", h)
    h[...] = -5  # the simulation holds a copy
    np.testing.assert_array_equal(sim.fields()["h"], 3.0)
    sim.set_field("hv", np.zeros((6, 8), np.float32))


def test_values_beyond_float32_are_refused_for_a_float32_run():
    s = solvers.create("heat-1d", backend="numpy", nx=16, dtype="float32")
    with pytest.raises(ParameterError, match=r"values up to 1e\+300, beyond the range of float32; "
                       r"allowed: \|values\| <= 3.4e\+38"):
        s.set_field("T", np.full(16, 1e300))
    s.set_field("T", np.full(16, 1e30))
