/* Tests the CCD tests on every query of the shared ground-truth set
 * (ccd-queries, including the erleben-* degenerate cases): no false
 * negative, fewer false positives than Tight-Inclusion's 127, and every
 * reported time of impact within [0, 1]. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collision/ccd.h"
#include "ccd_query_files.h"
#include "test.h"

static long total, positives, fn, fp, bad_toi;

static void run_file(const char* path, int is_vf) {
    FILE* f = fopen(path, "r");
    CHECK(f != NULL);
    if (!f) return;
    char line[4096];
    char nb[3][256], db[3][256];
    double x[8][3];
    int r = 0, truth = 0, lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (line[0] == '\n' || line[0] == '\0') continue;
        int t = 0;
        int got = sscanf(line, "%255[^,],%255[^,],%255[^,],%255[^,],%255[^,],%255[^,],%d", nb[0], db[0], nb[1], db[1],
                         nb[2], db[2], &t);
        if (got != 7) {
            fprintf(stderr, "%s:%d: malformed row\n", path, lineno);
            CHECK(got == 7);
            break;
        }
        /* Every coordinate is exactly a double (data README). */
        for (int k = 0; k < 3; k++) x[r][k] = strtod(nb[k], NULL) / strtod(db[k], NULL);
        if (r == 0) truth = t;
        if (++r < 8) continue;
        r = 0;
        double toi = -1.0;
        int hit = hy_ccd_query(is_vf, (const double(*)[3])x, 0.0, NULL, &toi, NULL);
        total++;
        positives += truth;
        if (truth && !hit) {
            fn++;
            fprintf(stderr, "false negative: %s query %ld (line %d)\n", path, (long)(lineno / 8 - 1), lineno - 7);
        }
        if (!truth && hit) fp++;
        if (hit && !(toi >= 0.0 && toi <= 1.0)) bad_toi++;
    }
    CHECK(r == 0);
    fclose(f);
}

static void run_each(void* ctx, const char* path, int is_vf) {
    (void)ctx;
    run_file(path, is_vf);
}

int main(void) {
    if (!hy_test_each_query_file(run_each, NULL)) TEST_SKIP("shared ccd-queries data not found");
    fprintf(stderr, "queries %ld, positives %ld, false negatives %ld, false positives %ld\n", total, positives, fn, fp);
    /* 4884 queries in the shared set (README); all of them must be read. */
    CHECK(total == 4884);
    CHECK(fn == 0);
    CHECK(fp < 127);
    CHECK(bad_toi == 0);
    TEST_END();
}
