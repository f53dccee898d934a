#include "solvers/bonds.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int hy_bond_set_push(hy_bond_set* s, hy_bond b) {
    if (s->count == s->capacity) {
        int32_t cap = s->capacity ? 2 * s->capacity : 64;
        hy_bond* nb = realloc(s->bonds, sizeof *nb * (size_t)cap);
        if (!nb) return 0;
        s->bonds = nb;
        double* ni = realloc(s->impulse, sizeof *ni * (size_t)cap);
        if (!ni) return 0;
        s->impulse = ni;
        s->capacity = cap;
    }
    s->bonds[s->count++] = b;
    s->intact++;
    return 1;
}

void hy_bond_set_free(hy_bond_set* s) {
    free(s->bonds);
    free(s->impulse);
    free(s->blow);
    free(s->first);
    free(s->of);
    *s = (hy_bond_set){0};
}

/* Bonds by object, for blows: built when the bonds or the object slots
 * changed since the last build. */
static int index_bonds(hy_bond_set* s, int32_t object_count) {
    if (s->first && s->object_count == object_count && s->indexed == s->count) return 1;
    double* blow = calloc((size_t)object_count + 1, sizeof *blow);
    int32_t* first = calloc((size_t)object_count + 2, sizeof *first);
    int32_t* of = malloc(sizeof *of * (2 * (size_t)s->count + 1));
    if (!blow || !first || !of) {
        free(blow), free(first), free(of);
        return 0;
    }
    for (int32_t i = 0; i < s->count; i++) {
        first[s->bonds[i].a + 1]++;
        first[s->bonds[i].b + 1]++;
    }
    for (int32_t o = 0; o < object_count; o++) first[o + 1] += first[o];
    int32_t* fill = malloc(sizeof *fill * ((size_t)object_count + 1));
    if (!fill) {
        free(blow), free(first), free(of);
        return 0;
    }
    memcpy(fill, first, sizeof *fill * (size_t)object_count);
    for (int32_t i = 0; i < s->count; i++) {
        of[fill[s->bonds[i].a]++] = i;
        of[fill[s->bonds[i].b]++] = i;
    }
    free(fill);
    free(s->blow), free(s->first), free(s->of);
    s->blow = blow;
    s->first = first;
    s->of = of;
    s->object_count = object_count;
    s->indexed = s->count;
    return 1;
}

int hy_bonds_blow(hy_bond_set* s, int32_t object_count, int32_t a, int32_t b, double impulse) {
    if (s->intact == 0) return 1;
    if (!index_bonds(s, object_count)) return 0;
    for (int32_t k = s->first[a]; k < s->first[a + 1]; k++) {
        const hy_bond* bd = &s->bonds[s->of[k]];
        if (!bd->broken && (bd->a == b || bd->b == b)) return 1;
    }
    s->blow[a] += impulse;
    s->blow[b] += impulse;
    return 1;
}

int32_t hy_bonds_break_struck(hy_bond_set* s) {
    if (!s->blow) return 0;
    int32_t broken = 0;
    for (int32_t o = 0; o < s->object_count; o++) {
        if (s->blow[o] == 0.0) continue;
        int32_t intact = 0;
        double weakest = INFINITY;
        for (int32_t k = s->first[o]; k < s->first[o + 1]; k++) {
            const hy_bond* bd = &s->bonds[s->of[k]];
            if (bd->broken) continue;
            intact++;
            weakest = fmin(weakest, bd->strength);
        }
        if (intact > 0 && s->blow[o] / intact > weakest)
            for (int32_t k = s->first[o]; k < s->first[o + 1]; k++) {
                hy_bond* bd = &s->bonds[s->of[k]];
                if (bd->broken) continue;
                bd->broken = 1;
                s->intact--;
                broken++;
            }
        s->blow[o] = 0.0;
    }
    return broken;
}

/* K = m^-1 I - [r]x I^-1 [r]x, the point-constraint effective inverse mass of one body. */
static void add_point_mass(double K[9], double inv_mass, const double Iinv[9], hy_v3 r) {
    double S[9] = {0, -r.z, r.y, r.z, 0, -r.x, -r.y, r.x, 0};
    double T[9], U[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double a = 0;
            for (int k = 0; k < 3; k++) a += Iinv[3 * i + k] * S[3 * k + j];
            T[3 * i + j] = a;
        }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double a = 0;
            for (int k = 0; k < 3; k++) a += S[3 * i + k] * T[3 * k + j];
            U[3 * i + j] = a;
        }
    for (int i = 0; i < 9; i++) K[i] -= U[i];
    K[0] += inv_mass;
    K[4] += inv_mass;
    K[8] += inv_mass;
}

/* Bond b at its bodies' current poses: their states, world inverse
 * inertias and inverse masses, the anchors' lever arms, and the inverse of
 * the point constraint's effective mass. */
