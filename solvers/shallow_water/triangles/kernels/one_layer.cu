// One-layer shallow water on triangles: per-edge fluctuations (device twin of
// tri_flux.one_layer) and the kernels of tri_common.cuh. W = (h, qx, qy).
#include "assembly.cuh"

// SCH: 0 roe (Cartesian closed form), 1 ir-roe (normal frame), 2 pvm-ifcp.
template <typename E, int SCH> struct Flux<E, 1, SCH> {
    static __device__ __forceinline__ void apply(const E* wl, const E* wr, E HL, E HR, E nx,
                                                 E ny, bool wall, E g, E /*r*/, E* dl, E* dr,
                                                 E& smax) {
        E hL = wl[0];
        E qnL = wl[1] * nx + wl[2] * ny, qtL = -wl[1] * ny + wl[2] * nx;
        E hR, qnR, qtR;
        if (wall) {
            hR = hL; qnR = -qnL; qtR = qtL; HR = HL;
        } else {
            hR = wr[0];
            qnR = wr[1] * nx + wr[2] * ny;
            qtR = -wr[1] * ny + wr[2] * nx;
        }
        E hb = E(0.5) * (hL + hR);
        E sL = sqrt(hL), sR = sqrt(hR);
        E un = roe_avg(sL, sR, hL, hR, qnL, qnR);
        E ut = roe_avg(sL, sR, hL, hR, qtL, qtR);
        E c = sqrt(g * hb);
        E dh = hR - hL, dH = HR - HL;
        E z0 = qnR - qnL;
        E z1 = qnR * qnR / hR - qnL * qnL / hL + g * hb * (dh - dH);
        E z2 = qnR * qtR / hR - qnL * qtL / hL;
        E l1 = un - c, l3 = un + c;
        smax = fmax(fabs(l1), fabs(l3));
        E d0, dx, dy;
        E cL = sqrt(g * hL), cR = sqrt(g * hR);
        E uL = qnL / hL, uR = qnR / hR;
        if (SCH == 0 || SCH == 1) {
            E t1 = theta_hh(l1, uL - cL, uR - cR);
            E t3 = theta_hh(l3, uL + cL, uR + cR);
            E t2 = E(0.5) * (E(1) - sgn1(un));
            if (SCH == 1) {
                E a1 = ((un + c) * z0 - z1) / (E(2) * c);
                E a3 = (z1 - (un - c) * z0) / (E(2) * c);
                E a2 = z2 - ut * z0;
                d0 = t1 * a1 + t3 * a3;
                E dn = t1 * a1 * l1 + t3 * a3 * l3;
                E dt = (t1 * a1 + t3 * a3) * ut + t2 * a2;
                dx = dn * nx - dt * ny;
                dy = dn * ny + dt * nx;
            } else {
                E u = un * nx - ut * ny, v = un * ny + ut * nx;
                E zx = z1 * nx - z2 * ny, zy = z1 * ny + z2 * nx;
                E zn = zx * nx + zy * ny;
                E zt = -zx * ny + zy * nx;
                E a1 = ((un + c) * z0 - zn) / (E(2) * c);
                E a3 = (zn - (un - c) * z0) / (E(2) * c);
                E a2 = zt - ut * z0;
                d0 = t1 * a1 + t3 * a3;
                dx = t1 * a1 * (u - c * nx) + t3 * a3 * (u + c * nx) - t2 * a2 * ny;
                dy = t1 * a1 * (v - c * ny) + t3 * a3 * (v + c * ny) + t2 * a2 * nx;
            }
        } else {
            E s_ext = (l1 + l3 < E(0)) ? E(-1) : E(1);
            E chi = s_ext * fabs(un);
            E al0, al1, al2;
            parabola(l1, l3, chi, habs(l1, uL - cL, uR - cR), habs(l3, uL + cL, uR + cR), al0,
                     al1, al2);
            E v0 = dh - dH, v1 = qnR - qnL, v2 = qtR - qtL;
            E c2 = c * c;
            E av0 = v1, av1 = (c2 - un * un) * v0 + E(2) * un * v1,
              av2 = -un * ut * v0 + ut * v1 + un * v2;
            E aav0 = av1, aav1 = (c2 - un * un) * av0 + E(2) * un * av1,
              aav2 = -un * ut * av0 + ut * av1 + un * av2;
            d0 = E(0.5) * (z0 - (al0 * v0 + al1 * av0 + al2 * aav0));
            E dn = E(0.5) * (z1 - (al0 * v1 + al1 * av1 + al2 * aav1));
            E dt = E(0.5) * (z2 - (al0 * v2 + al1 * av2 + al2 * aav2));
            dx = dn * nx - dt * ny;
            dy = dn * ny + dt * nx;
        }
        E zx = z1 * nx - z2 * ny, zy = z1 * ny + z2 * nx;
        dl[0] = d0; dl[1] = dx; dl[2] = dy;
        dr[0] = z0 - d0; dr[1] = zx - dx; dr[2] = zy - dy;
    }
};

TRI_KERNELS(roe1, 1, 0)
TRI_KERNELS(irroe1, 1, 1)
TRI_KERNELS(pvm1, 1, 2)

template <typename T>
__global__ void update1(T* __restrict__ W, T* __restrict__ acc, int NS,
                        const T* __restrict__ area, T dt_limit, int M, const T* dt_cur,
                        T* dt_next, int zero) {
    cell_update_body<T, 3>(W, acc, NS, area, dt_limit, M, dt_cur, dt_next, zero);
}
