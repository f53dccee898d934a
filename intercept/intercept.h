/* libhyphys_intercept.so: loaded with LD_PRELOAD into a CUDA program built
 * with `-cudart shared`, it sends each kernel launch to the device a
 * placement policy picks, makes the launch's device-pointer arguments point
 * at that device's copy of the data, and gives the caller back its current
 * device. docs/design/INTERCEPT.md explains how; docs/guide/INTERCEPT.md how
 * to run a program under it.
 *
 * The control API below is what a runtime that knows better than the
 * built-in policies uses to place launches. A program that was not linked
 * against the library reaches it with dlsym(RTLD_DEFAULT, "hy_intercept_...")
 * (NULL when the interceptor is not loaded); the typedefs name those
 * functions' types. Every function is thread-safe. */
#ifndef HY_INTERCEPT_H
#define HY_INTERCEPT_H

#ifdef __cplusplus
extern "C" {
#endif

#define HY_INTERCEPT_MAX_DEVICES 32

/* What a policy is told about one launch. */
typedef struct hy_intercept_launch {
    const char* kernel; /* device-side name as registered (mangled for C++), or NULL */
    const void* func; /* host stub or kernel handle the program launched */
    int caller_device; /* the program's current device at the launch */
    int device_count; /* devices the runtime reports */
    unsigned long long index; /* launches seen before this one, from 0 */
    unsigned grid[3], block[3];
} hy_intercept_launch;

/* Returns the device in [0, device_count) to run the launch on, or -1 to
 * leave it on the caller's device. Called on the launching thread with the
 * interceptor's lock not held; it must not launch kernels itself. */
typedef int (*hy_intercept_policy_fn)(const hy_intercept_launch* launch, void* ctx);

/* Counters since the library was loaded. */
typedef struct hy_intercept_stats {
    unsigned long long launches; /* launches that went through a launch entry point */
    unsigned long long configured; /* <<<...>>> configurations pushed */
    unsigned long long retargeted; /* launches run on a device other than the caller's */
    unsigned long long kept; /* launches left on the caller's device because their
                                parameters could not be listed */
    unsigned long long translated; /* pointer arguments rewritten to another device's copy */
    unsigned long long copies; /* copies made to bring a stale copy up to date */
    unsigned long long bytes_copied;
    unsigned long long per_device[HY_INTERCEPT_MAX_DEVICES]; /* launches run on each device */
} hy_intercept_stats;

/* Replaces the placement policy (NULL: back to the one HY_INTERCEPT_POLICY
 * chose). Returns 0. */
int hy_intercept_set_policy(hy_intercept_policy_fn fn, void* ctx);
typedef int (*hy_intercept_set_policy_t)(hy_intercept_policy_fn fn, void* ctx);

/* Sends every later launch to `device` (-1: back to the policy). Returns 0,
 * or 1 when `device` is not -1 and not a device the runtime reports. */
int hy_intercept_set_target(int device);
typedef int (*hy_intercept_set_target_t)(int device);

void hy_intercept_get_stats(hy_intercept_stats* out);
typedef void (*hy_intercept_get_stats_t)(hy_intercept_stats* out);

#ifdef __cplusplus
}
#endif
#endif
