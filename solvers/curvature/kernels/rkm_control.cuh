// The control block of a fused Runge–Kutta–Merson run, shared by curvature.cu (one kernel per stage,
// replayed as CUDA graphs) and curvature_persist.cu (one cooperative kernel running many attempts):
// double ctl[8], int cti[16] (indices below; fused.py mirrors them), and the controller of docs/MODELS.md §1.3.
// Time is kept with core's landing rule (clock.cuh, the twin of core/clock.py).
#pragma once
#include "clock.cuh"

#define C_T 0      // time of the accepted state
#define C_TAU 1    // step the controller proposes (RungeKuttaMerson.tau)
#define C_TRY 2    // step of the current attempt (proposal clamped to the end time)
#define C_TEND 3   // end time (when I_HASEND)
#define C_EPS 4    // tolerance
#define C_LASTDT 5 // last accepted step
#define I_ACTIVE 0
#define I_STEPS 1  // accepted steps in this run
#define I_TARGET 2 // stop after this many accepted steps
#define I_CUR 3    // which state buffer holds u
#define I_FAILED 4 // non-finite error estimate or too many rejections in a row
#define I_REJ 5    // rejected attempts in this run
#define I_REJROW 6
#define I_HASEND 7
#define I_ATTEMPTS 8

#define MAX_REJECTS 200

// Accept or reject an attempt of step `tau` whose error estimate is e, exactly like
// RungeKuttaMerson.step/control: the next proposal, the time (landing exactly on the end time),
// the counters, and whether the run goes on. Returns whether the attempt was accepted.
__device__ __forceinline__ bool rkm_decide(double* ctl, int* cti, const double e)
{
    cti[I_ATTEMPTS] += 1;
    const double tau = ctl[C_TRY], prop = ctl[C_TAU], eps = ctl[C_EPS];
    const bool clamped = tau < prop;
    const bool has_end = cti[I_HASEND] != 0;
    const double t_end = ctl[C_TEND];
    bool accepted = false;
    if (!isfinite(e)) {
        cti[I_FAILED] = 1;
        cti[I_ACTIVE] = 0;
        return false;
    }
    const double growth = (e == 0.0) ? 5.0 : fmin(5.0, 0.8 * pow(eps / e, 0.2));
    const double nt = tau * growth;
    if (e < eps) {
        accepted = true;
        const double t = ctl[C_T];
        ctl[C_T] = clock_after_step(t, tau, t_end, has_end);
        ctl[C_TAU] = clamped ? fmax(nt, prop) : nt;
        ctl[C_LASTDT] = tau;
        cti[I_STEPS] += 1;
        cti[I_REJROW] = 0;
    } else {
        ctl[C_TAU] = nt;
        cti[I_REJ] += 1;
        if (++cti[I_REJROW] >= MAX_REJECTS) {
            cti[I_FAILED] = 1;
            cti[I_ACTIVE] = 0;
        }
    }
    if (cti[I_ACTIVE]) {
        const double t = ctl[C_T];
        if (cti[I_STEPS] >= cti[I_TARGET] || clock_landed(t, t_end, has_end))
            cti[I_ACTIVE] = 0;
        else
            ctl[C_TRY] = clock_clamp(ctl[C_TAU], t, t_end, has_end);
    }
    return accepted;
}