typedef struct bond_pose {
    hy_rigid_state *A, *B;
    double IAi[9], IBi[9], Kinv[9];
    double imA, imB;
    hy_v3 rA, rB;
} bond_pose;

/* Returns 0 when the effective mass cannot be inverted. */
static int pose_of(const hy_bond* b, const hy_bond_bodies* bodies, bond_pose* p) {
    p->A = bodies->state(bodies->ctx, b->a);
    p->B = bodies->state(bodies->ctx, b->b);
    const hy_rigid_inertia* ia = bodies->inertia(bodies->ctx, b->a);
    const hy_rigid_inertia* ib = bodies->inertia(bodies->ctx, b->b);
    double tmp[9];
    hy_rigid_world_inertia(ia, p->A->q, tmp, p->IAi);
    hy_rigid_world_inertia(ib, p->B->q, tmp, p->IBi);
    p->imA = ia->inv_mass;
    p->imB = ib->inv_mass;
    p->rA = quat_rotate(p->A->q, b->ra);
    p->rB = quat_rotate(p->B->q, b->rb);
    double K[9] = {0};
    add_point_mass(K, p->imA, p->IAi, p->rA);
    add_point_mass(K, p->imB, p->IBi, p->rB);
    return hy_mat3_inverse(K, p->Kinv);
}

int32_t hy_bonds_solve(hy_bond_set* s, const hy_bond_bodies* bodies, int32_t iterations) {
    int32_t broken = 0;
    double* accumulated = s->impulse;
    if (s->intact == 0) return 0;
    for (int32_t i = 0; i < s->count; i++) accumulated[i] = 0.0;
    for (int32_t it = 0; it < iterations; it++) {
        for (int32_t i = 0; i < s->count; i++) {
            hy_bond* b = &s->bonds[i];
            bond_pose p;
            if (b->broken || !pose_of(b, bodies, &p)) continue;
            hy_rigid_state *A = p.A, *B = p.B;
            /* linear: the relative velocity of the anchor points goes to
             * zero (drift is corrected on positions, hy_bonds_project) */
            hy_v3 va = v3_add(A->v, v3_cross(A->w, p.rA)), vb = v3_add(B->v, v3_cross(B->w, p.rB));
            hy_v3 P = v3_scale(mat_mul_v3(p.Kinv, v3_sub(vb, va)), -1.0);
            /* A bond that would have to carry more than its strength this
             * step fails before it acts: the pieces keep their momentum. */
            if (accumulated[i] + v3_len(P) > b->strength) {
                b->broken = 1;
                s->intact--;
                broken++;
                continue;
            }
            accumulated[i] += v3_len(P);
            B->v = v3_mad(B->v, P, p.imB);
            B->w = v3_add(B->w, mat_mul_v3(p.IBi, v3_cross(p.rB, P)));
            A->v = v3_mad(A->v, P, -p.imA);
            A->w = v3_sub(A->w, mat_mul_v3(p.IAi, v3_cross(p.rA, P)));
            /* angular: lock relative rotation rate */
            double KA[9], KAi[9];
            for (int k = 0; k < 9; k++) KA[k] = p.IAi[k] + p.IBi[k];
            if (hy_mat3_inverse(KA, KAi)) {
                hy_v3 L = v3_scale(mat_mul_v3(KAi, v3_sub(B->w, A->w)), -1.0);
                B->w = v3_add(B->w, mat_mul_v3(p.IBi, L));
                A->w = v3_sub(A->w, mat_mul_v3(p.IAi, L));
            }
        }
    }
    return broken;
}

void hy_bonds_project(const hy_bond_set* s, const hy_bond_bodies* bodies, double fraction, int32_t iterations) {
    for (int32_t it = 0; it < iterations && s->intact > 0; it++) {
        for (int32_t i = 0; i < s->count; i++) {
            const hy_bond* b = &s->bonds[i];
            bond_pose p;
            if (b->broken || !pose_of(b, bodies, &p)) continue;
            /* the positional impulse that closes `fraction` of the anchors'
             * separation, linearised at the current poses */
            hy_v3 drift = v3_sub(v3_add(p.B->x, p.rB), v3_add(p.A->x, p.rA));
            hy_v3 P = v3_scale(mat_mul_v3(p.Kinv, drift), -fraction);
            p.B->x = v3_mad(p.B->x, P, p.imB);
            p.B->q = quat_normalize(quat_mul(quat_from_rotvec(mat_mul_v3(p.IBi, v3_cross(p.rB, P))), p.B->q));
            p.A->x = v3_mad(p.A->x, P, -p.imA);
            p.A->q = quat_normalize(
                quat_mul(quat_from_rotvec(v3_scale(mat_mul_v3(p.IAi, v3_cross(p.rA, P)), -1.0)), p.A->q));
        }
    }
}

