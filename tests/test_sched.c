/* Tests the scheduling core (sched/model, sched/lp, sched/policy*): built-in
 * and JSON device profiles, the built-in simplex against GLPK, and every
 * policy's assignment on random job sets (valid, deterministic, exhaustive
 * no worse than lp). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "hyphys/hyphys.h"
#include "sched/policy.h"
#include "test.h"

#include <cjson/cJSON.h>

/* splitmix64 for the test's own choices (patterns, sizes) */
static uint64_t rng(uint64_t* s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int contains(const char* hay, const char* needle) { return hay && strstr(hay, needle) != NULL; }

/* Write text to a fresh temporary file; returns its path (static buffer). */
static const char* temp_file(const char* text) {
    static char path[64];
    snprintf(path, sizeof path, "/tmp/hy_test_sched_XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0) return NULL;
    size_t n = strlen(text);
    ssize_t w = write(fd, text, n);
    close(fd);
    return w == (ssize_t)n ? path : NULL;
}

/* Default options with lp's time-out off: answers without the wall clock
 * in them, the same every run. */
/* The policies' own answers, repeatable: no wall-clock time-out, and no
 * GPU guard (tests/test_engage.c tests the guard over every policy). */
static hy_sched_options options_fixed(void) {
    hy_sched_options o;
    hy_sched_options_default(&o);
    o.lp_timeout = 0;
    o.gpu_guard = 0;
    return o;
}

static void test_builtin_profiles(void) {
    const char* want[] = {"gtx285", "gtx480", "gtx580", "c2075", "cpu-m1", "cpu-m2"};
    const char* const* names = hy_device_profile_builtin_names();
    int n = 0;
    while (names[n]) n++;
    CHECK(n == 6);
    for (int k = 0; k < 6; k++) {
        hy_device_profile p;
        CHECK_OK(hy_device_profile_builtin(want[k], &p));
        CHECK(!strcmp(p.name, want[k]));
        CHECK(p.kind == (k < 4 ? HY_DEVICE_GPU : HY_DEVICE_CPU));
        CHECK(p.cores >= 1);
        for (int c = 0; c < HY_JOB_KINDS; c++) CHECK(p.cost[c].setup > 0 && p.cost[c].proc > 0);
        /* JSON round trip; the JSON is in µs, so allow the scaling's round-off */
        cJSON* j = hy_device_profile_to_json(&p);
        CHECK(j != NULL);
        hy_device_profile q;
        CHECK_OK(hy_device_profile_from_json(j, "roundtrip", &q));
        cJSON_Delete(j);
        CHECK(!strcmp(q.name, p.name) && q.kind == p.kind && q.cores == p.cores);
        for (int c = 0; c < HY_JOB_KINDS; c++) {
            CHECK_NEAR(q.cost[c].setup, p.cost[c].setup, 1e-15);
            CHECK_NEAR(q.cost[c].proc, p.cost[c].proc, 1e-15);
            CHECK_NEAR(q.cost[c].upload, p.cost[c].upload, 1e-15);
            CHECK_NEAR(q.cost[c].download, p.cost[c].download, 1e-15);
        }
    }
    hy_device_profile p;
    CHECK(hy_device_profile_builtin("gtx9999", &p) == HY_ERR_INVALID_ARG);
    CHECK(contains(hy_last_error(), "gtx9999") && contains(hy_last_error(), "gtx285"));

    /* the evaluation machines */
    hy_sched_model m;
    for (int R = 2; R <= 6; R++) {
        CHECK_OK(hy_sched_model_machine(&m, R, 1));
        CHECK(m.resources == R && m.device[0].kind == HY_DEVICE_CPU && m.device[1].kind == HY_DEVICE_GPU);
    }
    for (int R = 13; R <= 16; R++) {
        CHECK_OK(hy_sched_model_machine(&m, R, 0));
        CHECK(m.resources == R && m.device[11].kind == HY_DEVICE_CPU && m.device[12].kind == HY_DEVICE_GPU);
    }
    CHECK(hy_sched_model_machine(&m, 12, 0) == HY_ERR_INVALID_ARG);
    /* a job's transfer cost: free where it was produced, download + upload elsewhere */
    CHECK_OK(hy_sched_model_machine(&m, 3, 1));
    int leaf_of_1 = hy_job_type(1, HY_JOB_LEAF);
    CHECK(m.cost[1][leaf_of_1] == m.device[1].cost[HY_JOB_LEAF].proc);
    CHECK_NEAR(m.cost[2][leaf_of_1],
               m.device[2].cost[HY_JOB_LEAF].proc + m.device[1].cost[HY_JOB_LEAF].download +
                   m.device[2].cost[HY_JOB_LEAF].upload,
               1e-18);
    /* a staged device (a real GPU of this build) uploads every job, its own
     * too; the others keep the rule above */
    m.device[1].staged = 1;
    hy_sched_model_update(&m);
    CHECK_NEAR(m.cost[1][leaf_of_1],
               m.device[1].cost[HY_JOB_LEAF].proc + m.device[1].cost[HY_JOB_LEAF].download +
                   m.device[1].cost[HY_JOB_LEAF].upload,
               1e-18);
    CHECK(m.trans[1][leaf_of_1] > 0.0);
    int leaf_of_2 = hy_job_type(2, HY_JOB_LEAF);
    CHECK(m.trans[2][leaf_of_2] == 0.0 && m.cost[2][leaf_of_2] == m.device[2].cost[HY_JOB_LEAF].proc);
    {
        cJSON* j = hy_device_profile_to_json(&m.device[1]);
        hy_device_profile q;
        CHECK(j != NULL && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "staged")));
        CHECK_OK(hy_device_profile_from_json(j, "roundtrip", &q));
        CHECK(q.staged == 1);
        cJSON_Delete(j);
        j = hy_device_profile_to_json(&m.device[2]);
        CHECK(j != NULL && cJSON_GetObjectItemCaseSensitive(j, "staged") == NULL);
        CHECK_OK(hy_device_profile_from_json(j, "roundtrip", &q));
        CHECK(q.staged == 0);
        cJSON_Delete(j);
    }
}

