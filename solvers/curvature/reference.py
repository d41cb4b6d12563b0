"""Complementary finite-volume operators of the curvature flows (seed 000, appendix (36)–(53);
SPEC §1.2), written once with array code: the float64 reference, the CPU backend and the GPU
`array` path. Arrays are node fields of shape (N2+1, N1+1), index [j, i] (x along the last axis).

Edges: an "x-edge" (i+½, j) joins nodes (i, j) and (i+1, j); a "y-edge" (i, j+½) joins (i, j) and
(i, j+1). Only the edges of interior nodes are formed: x-edges of the rows j = 1..N2−1 (shape
(N2−1, N1)) and y-edges of the columns i = 1..N1−1 (shape (N2, N1−1)).
"""
from __future__ import annotations


def corner_means(a):
    """ā at the cell corners (i+½, j+½): the mean of the four nodes (44)–(47); shape (N2, N1)."""
    return 0.25 * ((a[:-1, :-1] + a[:-1, 1:]) + (a[1:, :-1] + a[1:, 1:]))


def edge_gradients(a, h1: float, h2: float):
    """∂x a, ∂y a on the x-edges and on the y-edges, (40)–(43): the normal derivative from the two
    nodes of the edge, the tangential one from the corner means at its ends."""
    c = corner_means(a)
    x_edges = ((a[1:-1, 1:] - a[1:-1, :-1]) / h1, (c[1:, :] - c[:-1, :]) / h2)
    y_edges = ((c[:, 1:] - c[:, :-1]) / h1, (a[1:, 1:-1] - a[:-1, 1:-1]) / h2)
    return x_edges, y_edges


def edge_q(gx, gy, xp):
    """Q = sqrt(1 + (∂x φ)² + (∂y φ)²) at edges, (36)–(39)."""
    return xp.sqrt(1 + gx * gx + gy * gy)


def curvature_terms(phi, h1: float, h2: float, xp):
    """The pieces of scheme (17) at the interior nodes: node Q (49), the bracket H (48) (the mean
    curvature ∇·(∇φ/Q)), and the edge data the Willmore scheme reuses."""
    (gxx, gyx), (gxy, gyy) = edge_gradients(phi, h1, h2)
    qx = edge_q(gxx, gyx, xp)  # (N2−1, N1): x-edges of interior rows
    qy = edge_q(gxy, gyy, xp)  # (N2, N1−1): y-edges of interior columns
    fx = gxx / qx
    fy = gyy / qy
    H = (fx[:, 1:] - fx[:, :-1]) / h1 + (fy[1:, :] - fy[:-1, :]) / h2
    Q = 0.25 * ((qx[:, 1:] + qx[:, :-1]) + (qy[1:, :] + qy[:-1, :]))
    return Q, H, ((gxx, gyx, qx), (gxy, gyy, qy))


def mean_curvature_rhs(phi, h1: float, h2: float, xp):
    """Q ∇·(∇φ/Q) at the interior nodes: scheme (17) without forcing; shape (N2−1, N1−1)."""
    Q, H, _ = curvature_terms(phi, h1, h2, xp)
    return Q * H


def willmore_rhs(phi, w, h1: float, h2: float, xp):
    """−Q ∇·((1/Q) P ∇w − ½ (w²/Q³) ∇φ) at the interior nodes: scheme (21) with the sign of
    SPEC §1.1; `w` is the full node field (boundary values set by the caller), (51)–(53)."""
    Q, _, ((gxx, gyx, qx), (gxy, gyy, qy)) = curvature_terms(phi, h1, h2, xp)
    (wxx, wyx), (wxy, wyy) = edge_gradients(w, h1, h2)
    wex = 0.5 * (w[1:-1, 1:] + w[1:-1, :-1])
    wey = 0.5 * (w[1:, 1:-1] + w[:-1, 1:-1])
    iqx, iqy = 1 / qx, 1 / qy
    iq3x, iq3y = iqx * iqx * iqx, iqy * iqy * iqy
    # E_mn = (1/Q)(δ_mn − ∂mφ ∂nφ / Q²) (53), the flux through the edge in its normal direction
    flux_x = (iqx - gxx * gxx * iq3x) * wxx - gxx * gyx * iq3x * wyx - 0.5 * wex * wex * iq3x * gxx
    flux_y = -gxy * gyy * iq3y * wxy + (iqy - gyy * gyy * iq3y) * wyy - 0.5 * wey * wey * iq3y * gyy
    div = (flux_x[:, 1:] - flux_x[:, :-1]) / h1 + (flux_y[1:, :] - flux_y[:-1, :]) / h2
    return -Q * div


def neumann_fill(a):
    """Copy the inner neighbours onto the boundary nodes, (19)–(20) and (24)–(25), in place."""
    a[0, :] = a[1, :]
    a[-1, :] = a[-2, :]
    a[:, 0] = a[:, 1]
    a[:, -1] = a[:, -2]
    return a
