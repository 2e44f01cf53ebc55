/* The on-disk tuning table: store / lookup / replace / list / clear, malformed lines ignored
 * and dropped, bad fields refused, and concurrent writers from several processes. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ck/ck.h"
#include "ck/tuning.h"
#include "test.h"

static char table[512];

static ck_tuning_entry entry(const char *op, const char *dev, const char *prob, const char *inst,
                             double ms)
{
    ck_tuning_entry e;
    memset(&e, 0, sizeof e);
    snprintf(e.op, sizeof e.op, "%s", op);
    snprintf(e.device, sizeof e.device, "%s", dev);
    snprintf(e.problem, sizeof e.problem, "%s", prob);
    snprintf(e.instance, sizeof e.instance, "%s", inst);
    e.ms = ms;
    e.metric = 100.0 / (ms + 1);
    return e;
}

static void test_store_lookup_replace_list_clear(void)
{
    int removed = -1, found = -1, n = -1;
    CHECK_OK(ck_tuning_clear(NULL, &removed));
    ck_tuning_entry e = entry("gemm", "H100/sm_90a", "m=4096/n=4096/k=4096/bf16", "sm90.a", 0.25);
    CHECK_OK(ck_tuning_lookup("gemm", "H100/sm_90a", e.problem, NULL, &found));
    CHECK_EQ_INT(found, 0);
    CHECK_OK(ck_tuning_store(&e));
    ck_tuning_entry got;
    CHECK_OK(ck_tuning_lookup("gemm", "H100/sm_90a", e.problem, &got, &found));
    CHECK_EQ_INT(found, 1);
    CHECK_EQ_STR(got.instance, "sm90.a");
    CHECK_NEAR(got.ms, 0.25, 1e-9);
    CHECK(got.time > 0);
    /* another device, another op: separate keys */
    ck_tuning_entry e2 = entry("gemm", "A100/sm_80", e.problem, "sm80.b", 0.5);
    ck_tuning_entry e3 = entry("conv", "H100/sm_90a", e.problem, "c.x", 0.1);
    CHECK_OK(ck_tuning_store(&e2));
    CHECK_OK(ck_tuning_store(&e3));
    /* replace */
    ck_tuning_entry e4 = entry("gemm", "H100/sm_90a", e.problem, "sm90.c", 0.2);
    CHECK_OK(ck_tuning_store(&e4));
    CHECK_OK(ck_tuning_lookup("gemm", "H100/sm_90a", e.problem, &got, &found));
    CHECK_EQ_STR(got.instance, "sm90.c");
    ck_tuning_entry *all = NULL;
    CHECK_OK(ck_tuning_list(&all, &n));
    CHECK_EQ_INT(n, 3);
    free(all);
    CHECK_OK(ck_tuning_clear("gemm", &removed));
    CHECK_EQ_INT(removed, 2);
    CHECK_OK(ck_tuning_lookup("conv", "H100/sm_90a", e.problem, &got, &found));
    CHECK_EQ_INT(found, 1);
    CHECK_OK(ck_tuning_clear(NULL, &removed));
    CHECK_EQ_INT(removed, 1);
    CHECK_OK(ck_tuning_list(&all, &n));
    CHECK_EQ_INT(n, 0);
    free(all);
}