static void test_profile_files(void) {
    const char* good =
        "{\"devices\": [\n"
        " {\"name\": \"mycpu\", \"kind\": \"cpu\", \"cores\": 8,\n"
        "  \"traverse\": {\"setup_us\": 10, \"proc_us\": 0.1, \"upload_us\": 0, \"download_us\": 0},\n"
        "  \"leaf\": {\"setup_us\": 10, \"proc_us\": 0.5, \"upload_us\": 0, \"download_us\": 0}},\n"
        " {\"name\": \"mygpu\", \"kind\": \"gpu\", \"cores\": 512, \"source\": \"made up\",\n"
        "  \"traverse\": {\"setup_us\": 30, \"proc_us\": 0.03, \"upload_us\": 0.01, \"download_us\": 0.02},\n"
        "  \"leaf\": {\"setup_us\": 20, \"proc_us\": 0.04, \"upload_us\": 0.01, \"download_us\": 0.02}}]}\n";
    const char* path = temp_file(good);
    CHECK(path != NULL);
    if (!path) return;
    char saved[64];
    snprintf(saved, sizeof saved, "%s", path);
    hy_sched_model m, m2;
    CHECK_OK(hy_sched_model_load(saved, &m));
    CHECK(m.resources == 2 && !strcmp(m.device[1].name, "mygpu"));
    CHECK_NEAR(m.device[1].cost[HY_JOB_TRAVERSE].setup, 30e-6, 1e-18);
    /* save and load again: same constants */
    CHECK_OK(hy_sched_model_save(&m, saved));
    CHECK_OK(hy_sched_model_load(saved, &m2));
    CHECK(m2.resources == 2);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++) {
            CHECK_NEAR(m2.setup[i][j], m.setup[i][j], 1e-18);
            CHECK_NEAR(m2.cost[i][j], m.cost[i][j], 1e-18);
        }
    unlink(saved);

    /* bad files: the status, the file name and the field in the message */
    struct {
        const char* text;
        hy_status status;
        const char* field;
    } bad[] = {
        {"{\"name\": \"g\", \"kind\": \"gpu\", \"cores\": 1, \"traverse\": {\"setup_us\": 1, \"proc_us\": \"fast\", "
         "\"upload_us\": 0, \"download_us\": 0}, \"leaf\": {\"setup_us\": 1, \"proc_us\": 1, \"upload_us\": 0, "
         "\"download_us\": 0}}",
         HY_ERR_PARSE, "proc_us"},
        {"{\"name\": \"g\", \"kind\": \"gpu\", \"cores\": 1, \"traverse\": {\"setup_us\": -1, \"proc_us\": 1, "
         "\"upload_us\": 0, \"download_us\": 0}, \"leaf\": {\"setup_us\": 1, \"proc_us\": 1, \"upload_us\": 0, "
         "\"download_us\": 0}}",
         HY_ERR_PARSE, "setup_us"},
        {"{\"name\": \"g\", \"kind\": \"gpu\", \"cores\": 1, \"traverse\": {\"setup_us\": 1, \"proc_us\": 1, "
         "\"upload_us\": 0}, \"leaf\": {\"setup_us\": 1, \"proc_us\": 1, \"upload_us\": 0, \"download_us\": 0}}",
         HY_ERR_PARSE, "download_us"},
        {"{\"name\": \"g\", \"kind\": \"fpga\", \"cores\": 1}", HY_ERR_PARSE, "kind"},
        {"{\"name\": \"g\", \"kind\": \"gpu\", \"cores\": 1, \"staged\": 1}", HY_ERR_PARSE, "staged"},
        {"{\"name\": \"g\", \"kind\": \"gpu\", \"cores\": 0}", HY_ERR_PARSE, "cores"},
        {"{\"name\": \"g\", \"kind\": \"gpu\", \"cores\": 1, \"setpu_us\": 3}", HY_ERR_PARSE, "setpu_us"},
        {"{\"devices\": [{\"name\": \"ok\", \"kind\": \"gpu\", \"cores\": 1,\n \"leaf\": 3}]}", HY_ERR_PARSE,
         "devices[0]"},
        {"{\"devices\": []}", HY_ERR_PARSE, "devices"},
        {"{\"name\": \"g\",\n \"kind\": \"gpu\",\n \"cores\": 1,,\n}", HY_ERR_PARSE, ":3:"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        path = temp_file(bad[k].text);
        CHECK(path != NULL);
        if (!path) continue;
        snprintf(saved, sizeof saved, "%s", path);
        m.resources = 77; /* must stay untouched on failure */
        hy_status s = hy_sched_model_load(saved, &m);
        CHECK(s == bad[k].status);
        CHECK(m.resources == 77);
        if (!contains(hy_last_error(), saved) || !contains(hy_last_error(), bad[k].field))
            fprintf(stderr, "case %zu: message '%s' lacks '%s' or '%s'\n", k, hy_last_error(), saved,
                    bad[k].field);
        CHECK(contains(hy_last_error(), saved));
        CHECK(contains(hy_last_error(), bad[k].field));
        hy_device_profile d;
        CHECK(hy_device_profile_load(saved, &d) != HY_OK);
        unlink(saved);
    }
    CHECK(hy_sched_model_load("/nonexistent/profile.json", &m) == HY_ERR_IO);
    CHECK(contains(hy_last_error(), "/nonexistent/profile.json"));
}

/* The built-in simplex against GLPK (rational arithmetic via glp_exact) on
 * random problems and random feasible setup patterns. Tolerance 1e-9
 * relative: the bound; the simplex recomputes L from its basis. */
