/* What solvers/fem.c and solvers/fem_coarse.c share: the model's layout.
 * Not for use outside solvers/fem*.c. */
#ifndef HY_SOLVERS_FEM_INTERNAL_H
#define HY_SOLVERS_FEM_INTERNAL_H

#include <stdint.h>

#include "core/error.h"
#include "solvers/cg.h"
#include "solvers/fem.h"
#include "solvers/fem_cuda.h"
#include "solvers/spchol.h"

struct hy_fem_model {
    int32_t nv, nt, nq; /* nq: quads of four elements, the last padded */
    double lambda, mu, alpha, beta;
    int32_t* tet;      /* 4 * 4 nq: the padding elements' vertices are 0 */
    double* rest;      /* 3 * nv */
    double* grad;      /* 12 * nt: b_0..b_3, the shape-function gradients at rest */
    double* vol;       /* 4 nq: 0 for the padding */
    double* mass;      /* nv */
    double* iso;       /* nv: sum over incident corners of V mu |b_i|^2, the preconditioner's constant part */
    uint8_t* fixed;    /* nv */
    int32_t* inc_start; /* nv + 1: vertex -> incident corners */
    int32_t* inc;       /* 4 * nt: 4 * element + corner, element order per vertex */
    /* scratch of one step */
    double diag_scale, k_scale; /* the prepared system's 1 + dt alpha and dt beta + dt^2 */
    double* rgrad; /* 48 nq by QUAD: R b_i, the gradients rotated by the step's R */
    double* efor;  /* 48 nq: corner forces, 12 per element */
    double* rhs;   /* 3 * nv */
    double* dv;    /* 3 * nv */
    double* pinv;  /* 9 * nv inverse diagonal blocks */
    int32_t* bad;  /* per vertex block: first non-finite vertex or -1 */
    double* guess; /* hy_implicit_mass_guess's scratch */
    hy_cg_workspace* cg;
    /* the preconditioner's coarse level (fem_coarse_*): aggregates of
     * vertices moving rigidly, the Galerkin product of the system at rest
     * factored once per dt and turned by the object's rotation each step */
    int32_t nc;          /* aggregates; 0: no coarse level */
    int32_t* agg;        /* nv: a vertex's aggregate, -1 when fixed */
    double* cen;         /* 3 nc: the aggregates' mass centres at rest */
    double* rdist;       /* 3 nv: the step's R (X_v - c_K), each vertex's turned offset from its aggregate's centre */
    int32_t* c_start;    /* nc + 1: each aggregate's neighbour aggregates (ascending, itself excluded) */
    int32_t* c_col;
    int32_t* c_blk;      /* nc + 1: each block column's first upper block (its neighbours below it, then itself) */
    double* c_mass;      /* 36 per upper block: the mass part P^T M P (assembled at the first use) */
    double* c_stiff;     /* 36 per upper block: the stiffness part P^T K P at rest */
    hy_spchol* chol;     /* the factor of diag_scale c_mass + k_scale c_stiff */
    double chol_diag, chol_k; /* the scales factored (0: none yet) */
    double rot[9];       /* the prepared step's rotation of the object (row-major) */
    const double* prep_x0; /* the prepared step's x0 (the caller's until commit) */
    double *r1, *z1;     /* 6 nc */
    int coarse_state;    /* 0: not set up this step, 1: ready, -1: not usable this step */
    int coarse_off;      /* hy_fem_coarse(m, 0): block Jacobi alone */
    /* the step's system assembled by vertex rows (fem_asm_*), on the CPU
     * once enough products follow to pay for it */
    int32_t* a_start;    /* nv + 1: each row's upper blocks, the diagonal first (a fixed row has none) */
    int32_t* a_col;      /* a block's column vertex (free vertices only, ascending in a row, >= the row) */
    int32_t* a_slot;     /* 16 per element: the block of corner j in corner i's row (16 e + 4 i + j), -1 if either is fixed or t[j] < t[i] */
    int32_t* l_start;    /* nv + 1: each row's lower blocks, kept in the rows above it ... */
    int32_t *l_slot, *l_row; /* ... as the slots of their transposes and those rows, by row */
    double* a_val;       /* 12 per block: its three columns, each padded to 4 */
    int32_t products;    /* products of the prepared step so far */
    int asm_state;       /* 0: not assembled this step, 1: assembled (there: on its GPU), -1: no pattern (out of memory) */
    int asm_off;         /* hy_fem_assembled(m, 0): matrix-free only */
    hy_fem_gpu* gpu; /* the element and vertex passes on a GPU (hy_fem_set_device), or NULL */
    int device;
    /* the step the GPU prepared, whose rotation pass the host has not run:
     * what a CPU fallback needs to run it (the inputs stay the caller's
     * until commit) */
    const double *gpu_x0, *gpu_v0;
    double gpu_vscale;
};

/* The preconditioner's coarse level (fem_coarse.c): aggregates and the
 * rest system's Galerkin product, made once with the model. */
hy_status hy_fem_coarse_create(hy_fem_model* m);

#endif
