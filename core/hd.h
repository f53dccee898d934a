/* Small vector math shared by C and CUDA code. Under nvcc HY_HD marks a
 * function __host__ __device__ so both sides compute the same result; the
 * build disables floating-point contraction on both. */
#ifndef HY_CORE_HD_H
#define HY_CORE_HD_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define HY_HD __host__ __device__ static inline
#else
#define HY_HD static inline
#endif

typedef struct hy_v3 {
    double x, y, z;
} hy_v3;

HY_HD hy_v3 v3(double x, double y, double z) { hy_v3 r = {x, y, z}; return r; }
HY_HD hy_v3 v3_load(const double* p) { hy_v3 r = {p[0], p[1], p[2]}; return r; }
HY_HD void v3_store(double* p, hy_v3 a) { p[0] = a.x; p[1] = a.y; p[2] = a.z; }
HY_HD hy_v3 v3_add(hy_v3 a, hy_v3 b) { return v3(a.x + b.x, a.y + b.y, a.z + b.z); }
HY_HD hy_v3 v3_sub(hy_v3 a, hy_v3 b) { return v3(a.x - b.x, a.y - b.y, a.z - b.z); }
HY_HD hy_v3 v3_scale(hy_v3 a, double s) { return v3(a.x * s, a.y * s, a.z * s); }
HY_HD hy_v3 v3_mad(hy_v3 a, hy_v3 b, double s) { return v3(a.x + b.x * s, a.y + b.y * s, a.z + b.z * s); }
HY_HD double v3_dot(hy_v3 a, hy_v3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
HY_HD hy_v3 v3_cross(hy_v3 a, hy_v3 b) {
    return v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
HY_HD double v3_len2(hy_v3 a) { return v3_dot(a, a); }
HY_HD double v3_len(hy_v3 a) { return sqrt(v3_dot(a, a)); }
HY_HD hy_v3 v3_lerp(hy_v3 a, hy_v3 b, double t) { return v3_mad(a, v3_sub(b, a), t); }
HY_HD hy_v3 v3_min(hy_v3 a, hy_v3 b) { return v3(fmin(a.x, b.x), fmin(a.y, b.y), fmin(a.z, b.z)); }
HY_HD hy_v3 v3_max(hy_v3 a, hy_v3 b) { return v3(fmax(a.x, b.x), fmax(a.y, b.y), fmax(a.z, b.z)); }

/* Quaternions (w, x, y, z) and row-major 3x3 matrices. */
typedef struct hy_quat {
    double w, x, y, z;
} hy_quat;

HY_HD hy_quat quat_mul(hy_quat a, hy_quat b) {
    hy_quat r = {a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
                 a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
                 a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
                 a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w};
    return r;
}
HY_HD hy_quat quat_normalize(hy_quat q) {
    double n = sqrt(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
    hy_quat r = {q.w / n, q.x / n, q.y / n, q.z / n};
    return r;
}
/* Rotation by angle |w|*dt about w (exact exponential map). */
HY_HD hy_quat quat_from_rotvec(hy_v3 r) {
    double a = v3_len(r);
    hy_quat q;
    if (a < 1e-12) {
        q.w = 1.0; q.x = 0.5 * r.x; q.y = 0.5 * r.y; q.z = 0.5 * r.z;
        return quat_normalize(q);
    }
    double s = sin(0.5 * a) / a;
    q.w = cos(0.5 * a); q.x = r.x * s; q.y = r.y * s; q.z = r.z * s;
    return q;
}
HY_HD void quat_to_mat(hy_quat q, double m[9]) {
    double xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z;
    double xy = q.x * q.y, xz = q.x * q.z, yz = q.y * q.z;
    double wx = q.w * q.x, wy = q.w * q.y, wz = q.w * q.z;
    m[0] = 1 - 2 * (yy + zz); m[1] = 2 * (xy - wz);     m[2] = 2 * (xz + wy);
    m[3] = 2 * (xy + wz);     m[4] = 1 - 2 * (xx + zz); m[5] = 2 * (yz - wx);
    m[6] = 2 * (xz - wy);     m[7] = 2 * (yz + wx);     m[8] = 1 - 2 * (xx + yy);
}
HY_HD hy_v3 mat_mul_v3(const double m[9], hy_v3 a) {
    return v3(m[0] * a.x + m[1] * a.y + m[2] * a.z, m[3] * a.x + m[4] * a.y + m[5] * a.z,
              m[6] * a.x + m[7] * a.y + m[8] * a.z);
}
/* out = A^-1 (row-major 3x3); 0 (out untouched) when det A is 0 or not
 * finite. */
HY_HD int mat_inverse(const double A[9], double out[9]) {
    double d = A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) +
               A[2] * (A[3] * A[7] - A[4] * A[6]);
    if (!(fabs(d) > 0) || !isfinite(d)) return 0;
    double s = 1.0 / d;
    out[0] = (A[4] * A[8] - A[5] * A[7]) * s;
    out[1] = (A[2] * A[7] - A[1] * A[8]) * s;
    out[2] = (A[1] * A[5] - A[2] * A[4]) * s;
    out[3] = (A[5] * A[6] - A[3] * A[8]) * s;
    out[4] = (A[0] * A[8] - A[2] * A[6]) * s;
    out[5] = (A[2] * A[3] - A[0] * A[5]) * s;
    out[6] = (A[3] * A[7] - A[4] * A[6]) * s;
    out[7] = (A[1] * A[6] - A[0] * A[7]) * s;
    out[8] = (A[0] * A[4] - A[1] * A[3]) * s;
    return 1;
}
HY_HD hy_v3 mat_tmul_v3(const double m[9], hy_v3 a) {
    return v3(m[0] * a.x + m[3] * a.y + m[6] * a.z, m[1] * a.x + m[4] * a.y + m[7] * a.z,
              m[2] * a.x + m[5] * a.y + m[8] * a.z);
}
HY_HD hy_v3 quat_rotate(hy_quat q, hy_v3 a) {
    double m[9];
    quat_to_mat(q, m);
    return mat_mul_v3(m, a);
}

/* 0.5 sum m_i |v_i|^2 of n lumped masses (J): the cloth's and the FEM
 * solids' kinetic energy. */
static inline double hy_lumped_kinetic_energy(const double* mass, const double* v, int32_t n) {
    double e = 0.0;
    for (int32_t i = 0; i < n; i++) {
        const double* w = v + 3 * i;
        e += mass[i] * (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    }
    return 0.5 * e;
}

#endif