static void test_lp_vs_glpk(void) {
    if (!hy_sched_lp_have_glpk()) {
        fprintf(stderr, "note: no GLPK in this build; LP-vs-GLPK comparison skipped\n");
        return;
    }
    const int sizes[][2] = {{2, 1}, {3, 1}, {4, 1}, {5, 1}, {6, 1}, {13, 0}, {16, 0}};
    uint64_t s = 42;
    int compared = 0, worst_k = -1;
    double worst = 0;
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
        hy_sched_model m;
        CHECK_OK(hy_sched_model_machine(&m, sizes[z][0], sizes[z][1]));
        int R = m.resources;
        for (int k = 0; k < 60; k++) {
            hy_sched_problem p;
            hy_sched_problem_random(&p, &m, 1000 + (uint64_t)k, 1, k % 3 == 0 ? 100 : 20000);
            hy_sched_lp a, b;
            hy_sched_lp_allow_all(&p, &a);
            /* two in three: drop random pairs, keeping one per type */
            if (k % 3)
                for (int j = 0; j < 2 * R; j++) {
                    if (!p.jobs[j]) continue;
                    int keep = (int)(rng(&s) % (uint64_t)R);
                    for (int i = 0; i < R; i++)
                        if (i != keep && rng(&s) % 2) a.allowed[i][j] = 0;
                }
            b = a;
            hy_lp_result ra = hy_sched_lp_solve(&p, &a, HY_LP_SIMPLEX);
            hy_lp_result rb = hy_sched_lp_solve(&p, &b, HY_LP_GLPK_EXACT);
            CHECK(ra == HY_LP_OPTIMAL);
            CHECK(rb == HY_LP_OPTIMAL);
            if (ra != HY_LP_OPTIMAL || rb != HY_LP_OPTIMAL) continue;
            double rel = fabs(a.makespan - b.makespan) / b.makespan;
            if (rel > worst) worst = rel, worst_k = k;
            CHECK(rel <= 1e-9);
            /* the simplex's x is a feasible point of the LP with that makespan */
            for (int j = 0; j < 2 * R; j++) {
                double sum = 0;
                for (int i = 0; i < R; i++) {
                    CHECK(a.x[i][j] >= 0);
                    if (!a.allowed[i][j]) CHECK(a.x[i][j] == 0);
                    sum += a.x[i][j];
                }
                CHECK_NEAR(sum, (double)p.jobs[j], 1e-9 * (1.0 + (double)p.jobs[j]));
            }
            compared++;
        }
    }
    fprintf(stderr, "LP vs GLPK: %d problems, worst relative difference %.3g (problem %d)\n", compared, worst,
            worst_k);
    /* a type with jobs and no allowed resource is infeasible */
    hy_sched_model m;
    CHECK_OK(hy_sched_model_machine(&m, 3, 1));
    hy_sched_problem p;
    hy_sched_problem_init(&p, &m);
    p.jobs[2] = 10;
    hy_sched_lp lp;
    memset(lp.allowed, 0, sizeof lp.allowed);
    CHECK(hy_sched_lp_solve(&p, &lp, HY_LP_SIMPLEX) == HY_LP_INFEASIBLE);
    CHECK(hy_sched_lp_solve(&p, &lp, HY_LP_GLPK) == HY_LP_INFEASIBLE);
}

/* One active type: the built-in solver answers by water-filling (sched/lp.c
 * waterfill_solve) where the optimum is the crash basis or the level above
 * every start, and leaves the split-below-the-top case to the simplex. All
 * three cases appear below, each against GLPK's exact answer. */
static void test_lp_one_type(void) {
    uint64_t s = 7;
    int cases[3] = {0, 0, 0}; /* whole on one resource, level above all starts, split below the top */
    for (int R = 2; R <= 6; R++) { /* a hierarchical machine has a CPU and at least one GPU */
        hy_sched_model m;
        CHECK_OK(hy_sched_model_machine(&m, R, 1));
        for (int k = 0; k < 80; k++) {
            hy_sched_problem p;
            hy_sched_problem_init(&p, &m);
            int j = (int)(rng(&s) % (uint64_t)(2 * R));
            p.jobs[j] = 1 + (int64_t)(rng(&s) % 40000);
            /* busy times from none to about twice the type's work on one GPU */
            double scale = 2.0 * m.cost[R - 1][j] * (double)p.jobs[j];
            for (int i = 0; i < R; i++) p.busy[i] = (double)(rng(&s) % 1000) / 1000.0 * scale * (double)(k % 4);
            hy_sched_lp a, b;
            hy_sched_lp_allow_all(&p, &a);
            for (int i = 0; i < R; i++)
                if (rng(&s) % 3 == 0) a.allowed[i][j] = 0;
            a.allowed[(int)(rng(&s) % (uint64_t)R)][j] = 1;
            b = a;
            CHECK(hy_sched_lp_solve(&p, &a, HY_LP_SIMPLEX) == HY_LP_OPTIMAL);
            CHECK(hy_sched_lp_solve(&p, &b, HY_LP_GLPK_EXACT) == HY_LP_OPTIMAL);
            CHECK(fabs(a.makespan - b.makespan) <= 1e-9 * b.makespan);
            double sum = 0, top = 0;
            int on = 0;
            for (int i = 0; i < R; i++) {
                CHECK(a.x[i][j] >= 0);
                if (!a.allowed[i][j]) CHECK(a.x[i][j] == 0);
                sum += a.x[i][j];
                on += a.x[i][j] > 0;
                if (p.busy[i] > top) top = p.busy[i];
            }
            CHECK_NEAR(sum, (double)p.jobs[j], 1e-9 * (double)p.jobs[j]);
            cases[on == 1 && a.makespan <= top * (1 + 1e-12) ? 0 : a.makespan > top * (1 + 1e-12) ? 1 : 2]++;
        }
    }
    fprintf(stderr, "LP with one type: %d whole, %d level above every start, %d split below the top\n", cases[0],
            cases[1], cases[2]);
    CHECK(cases[0] > 0 && cases[1] > 0 && cases[2] > 0);
}

/* The modeled scheduler call (sched/policy.h): an lp call costs more with
 * more LP solves and with more active types; a ws call does not depend on
 * the solves; every call includes the 2 us gather. */
static void test_call_time(void) {
    hy_sched_model m;
    CHECK_OK(hy_sched_model_machine(&m, 6, 1));
    hy_sched_problem one, all;
    hy_sched_problem_init(&one, &m);
    hy_sched_problem_init(&all, &m);
    one.jobs[3] = 100;
    for (int j = 0; j < 12; j++) all.jobs[j] = 100;
    const hy_sched_policy_class *lp = &hy_sched_policy_lp, *ws = &hy_sched_policy_ws;
    const hy_sched_policy_class* tan09 = &hy_sched_policy_tan09;
    CHECK(hy_sched_call_time(lp, &one, 0) >= 2e-6);
    CHECK(hy_sched_call_time(lp, &one, 3) > hy_sched_call_time(lp, &one, 2));
    CHECK(hy_sched_call_time(lp, &all, 3) > hy_sched_call_time(lp, &one, 3));
    CHECK(hy_sched_call_time(&hy_sched_policy_exhaustive, &all, 3) == hy_sched_call_time(lp, &all, 3));
    CHECK(hy_sched_call_time(ws, &all, 1) == hy_sched_call_time(ws, &all, 9));
    CHECK(hy_sched_call_time(ws, &all, 1) > hy_sched_call_time(ws, &one, 1));
    CHECK(hy_sched_call_time(tan09, &one, 0) >= 2e-6 && hy_sched_call_time(tan09, &one, 0) < 3e-6);
    /* every registered policy has its call time (the framework's virtual
     * clock charges it), all at least the gather */
    int n = 0;
    for (const hy_sched_policy_class* const* c = hy_sched_policy_list(); *c; c++, n++) {
        CHECK((*c)->call_time != NULL);
        if ((*c)->call_time) CHECK(hy_sched_call_time(*c, &all, 1) > HY_SCHED_GATHER_TIME);
    }
    CHECK(n == 6);
}