static void test_malformed_lines_are_ignored_and_dropped(void)
{
    FILE *fp = fopen(table, "w");
    CHECK(fp != NULL);
    if (!fp)
        return;
    fprintf(fp, "# header\ngemm\tdev\tprob\tinst\t1.5\t2\t17\n");
    fprintf(fp, "garbage line without tabs\n");
    fprintf(fp, "gemm\tdev\tprob2\tinst\tnotanumber\t2\t17\n");
    fprintf(fp, "gemm\t\tprob3\tinst\t1\t2\t17\n");
    fprintf(fp, "gemm\tdev\tprob4\tinst\t1\t2\t17\textra\n");
    for (int i = 0; i < 2000; ++i)
        fputc('x', fp);
    fprintf(fp, "\ngemm\tdev\tprob5\tinst5\t3\t4\t18"); /* last line without newline */
    fclose(fp);
    ck_tuning_entry *all = NULL;
    int n = -1, found = 0;
    CHECK_OK(ck_tuning_list(&all, &n));
    CHECK_EQ_INT(n, 2);
    free(all);
    ck_tuning_entry got;
    CHECK_OK(ck_tuning_lookup("gemm", "dev", "prob5", &got, &found));
    CHECK_EQ_INT(found, 1);
    CHECK_EQ_STR(got.instance, "inst5");
    ck_tuning_entry e = entry("gemm", "dev", "prob6", "i6", 1);
    CHECK_OK(ck_tuning_store(&e));
    CHECK_OK(ck_tuning_list(&all, &n));
    CHECK_EQ_INT(n, 3);
    free(all);
    /* the rewrite dropped the malformed lines: every remaining line parses */
    fp = fopen(table, "r");
    char line[4096];
    int lines = 0;
    while (fp && fgets(line, sizeof line, fp))
        lines += line[0] != '#';
    if (fp)
        fclose(fp);
    CHECK_EQ_INT(lines, 3);
}

static void test_bad_fields_are_refused(void)
{
    ck_tuning_entry e = entry("gemm", "dev", "p\tq", "i", 1);
    CHECK_STATUS(ck_tuning_store(&e), CK_ERROR_INVALID_ARGUMENT);
    e = entry("gemm", "", "p", "i", 1);
    CHECK_STATUS(ck_tuning_store(&e), CK_ERROR_INVALID_ARGUMENT);
    e = entry("gemm", "dev", "p", "i\n", 1);
    CHECK_STATUS(ck_tuning_store(&e), CK_ERROR_INVALID_ARGUMENT);
    e = entry("gemm", "dev", "p", "i", -1);
    CHECK_STATUS(ck_tuning_store(&e), CK_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(ck_tuning_store(NULL), CK_ERROR_INVALID_ARGUMENT);
    int found;
    CHECK_STATUS(ck_tuning_lookup(NULL, "d", "p", NULL, &found), CK_ERROR_INVALID_ARGUMENT);
}

static void test_concurrent_writers_lose_nothing(void)
{
    CHECK_OK(ck_tuning_clear(NULL, NULL));
    enum { PROCS = 6, EACH = 15 };
    pid_t pids[PROCS];
    for (int p = 0; p < PROCS; ++p) {
        pids[p] = fork();
        if (pids[p] == 0) {
            int bad = 0;
            for (int i = 0; i < EACH; ++i) {
                char prob[64];
                snprintf(prob, sizeof prob, "p%d-%d", p, i);
                ck_tuning_entry e = entry("gemm", "dev", prob, "inst", i);
                bad |= ck_tuning_store(&e) != CK_SUCCESS;
            }
            _exit(bad);
        }
    }
    for (int p = 0; p < PROCS; ++p) {
        int status = 0;
        waitpid(pids[p], &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    ck_tuning_entry *all = NULL;
    int n = 0;
    CHECK_OK(ck_tuning_list(&all, &n));
    CHECK_EQ_INT(n, PROCS * EACH);
    free(all);
}

int main(void)
{
    char dir[] = "/tmp/ck-tuning-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    snprintf(table, sizeof table, "%s/sub/tuning.tsv", dir);
    setenv("CK_TUNING_FILE", table, 1);
    RUN_TEST(test_store_lookup_replace_list_clear);
    RUN_TEST(test_malformed_lines_are_ignored_and_dropped);
    RUN_TEST(test_bad_fields_are_refused);
    RUN_TEST(test_concurrent_writers_lose_nothing);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        printf("could not remove %s\n", dir);
    return CK_TEST_REPORT();
}
