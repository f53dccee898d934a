/* Modeled machines and the profiles of Hermann et al. 2010. */
#include "runtime/machine.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void hy_rt_machine_init(hy_rt_machine* m, const char* name) {
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", name ? name : "machine");
    hy_rt_memnet_init(&m->net);
    m->steal_cost = HY_RT_STEAL_COST;
}

hy_status hy_rt_machine_add_pu(hy_rt_machine* m, const char* name, hy_rt_pu_kind kind, int32_t mem, double speed,
                               double overhead, int32_t* out) {
    if (!m || !name) return hy_fail(HY_ERR_INVALID_ARG, "hy_rt_machine_add_pu: NULL argument");
    if (m->npu >= HY_RT_MAX_PUS) return hy_fail(HY_ERR_INVALID_ARG, "PU %s: at most %d PUs", name, HY_RT_MAX_PUS);
    if (kind != HY_RT_CPU && kind != HY_RT_GPU) return hy_fail(HY_ERR_INVALID_ARG, "PU %s: unknown kind %d", name, kind);
    if (mem < 0 || mem >= m->net.nmem)
        return hy_fail(HY_ERR_INVALID_ARG, "PU %s: memory %d not in [0, %d)", name, mem, m->net.nmem);
    if (!(speed > 0) || !isfinite(speed) || !(overhead >= 0) || !isfinite(overhead))
        return hy_fail(HY_ERR_INVALID_ARG, "PU %s: speed must be > 0 and overhead >= 0, got %g and %g", name, speed,
                       overhead);
    hy_rt_pu* p = &m->pu[m->npu];
    snprintf(p->name, sizeof p->name, "%s", name);
    p->kind = kind;
    p->mem = mem;
    p->speed = speed;
    p->overhead = overhead;
    if (out) *out = m->npu;
    m->npu++;
    return HY_OK;
}

/* The constants (docs/design/RUNTIME.md gives the derivation):
 * - a CPU core is the reference (speed 1) and pays 1 µs of runtime
 *   bookkeeping per task;
 * - a GTX 295 GPU does 6 reference-core seconds per second on large objects
 *   (4 GPUs reached 22x one core in the paper, 5.5 each after transfers and
 *   launches), and pays 50 µs per task (an implicit step's CG launches a few
 *   kernels per iteration at ~5 µs each, then synchronises), so that objects
 *   under ~60 µs of CPU work run faster on a core;
 * - each GPU reaches the host through its board's PCIe 2.0 x16 slot, shared
 *   by the board's two GPUs: 2.5 GB/s each, 15 µs per transfer. */
#define CPU_OVERHEAD 1e-6
#define GPU_SPEED 6.0
#define GPU_OVERHEAD 50e-6
#define PCIE_BANDWIDTH 2.5e9
#define PCIE_LATENCY 15e-6

hy_status hy_rt_machine_profile(const char* name, int gpus, int cpus, hy_rt_machine* out) {
    if (!name || !out) return hy_fail(HY_ERR_INVALID_ARG, "hy_rt_machine_profile: NULL argument");
    int max_gpus, max_cpus;
    if (!strcmp(name, "cpu")) {
        max_gpus = 0;
        max_cpus = HY_RT_MAX_PUS;
    } else if (!strcmp(name, "hermann8")) {
        max_gpus = 8;
        max_cpus = 4;
    } else if (!strcmp(name, "hermann4")) {
        max_gpus = 4;
        max_cpus = 8 - gpus;
    } else {
        return hy_fail(HY_ERR_INVALID_ARG, "unknown machine profile '%s' (known: cpu, hermann8, hermann4)", name);
    }
    if (gpus < 0 || gpus > max_gpus || cpus < 0 || cpus > max_cpus || gpus + cpus < 1)
        return hy_fail(HY_ERR_INVALID_ARG,
                       "machine profile %s: %d GPUs and %d CPUs out of range (GPUs 0..%d, CPUs 0..%d, at least one PU)",
                       name, gpus, cpus, max_gpus, max_cpus < 0 ? 0 : max_cpus);
    hy_rt_machine_init(out, name);
    hy_status s = HY_OK;
    char buf[16];
    for (int i = 0; i < gpus && !s; i++) {
        int32_t mem;
        snprintf(buf, sizeof buf, "gpu%d", i);
        s = hy_rt_memnet_add_memory(&out->net, buf, &mem);
        if (!s) s = hy_rt_memnet_add_channel(&out->net, HY_RT_HOST, mem, PCIE_LATENCY, PCIE_BANDWIDTH);
        if (!s) s = hy_rt_machine_add_pu(out, buf, HY_RT_GPU, mem, GPU_SPEED, GPU_OVERHEAD, NULL);
    }
    for (int i = 0; i < cpus && !s; i++) {
        snprintf(buf, sizeof buf, "cpu%d", i);
        s = hy_rt_machine_add_pu(out, buf, HY_RT_CPU, HY_RT_HOST, 1.0, CPU_OVERHEAD, NULL);
    }
    return s;
}