static int64_t total_jobs(const hy_sched_problem* p) {
    int64_t n = 0;
    for (int j = 0; j < 2 * p->model->resources; j++) n += p->jobs[j];
    return n;
}

/* Every policy on random sets: all jobs assigned once, non-negative counts,
 * the makespan the model gives, and the same answer twice. */
static void test_policies_valid(void) {
    const int sizes[][2] = {{2, 1}, {3, 1}, {4, 1}, {6, 1}, {13, 0}, {16, 0}};
    hy_sched_options o = options_fixed();
    o.block = 100;
    for (const hy_sched_policy_class* const* c = hy_sched_policy_list(); *c; c++) {
        hy_sched_policy *p1 = NULL, *p2 = NULL;
        CHECK_OK(hy_sched_policy_create((*c)->name, &o, &p1));
        CHECK_OK(hy_sched_policy_create((*c)->name, &o, &p2));
        if (!p1 || !p2) continue;
        int exhaustive = !strcmp((*c)->name, "exhaustive");
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
            hy_sched_model m;
            CHECK_OK(hy_sched_model_machine(&m, sizes[z][0], sizes[z][1]));
            int R = m.resources;
            int sets = exhaustive ? (R <= 3 ? 6 : 1) : 20;
            for (int k = 0; k < sets; k++) {
                hy_sched_problem p;
                hy_sched_problem_random(&p, &m, 77 + (uint64_t)k, 1, k % 2 ? 300 : 30000);
                if (k == 0) p.jobs[0] = 0; /* an empty type */
                hy_sched_assignment a, b;
                hy_status s = hy_sched_policy_assign(p1, &p, &a);
                if (exhaustive && R > 3 && s != HY_OK) {
                    /* too many patterns (past 2^24): a clear refusal, not a
                     * hang; |R| = 4 with at most 6 types still runs */
                    CHECK(s == HY_ERR_UNSUPPORTED);
                    CHECK(R > 4 && contains(hy_last_error(), "exhaustive"));
                    continue;
                }
                CHECK_OK(s);
                if (s) continue;
                int64_t sum = 0;
                for (int i = 0; i < R; i++)
                    for (int j = 0; j < 2 * R; j++) {
                        CHECK(a.count[i][j] >= 0);
                        sum += a.count[i][j];
                    }
                for (int j = 0; j < 2 * R; j++) {
                    int64_t col = 0;
                    for (int i = 0; i < R; i++) col += a.count[i][j];
                    CHECK(col == p.jobs[j]);
                }
                CHECK(sum == total_jobs(&p));
                CHECK(a.makespan == hy_sched_makespan(&p, &a));
                CHECK(a.makespan >= p.busy[0]);
                CHECK_OK(hy_sched_policy_assign(p2, &p, &b));
                CHECK(!memcmp(a.count, b.count, sizeof a.count));
                CHECK(a.makespan == b.makespan && a.iterations == b.iterations);
            }
        }
        /* nothing to do: every count 0, makespan = the longest busy time */
        hy_sched_model m;
        CHECK_OK(hy_sched_model_machine(&m, 3, 1));
        hy_sched_problem p;
        hy_sched_problem_init(&p, &m);
        p.busy[1] = 2e-3;
        hy_sched_assignment a;
        CHECK_OK(hy_sched_policy_assign(p1, &p, &a));
        CHECK(a.makespan == 2e-3);
        hy_sched_policy_destroy(p1);
        hy_sched_policy_destroy(p2);
    }
}

/* exhaustive finds L*, the best LP over all setup patterns; pruning does not
 * change it; no assignment lp returns beats it, and exhaustive's integer
 * answer is never worse than lp's. */
static void test_exhaustive(void) {
    hy_sched_options o = options_fixed();
    hy_sched_policy* lp = NULL;
    CHECK_OK(hy_sched_policy_create("lp", &o, &lp));
    if (!lp) return;
    const int R_of[] = {2, 3};
    double worse = 0;
    for (int z = 0; z < 2; z++) {
        hy_sched_model m;
        CHECK_OK(hy_sched_model_machine(&m, R_of[z], 1));
        int R = m.resources;
        for (int k = 0; k < 25; k++) {
            hy_sched_problem p;
            hy_sched_problem_random(&p, &m, 500 + (uint64_t)k, 1, k % 2 ? 200 : 20000);
            /* brute force is 2^(R·T): keep R·T <= 12 */
            int T = 0;
            for (int j = 0; j < 2 * R; j++)
                if (p.jobs[j] && ++T > 12 / R) p.jobs[j] = 0;
            hy_sched_assignment a, e, b;
            CHECK_OK(hy_sched_policy_assign(lp, &p, &a));
            CHECK_OK(hy_sched_exhaustive_run(&p, HY_LP_SIMPLEX, 1, &e));
            CHECK_OK(hy_sched_exhaustive_run(&p, HY_LP_SIMPLEX, 0, &b));
            /* same optimum, whether pruned or not (1e-9: the LP tolerance) */
            CHECK_NEAR(e.lp_initial, b.lp_initial, 1e-9 * b.lp_initial);
            CHECK(e.iterations <= b.iterations);
            /* L* bounds every integer assignment from below */
            CHECK(a.makespan >= e.lp_initial * (1 - 1e-9));
            CHECK(e.makespan >= e.lp_initial * (1 - 1e-9));
            CHECK(e.makespan <= a.makespan);
            CHECK(b.makespan <= a.makespan);
            if (a.makespan / e.makespan - 1 > worse) worse = a.makespan / e.makespan - 1;
        }
    }
    fprintf(stderr, "exhaustive vs lp on small sets: worst lp gap %.3f%%\n", 100 * worse);
    hy_sched_policy_destroy(lp);
}

/* lp's refinement: never worse than its first LP's rounded answer, and the
 * iteration cap holds. */
