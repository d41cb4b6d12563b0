// Operations of grid.cu that must give the same bits in every kernel that evaluates them: the
// explicitly rounded arithmetic of the time step and the carbuncle cure's shock sensor (read
// grid/reference.py's cell_sensor for the maths). Needs grid.cu's SWD.
#pragma once

#include "rounded.cuh"  // add_rn, mul_rn, div_rn, fma_rn (core/kernels)

// The shock sensor's velocity q / h and compression max(0, unL - unR), the same bits wherever they
// are evaluated (sw_sensor and the folds of sw_strip1 and sw_stage3): the division is one
// explicit instruction (float: the approximate one, a reciprocal and a product) and the
// subtraction is explicitly
// rounded, so that the compiler never fuses that product into it at one call site and not at
// another (a plain '/' under --use_fast_math did).
SWD float sens_div(float q, float h) { return __fdividef(q, h); }
SWD double sens_div(double q, double h) { return q / h; }
SWD float sens_comp(float unL, float unR) { return fmaxf(__fsub_rn(unL, unR), 0.0f); }
SWD double sens_comp(double unL, double unR) { return fmax(__dsub_rn(unL, unR), 0.0); }

// The sensor of the cell at (x, y) of a shared-memory tile of h, qx, qy (wall ghosts hold their
// mirror images, q.n reversed): sw_sensor's operations on the tile's values. At a wall ghost it
// equals the mirror cell's sensor bit for bit (the compressions of mirrored edges are the same
// differences, sign-reversed twice), which is what the update reads for a ghost.
template <typename T, int SY, int SX>
SWD T tile_sensor(const T (&sh)[SY][SX], const T (&sqx)[SY][SX], const T (&sqy)[SY][SX], int x,
                  int y)
{
    const T u0 = sens_div(sqx[y][x], sh[y][x]), v0 = sens_div(sqy[y][x], sh[y][x]);
    T s = sens_comp(sens_div(sqx[y][x - 1], sh[y][x - 1]), u0);
    s = fmax(s, sens_comp(u0, sens_div(sqx[y][x + 1], sh[y][x + 1])));
    s = fmax(s, sens_comp(sens_div(sqy[y - 1][x], sh[y - 1][x]), v0));
    return fmax(s, sens_comp(v0, sens_div(sqy[y + 1][x], sh[y + 1][x])));
}
