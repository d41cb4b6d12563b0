"""The strip kernel's rows per warp (grid/fused.py `strip_rows`): the band height that makes the
fewest row passes over the waves of resident blocks (no GPU needed: a pure function of the grid
and of how many blocks the device holds)."""
import math

import pytest

from pdestudio.solvers.shallow_water.grid.fused import BLOCK_STRIP, STRIP, strip_rows


def blocks(nx, ny, m):
    return math.ceil(nx / STRIP) * math.ceil(math.ceil(ny / m) / BLOCK_STRIP[1])


def cost(nx, ny, m, resident):
    return math.ceil(blocks(nx, ny, m) / resident) * (m + 3)


def test_one_full_wave_at_1024_on_132_sms_of_6_blocks():
    # the measured case: 8 rows made 1,152 blocks (1.45 waves of 792); 12 rows make 792
    m = strip_rows(1024, 1024, 132 * 6)
    assert m == 12 and blocks(1024, 1024, m) == 132 * 6
    assert blocks(1024, 1024, 8) > 132 * 6


@pytest.mark.parametrize("nx, ny", [(256, 256), (512, 512), (1000, 1000), (1200, 1200),
                                    (2000, 2000), (4000, 700), (300, 1900), (29, 7)])
@pytest.mark.parametrize("resident", [132 * 6, 132 * 7, 108 * 4, 16])
def test_the_least_passes_and_the_smallest_band_among_equals(nx, ny, resident):
    m = strip_rows(nx, ny, resident)
    assert 6 <= m <= 32
    best = min(cost(nx, ny, k, resident) for k in range(6, 33))
    assert cost(nx, ny, m, resident) == best
    assert all(cost(nx, ny, k, resident) > best for k in range(6, m))