static void test_lp_refinement(void) {
    hy_sched_model m;
    CHECK_OK(hy_sched_model_machine(&m, 6, 1));
    hy_sched_options o = options_fixed();
    hy_sched_options one = o;
    one.lp_max_iterations = 1;
    one.lp_polish = 0; /* the first LP's rounding as it is */
    hy_sched_policy *full = NULL, *first = NULL;
    CHECK_OK(hy_sched_policy_create("lp", &o, &full));
    CHECK_OK(hy_sched_policy_create("lp", &one, &first));
    if (!full || !first) return;
    double ratio = 0;
    for (int k = 0; k < 40; k++) {
        hy_sched_problem p;
        hy_sched_problem_random(&p, &m, 900 + (uint64_t)k, 64, 16384);
        hy_sched_assignment a, b;
        CHECK_OK(hy_sched_policy_assign(full, &p, &a));
        CHECK_OK(hy_sched_policy_assign(first, &p, &b));
        CHECK(b.iterations == 1);
        CHECK(a.iterations >= 1 && a.iterations <= o.lp_max_iterations);
        CHECK(a.makespan <= b.makespan);
        CHECK(a.lp_initial == b.lp_initial);
        ratio += a.makespan / a.lp_initial;
    }
    fprintf(stderr, "lp at |R| = 6: mean L_fin/L_init %.4f\n", ratio / 40);
    /* GLPK as the solver gives the same makespans (within the LP tolerance) */
    if (hy_sched_lp_have_glpk()) {
        hy_sched_options g = o;
        g.solver = HY_LP_GLPK;
        hy_sched_policy* pg = NULL;
        CHECK_OK(hy_sched_policy_create("lp", &g, &pg));
        for (int k = 0; k < 10 && pg; k++) {
            hy_sched_problem p;
            hy_sched_problem_random(&p, &m, 900 + (uint64_t)k, 64, 16384);
            hy_sched_assignment a, b;
            CHECK_OK(hy_sched_policy_assign(full, &p, &a));
            CHECK_OK(hy_sched_policy_assign(pg, &p, &b));
            CHECK_NEAR(a.lp_initial, b.lp_initial, 1e-9 * b.lp_initial);
        }
        hy_sched_policy_destroy(pg);
    }
    hy_sched_policy_destroy(full);
    hy_sched_policy_destroy(first);
}


/* lp's integer polish only ever lowers the makespan, keeps every job
 * assigned once, and mends a refinement cut short: with a single LP solve
 * allowed, polishing recovers most of what the full refinement gains. */
static void test_lp_polish(void) {
    hy_sched_model m;
    CHECK_OK(hy_sched_model_machine(&m, 4, 1));
    hy_sched_options o = options_fixed();
    hy_sched_options never = o, always = o, cut = o, cut_raw = o;
    never.lp_polish = 0;
    always.lp_polish = 2;
    cut.lp_max_iterations = 1; /* default polish 3, an isolated set: runs */
    cut_raw.lp_max_iterations = 1;
    cut_raw.lp_polish = 0;
    hy_sched_policy *pn = NULL, *pa = NULL, *pc = NULL, *pr = NULL;
    CHECK_OK(hy_sched_policy_create("lp", &never, &pn));
    CHECK_OK(hy_sched_policy_create("lp", &always, &pa));
    CHECK_OK(hy_sched_policy_create("lp", &cut, &pc));
    CHECK_OK(hy_sched_policy_create("lp", &cut_raw, &pr));
    if (!pn || !pa || !pc || !pr) return;
    double gain_cut = 0, gain_full = 0;
    int lower = 0;
    for (int k = 0; k < 60; k++) {
        hy_sched_problem p;
        hy_sched_problem_random(&p, &m, 4400 + (uint64_t)k, 64, 16384);
        hy_sched_assignment an, aa, ac, ar;
        CHECK_OK(hy_sched_policy_assign(pn, &p, &an));
        CHECK_OK(hy_sched_policy_assign(pa, &p, &aa));
        CHECK_OK(hy_sched_policy_assign(pc, &p, &ac));
        CHECK_OK(hy_sched_policy_assign(pr, &p, &ar));
        CHECK_OK(hy_sched_assignment_check(&p, &aa));
        CHECK_OK(hy_sched_assignment_check(&p, &ac));
        CHECK(aa.makespan <= an.makespan);
        CHECK(ac.makespan <= ar.makespan);
        lower += aa.makespan < an.makespan;
        gain_cut += 1 - ac.makespan / ar.makespan;
        gain_full += 1 - an.makespan / ar.makespan;
    }
    fprintf(stderr, "lp polish: lowered %d of 60 converged answers; after one LP it gains %.2f%%, the full "
                    "refinement %.2f%%\n", lower, 100 * gain_cut / 60, 100 * gain_full / 60);
    /* the polish after one LP gets at least half of what the whole
     * refinement gets on these sets; a broken polish gets nothing */
    CHECK(gain_cut >= 0.5 * gain_full);
    CHECK(lower > 0);
    /* the default (lp_polish 3): an isolated set is polished as with 2;
     * where rounds follow, a converged refinement's answer is not (one
     * iteration fewer than 2, the polish's) and a cut-short one is */
    hy_sched_options dflt = o, chained_always = o;
    chained_always.lp_polish = 2;
    hy_sched_policy *pd = NULL, *pca = NULL;
    CHECK_OK(hy_sched_policy_create("lp", &dflt, &pd));
    CHECK_OK(hy_sched_policy_create("lp", &chained_always, &pca));
    int skipped = 0;
    for (int k = 0; k < 40 && pd && pca; k++) {
        hy_sched_problem p;
        hy_sched_problem_random(&p, &m, 4400 + (uint64_t)k, 64, 16384);
        hy_sched_assignment d, e;
        CHECK_OK(hy_sched_policy_assign(pd, &p, &d));
        CHECK_OK(hy_sched_policy_assign(pca, &p, &e));
        CHECK(d.iterations == e.iterations && !memcmp(d.count, e.count, sizeof d.count));
        p.next_round = 1;
        CHECK_OK(hy_sched_policy_assign(pd, &p, &d));
        CHECK_OK(hy_sched_policy_assign(pca, &p, &e));
        if (d.iterations == 0) continue; /* fitted without an LP */
        CHECK(d.iterations + 1 == e.iterations);
        skipped++;
    }
    CHECK(skipped > 0);
    hy_sched_policy_destroy(pd);
    hy_sched_policy_destroy(pca);
    hy_sched_policy_destroy(pn);
    hy_sched_policy_destroy(pa);
    hy_sched_policy_destroy(pc);
    hy_sched_policy_destroy(pr);
}

