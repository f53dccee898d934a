/* One implicit step of several small FEM and mass-spring objects at once,
 * their CG solves in lockstep so that each CG product of every object goes
 * in one pass over the batch's concatenated elements (solvers/batch_hd.h):
 * on a GPU one launch pair (FEM) and one launch (mass-spring) per product
 * for all of them (hy_fem_gpu_batch_apply, hy_ms_gpu_batch_apply), where
 * each object alone would launch its own.
 *
 * Each object's step is the one hy_implicit_step makes with no held
 * vertices and no external forces: prepare (the object's own, on the host:
 * its model must not be bound to a GPU), its guess, CG with its own
 * preconditioner (hy_cg_steps: its own alpha, beta and stopping test, each
 * reduction in the order of its own solve), commit. Only the products are
 * the batch's, and they give each object the bits of its own product. So
 * every object ends with the bits of its own hy_implicit_step, whatever
 * objects share its batch and whether the products ran on a GPU or on the
 * host twin (device -1: the same batched passes looped on the host's pool,
 * for tests and machines without a GPU). Objects that have converged ride
 * along in the later products; their outputs are not used.
 *
 * Threads: a stepper is used by one thread at a time. */
#ifndef HY_SOLVERS_BATCH_STEP_H
#define HY_SOLVERS_BATCH_STEP_H

#include "core/pool.h"
#include "solvers/cg.h"
#include "solvers/implicit.h"

/* One object of a batch: its model and the arrays of its step. */
typedef struct hy_batch_object {
    const hy_implicit_ops* ops; /* hy_fem_ops or hy_ms_ops */
    void* model;                /* hy_fem_model or hy_ms_model, not bound to a GPU */
    const double *x0, *v0;      /* 3 nv each */
    double *x1, *v1;            /* 3 nv each: the step's end */
    double *rhs, *dv;           /* 3 nv each: scratch */
    hy_cg_workspace* cg;        /* for 3 nv or more */
    /* out */
    int32_t iterations; /* CG iterations */
    double residual;    /* CG's relative residual */
} hy_batch_object;

typedef struct hy_batch_stepper hy_batch_stepper;

/* A stepper whose products run on CUDA device `device`, or on the host
 * (device -1). HY_ERR_INVALID_ARG for a device below -1, HY_ERR_NOMEM. */
hy_status hy_batch_stepper_create(int device, hy_batch_stepper** out);
void hy_batch_stepper_destroy(hy_batch_stepper* b);
/* The device it was made for (-1: the host). */
int hy_batch_stepper_device(const hy_batch_stepper* b);

/* Step objects o[0..n) by dt under gravity, CG as hy_implicit_step's
 * (cg_max_iterations, cg_tolerance). The GPU's copies of the models are
 * made on first use and again when the batch's models change. A failure
 * of an object's own step (bad input, a NaN state) names it by index into
 * *failed (else -1); a GPU failure (HY_ERR_UNSUPPORTED with no GPU,
 * HY_ERR_INTERNAL) leaves *failed at -1 and every object's state
 * untouched, so that the caller can step them otherwise. */
hy_status hy_batch_step(hy_batch_stepper* b, hy_batch_object* o, int32_t n, hy_pool* pool, double dt,
                        const double gravity[3], int32_t cg_max_iterations, double cg_tolerance, int32_t* failed);

/* Products run by the stepper since it was made: batch products (one per
 * lockstep round) and objects' products within them; bytes moved between
 * the host and its GPU by the steps (the models' constant arrays when the
 * batch's GPU copies are made, each step's prepared state up, then either
 * each product's vectors up and down or, resident, the CG's vectors once
 * and its scalars), 0 on the host. */
void hy_batch_stepper_counts(const hy_batch_stepper* b, int64_t* batch_products, int64_t* object_products,
                             int64_t* bytes);

/* Resident CG (on by default): when every object's preconditioner is block
 * Jacobi alone (mass-spring objects, FEM ones without their coarse level),
 * the step's CG solves run with their vectors in the stepper's memory
 * (solvers/cg_batch.h: on its GPU, or in host buffers for device -1, the
 * same operations of solvers/cg_hd.h), the products reading and writing
 * them there; only each operation's scalars cross, and b, x and the
 * preconditioner's blocks up once a step, x down. Off: the solves stay on
 * the host (hy_cg_steps), each product's vectors crossing. The bits are
 * the same either way. */
void hy_batch_stepper_set_resident(hy_batch_stepper* b, int on);
/* Steps whose CG ran resident since the stepper was made. */
int64_t hy_batch_stepper_resident_steps(const hy_batch_stepper* b);

#endif