/* lp's answers pay no setup that buys nothing: no resource runs a batch of
 * a type split over several resources when handing all of that batch to
 * one of the type's other resources would leave the makespan no higher and
 * take less time in all (the polish's prune step). Without the prune, rounding and the makespan's
 * blindness to non-critical resources leave such batches in some of these
 * sets (at |R| = 3 to 6, up to 9 of 200). */
static int useless_batches(const hy_sched_problem* p, const hy_sched_assignment* a) {
    int R = p->model->resources, found = 0;
    for (int j = 0; j < 2 * R; j++)
        for (int i = 0; i < R; i++) {
            if (a->count[i][j] <= 0) continue;
            for (int k = 0; k < R; k++) {
                if (k == i || a->count[k][j] <= 0) continue;
                hy_sched_assignment b = *a;
                b.count[k][j] += b.count[i][j];
                b.count[i][j] = 0;
                double before = hy_sched_problem_time(p, i, j, a->count[i][j]) +
                                hy_sched_problem_time(p, k, j, a->count[k][j]);
                if (hy_sched_makespan(p, &b) <= a->makespan && hy_sched_problem_time(p, k, j, b.count[k][j]) < before)
                    found++;
            }
        }
    return found;
}

static void test_lp_prune(void) {
    hy_sched_options o = options_fixed();
    hy_sched_policy* lp = NULL;
    CHECK_OK(hy_sched_policy_create("lp", &o, &lp));
    if (!lp) return;
    for (int R = 3; R <= 6; R++) {
        hy_sched_model m;
        CHECK_OK(hy_sched_model_machine(&m, R, 1));
        int bad = 0;
        for (int k = 0; k < 200; k++) {
            hy_sched_problem p;
            hy_sched_problem_random(&p, &m, 9300 + 1000 * (uint64_t)R + (uint64_t)k, 64, 16384);
            p.next_round = (uint8_t)(k & 1);
            hy_sched_assignment a;
            CHECK_OK(hy_sched_policy_assign(lp, &p, &a));
            CHECK_OK(hy_sched_assignment_check(&p, &a));
            bad += useless_batches(&p, &a) > 0;
        }
        if (bad) fprintf(stderr, "lp: %d of 200 answers at |R| = %d keep a batch that buys nothing\n", bad, R);
        CHECK(bad == 0);
    }
    hy_sched_policy_destroy(lp);
}

/* A set that fits in the time the busiest resource already has (the
 * short rounds at a frame's end): lp answers it without an LP, each type
 * whole on one resource, at the makespan no answer can beat (the largest
 * busy time; exhaustive agrees at |R| = 3). The same sets with every
 * resource idle still go through the LP. */
static void test_lp_slack(void) {
    hy_sched_options o = options_fixed();
    hy_sched_policy *lp = NULL, *ex = NULL;
    CHECK_OK(hy_sched_policy_create("lp", &o, &lp));
    CHECK_OK(hy_sched_policy_create("exhaustive", &o, &ex));
    if (!lp || !ex) {
        hy_sched_policy_destroy(lp);
        hy_sched_policy_destroy(ex);
        return;
    }
    for (int R = 3; R <= 6; R++) {
        hy_sched_model m;
        CHECK_OK(hy_sched_model_machine(&m, R, 1));
        for (int k = 0; k < 50; k++) {
            hy_sched_problem p;
            hy_sched_problem_random(&p, &m, 4400 + 100 * (uint64_t)R + (uint64_t)k, 1, 40);
            int busiest = k % R;
            p.busy[busiest] = 0.01; /* 10 ms: far more than the set's work anywhere */
            p.next_round = (uint8_t)(k & 1);
            p.open[(k / 2) % R][k % (2 * R)] = (uint8_t)(k % 3 == 0); /* a waiting batch now and then */
            hy_sched_assignment a;
            CHECK_OK(hy_sched_policy_assign(lp, &p, &a));
            CHECK(a.iterations == 0);
            CHECK(a.makespan == 0.01);
            for (int j = 0; j < 2 * R; j++) {
                int on = 0;
                for (int i = 0; i < R; i++) on += a.count[i][j] > 0;
                CHECK(on == (p.jobs[j] > 0));
            }
            if (R == 3 && k < 10) {
                hy_sched_assignment e;
                CHECK_OK(hy_sched_policy_assign(ex, &p, &e));
                CHECK(e.makespan >= a.makespan);
            }
            for (int i = 0; i < R; i++) p.busy[i] = 0;
            CHECK_OK(hy_sched_policy_assign(lp, &p, &a));
            CHECK(a.iterations >= 1);
        }
    }
    hy_sched_policy_destroy(lp);
    hy_sched_policy_destroy(ex);
}

/* A problem whose TRAVERSE jobs make the next round's
 * (hy_sched_problem.next_round): lp's polish charges a move that makes a
 * resource a new TRAVERSE producer the setup of the batch its children will
 * need, so it spreads traversal over fewer resources (never more), for a
 * call makespan a little higher on average than for the same jobs alone
 * (the polish is a local search, so a single set may come out lower); the
 * answers stay valid. Checked at |R| = 6 over 200 sets. */
static int traverse_producers(const hy_sched_model* m, const hy_sched_assignment* a) {
    int n = 0;
    for (int i = 0; i < m->resources; i++) {
        int runs = 0;
        for (int j = 0; j < 2 * m->resources; j += 2) runs |= a->count[i][j] > 0;
        n += runs;
    }
    return n;
}

static void test_lp_next_round(void) {
    hy_sched_model m;
    CHECK_OK(hy_sched_model_machine(&m, 6, 1));
    hy_sched_options o = options_fixed();
    o.lp_polish = 2; /* the producer charge acts in the polish: polish every answer */
    hy_sched_policy* lp = NULL;
    CHECK_OK(hy_sched_policy_create("lp", &o, &lp));
    if (!lp) return;
    int fewer = 0, more = 0;
    double ratio = 0;
    for (int k = 0; k < 200; k++) {
        hy_sched_problem alone, chained;
        hy_sched_problem_random(&alone, &m, 7100 + (uint64_t)k, 64, 16384);
        chained = alone;
        chained.next_round = 1;
        hy_sched_assignment a, c;
        CHECK_OK(hy_sched_policy_assign(lp, &alone, &a));
        CHECK_OK(hy_sched_policy_assign(lp, &chained, &c));
        CHECK_OK(hy_sched_assignment_check(&chained, &c));
        /* the charge is no part of the makespan */
        CHECK_NEAR(c.makespan, hy_sched_makespan(&alone, &c), 1e-15);
        ratio += c.makespan / a.makespan;
        int pa = traverse_producers(&m, &a), pc = traverse_producers(&m, &c);
        fewer += pc < pa;
        more += pc > pa;
    }
    ratio /= 200;
    fprintf(stderr, "lp with a next round: fewer TRAVERSE producers in %d of 200 sets, more in %d; call makespan %.4f x\n",
            fewer, more, ratio);
    CHECK(fewer > 0);
    CHECK(ratio >= 1.0 && ratio < 1.05);
    CHECK(more == 0);
    /* an out-of-range flag is bad input */
    hy_sched_problem bad;
    hy_sched_problem_random(&bad, &m, 7099, 64, 16384);
    bad.next_round = 2;
    hy_sched_assignment x;
    CHECK(hy_sched_policy_assign(lp, &bad, &x) == HY_ERR_INVALID_ARG);
    CHECK(contains(hy_last_error(), "next_round"));
    hy_sched_policy_destroy(lp);
}

/* A batch already waiting on a resource takes more jobs of its type with
 * no new setup (hy_sched_problem.open): the costs, the LP and every
 * model-driven policy see it. Resources: the 12-core CPU (kept busy),
 * gtx580, c2075; 100 LEAF jobs made on the gtx580, which is busy 10 µs
 * more. Setup 20 µs: with a new batch the c2075 is sooner (20 + 8.2 µs
 * against 10 + 20 + 3.6); joining the gtx580's open batch is sooner
 * still (10 + 3.6). */
/* Machine 2 cut to 3 resources, 100 jobs of type j in the problem, all
 * of them on resource i in the assignment. */
static void hundred_on(hy_sched_model* m, hy_sched_problem* p, hy_sched_assignment* a, int i, int j) {
    CHECK_OK(hy_sched_model_machine(m, 3, 1));
    hy_sched_problem_init(p, m);
    p->jobs[j] = 100;
    hy_sched_assignment_clear(a);
    a->count[i][j] = 100;
}

static void test_open_batches(void) {
    hy_sched_model m;
    hy_sched_problem p;
    hy_sched_assignment a;
    int j = hy_job_type(1, HY_JOB_LEAF);
    hundred_on(&m, &p, &a, 1, j);
    p.busy[0] = 1e-3;
    p.busy[1] = 10e-6;
    double closed = hy_sched_finish(&p, &a, 1);
    CHECK_NEAR(closed, 10e-6 + m.setup[1][j] + 100 * m.cost[1][j], 1e-15);
    p.open[1][j] = 1;
    CHECK_NEAR(hy_sched_finish(&p, &a, 1), 10e-6 + 100 * m.cost[1][j], 1e-15);
    CHECK(hy_sched_setup(&p, 1, j) == 0.0 && hy_sched_setup(&p, 2, j) == m.setup[2][j]);

    /* the model-driven choices (ws and ws-exp steal by halves and shares,
     * and only charge the join in their simulated clocks) */
    const char* names[] = {"lp", "exhaustive"};
    for (int open = 0; open < 2; open++) {
        p.open[1][j] = (uint8_t)open;
        for (int k = 0; k < 2; k++) {
            hy_sched_policy* pol = NULL;
            CHECK_OK(hy_sched_policy_create(names[k], NULL, &pol));
            if (!pol) continue;
            CHECK_OK(hy_sched_policy_assign(pol, &p, &a));
            /* closed: all on the c2075 (one setup); open: all join the gtx580 */
            if (a.count[open ? 1 : 2][j] != 100)
                fprintf(stderr, "policy %s, open %d: gtx580 %lld, c2075 %lld\n", names[k], open,
                        (long long)a.count[1][j], (long long)a.count[2][j]);
            CHECK(a.count[open ? 1 : 2][j] == 100);
            hy_sched_policy_destroy(pol);
        }
    }
    /* the LP counts no setup for an open pair (simplex and GLPK alike) */
    hy_sched_lp lp;
    hy_sched_lp_allow_all(&p, &lp);
    memset(lp.allowed, 0, sizeof lp.allowed);
    lp.allowed[1][j] = 1;
    CHECK(hy_sched_lp_solve(&p, &lp, HY_LP_SIMPLEX) == HY_LP_OPTIMAL);
    CHECK_NEAR(lp.makespan, 1e-3, 1e-12); /* the busy CPU decides */
    p.busy[0] = 0;
    CHECK(hy_sched_lp_solve(&p, &lp, HY_LP_SIMPLEX) == HY_LP_OPTIMAL);
    CHECK_NEAR(lp.makespan, 10e-6 + 100 * m.cost[1][j], 1e-12);
    if (hy_sched_lp_have_glpk()) {
        CHECK(hy_sched_lp_solve(&p, &lp, HY_LP_GLPK) == HY_LP_OPTIMAL);
        CHECK_NEAR(lp.makespan, 10e-6 + 100 * m.cost[1][j], 1e-12);
    }
    /* open is 0 or 1 */
    p.open[2][j] = 2;
    hy_sched_policy* pol = NULL;
    CHECK_OK(hy_sched_policy_create("lp", NULL, &pol));
    if (pol) {
        CHECK(hy_sched_policy_assign(pol, &p, &a) == HY_ERR_INVALID_ARG);
        CHECK(contains(hy_last_error(), "open[2]"));
        hy_sched_policy_destroy(pol);
    }
}

/* Launch sizes: the model charges a setup per launch; ws and ws-exp launch
 * their chunks (options.ws_grain, or from the model: setup at most a
 * twelfth of a chunk's time); the other policies launch each type at once. */
static void test_launches(void) {
    hy_sched_model m;
    hy_sched_problem p;
    hy_sched_assignment a;
    int j = hy_job_type(0, HY_JOB_TRAVERSE);
    hundred_on(&m, &p, &a, 2, j);
    a.launch[2][j] = 30; /* launches of 30, 30, 30, 10 */
    double su = m.setup[2][j], c = m.cost[2][j];
    CHECK_NEAR(hy_sched_assigned_time(&p, &a, 2, j), 4 * su + 100 * c, 1e-15);
    CHECK_NEAR(hy_sched_finish(&p, &a, 2), 4 * su + 100 * c, 1e-15);
    CHECK_NEAR(hy_sched_time_launched(&m, 2, j, 100, 30), 4 * su + 100 * c, 1e-15);
    CHECK_NEAR(hy_sched_time_launched(&m, 2, j, 90, 30), 3 * su + 90 * c, 1e-15);
    CHECK_NEAR(hy_sched_time_launched(&m, 2, j, 100, 0), hy_sched_time(&m, 2, j, 100), 1e-15);
    p.open[2][j] = 1; /* the first launch joins the waiting batch */
    CHECK_NEAR(hy_sched_assigned_time(&p, &a, 2, j), 3 * su + 100 * c, 1e-15);
    a.launch[2][j] = -1;
    CHECK(hy_sched_assignment_check(&p, &a) == HY_ERR_INTERNAL);

    const char* names[] = {"ws", "ws-exp", "lp", "lau10", "tan09"};
    for (int grain = 0; grain <= 50; grain += 50) {
        hy_sched_options o = options_fixed();
        o.ws_grain = grain;
        for (int k = 0; k < 5; k++) {
            hy_sched_policy* pol = NULL;
            CHECK_OK(hy_sched_policy_create(names[k], &o, &pol));
            if (!pol) continue;
            hy_sched_problem q;
            hy_sched_problem_random(&q, &m, 5, 100, 20000);
            CHECK_OK(hy_sched_policy_assign(pol, &q, &a));
            int chunks = 0, bad = 0;
            for (int i = 0; i < m.resources; i++)
                for (int t = 0; t < 2 * m.resources; t++) {
                    int64_t want = 0;
                    if (k < 2 && a.count[i][t] > 0)
                        want = grain ? grain : (int64_t)ceil(11.0 * m.setup[i][t] / m.cost[i][t]);
                    bad += a.launch[i][t] != want;
                    chunks += a.count[i][t] > a.launch[i][t] && a.launch[i][t] > 0;
                }
            CHECK(bad == 0);
            if (bad) fprintf(stderr, "policy %s, ws_grain %d: %d launch sizes differ\n", names[k], grain, bad);
            /* the ws policies split something into several launches */
            CHECK(k < 2 ? chunks > 0 : chunks == 0);
            CHECK(a.makespan == hy_sched_makespan(&q, &a));
            hy_sched_policy_destroy(pol);
        }
    }
}

/* Units of work per job: proc is per unit, trans per job. */
static void test_units(void) {
    hy_sched_model m;
    CHECK_OK(hy_sched_model_machine(&m, 3, 1));
    int own = hy_job_type(1, HY_JOB_TRAVERSE), moved = hy_job_type(0, HY_JOB_TRAVERSE);
    const hy_device_costs* g = &m.device[1].cost[HY_JOB_TRAVERSE];
    double tr = m.trans[1][moved];
    CHECK(tr > 0.0);
    /* unset (0) reads as one unit a job */
    CHECK_NEAR(m.cost[1][own], g->proc, 1e-18);
    m.units[HY_JOB_TRAVERSE] = 250.0;
    hy_sched_model_update(&m);
    CHECK_NEAR(m.cost[1][own], 250.0 * g->proc, 1e-15);
    CHECK_NEAR(m.cost[1][moved], 250.0 * g->proc + tr, 1e-15);
    /* LEAF costs do not move */
    CHECK_NEAR(m.cost[1][hy_job_type(1, HY_JOB_LEAF)], m.device[1].cost[HY_JOB_LEAF].proc, 1e-18);
    /* the charge of a batch that did `work` units */
    CHECK_NEAR(hy_sched_time_work(&m, 1, moved, 10, 4000.0), g->setup + 10 * tr + 4000.0 * g->proc, 1e-15);
    CHECK(hy_sched_time_work(&m, 1, moved, 0, 4000.0) == 0.0);
    /* at the mean, the expectation is the charge */
    CHECK_NEAR(hy_sched_time_work(&m, 1, moved, 10, 2500.0), hy_sched_time(&m, 1, moved, 10), 1e-15);
}

static void test_registry_and_input(void) {
    const char* want[] = {"lp", "lau10", "tan09", "ws", "ws-exp", "exhaustive"};
    for (int k = 0; k < 6; k++) CHECK(hy_sched_policy_find(want[k]) != NULL);
    hy_sched_policy* p = NULL;
    CHECK(hy_sched_policy_create("fifo", NULL, &p) == HY_ERR_INVALID_ARG);
    CHECK(p == NULL);
    CHECK(contains(hy_last_error(), "fifo") && contains(hy_last_error(), "ws-exp"));
    hy_sched_options o;
    hy_sched_options_default(&o);
    CHECK_OK(hy_sched_options_set(&o, "block", "64"));
    CHECK(o.block == 64);
    CHECK(hy_sched_options_set(&o, "block", "0") == HY_ERR_INVALID_ARG);
    CHECK(contains(hy_last_error(), "block"));
    CHECK(hy_sched_options_set(&o, "solver", "cplex") == HY_ERR_INVALID_ARG);
    CHECK(hy_sched_options_set(&o, "speed", "1") == HY_ERR_INVALID_ARG);
    CHECK(contains(hy_last_error(), "speed"));

    hy_sched_model m;
    CHECK_OK(hy_sched_model_machine(&m, 3, 1));
    CHECK_OK(hy_sched_policy_create("lp", NULL, &p));
    if (!p) return;
    hy_sched_problem prob;
    hy_sched_problem_init(&prob, &m);
    hy_sched_assignment a;
    prob.jobs[1] = -5;
    CHECK(hy_sched_policy_assign(p, &prob, &a) == HY_ERR_INVALID_ARG);
    CHECK(contains(hy_last_error(), "jobs[1]"));
    prob.jobs[1] = 5;
    prob.busy[2] = NAN;
    CHECK(hy_sched_policy_assign(p, &prob, &a) == HY_ERR_INVALID_ARG);
    CHECK(contains(hy_last_error(), "busy[2]"));
    hy_sched_policy_destroy(p);
}

int main(void) {
    test_builtin_profiles();
    test_profile_files();
    test_lp_vs_glpk();
    test_lp_one_type();
    test_call_time();
    test_policies_valid();
    test_exhaustive();
    test_lp_refinement();
    test_lp_polish();
    test_lp_next_round();
    test_lp_prune();
    test_lp_slack();
    test_open_batches();
    test_launches();
    test_units();
    test_registry_and_input();
    TEST_END();
}
