/* Error model: status names, per-thread sentences, logging levels and sinks. */
#include <pthread.h>
#include <stdlib.h>

#include "ck/ck.h"
#include "core/error.h"
#include "test.h"

static void test_status_string_names_every_status(void)
{
    for (int s = 0; s < CK_STATUS_COUNT_; ++s) {
        const char *name = ck_status_string((ck_status)s);
        CHECK(strncmp(name, "CK_", 3) == 0);
        CHECK(strcmp(name, "CK_STATUS_UNKNOWN") != 0);
        for (int t = 0; t < s; ++t)
            CHECK(strcmp(name, ck_status_string((ck_status)t)) != 0);
    }
    CHECK_EQ_STR(ck_status_string(CK_SUCCESS), "CK_SUCCESS");
    CHECK_EQ_STR(ck_status_string((ck_status)-1), "CK_STATUS_UNKNOWN");
    CHECK_EQ_STR(ck_status_string((ck_status)9999), "CK_STATUS_UNKNOWN");
}

static void test_last_error_is_a_sentence_naming_the_argument(void)
{
    ck_clear_error();
    CHECK_EQ_STR(ck_last_error(), "no error");
    CHECK_EQ_INT(ck_last_status(), CK_SUCCESS);
    CHECK_STATUS(ck_query_system(NULL), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "ck_query_system") != NULL);
    CHECK(strstr(ck_last_error(), "'info'") != NULL);
    CHECK_EQ_INT(ck_last_status(), CK_ERROR_INVALID_ARGUMENT);
    ck_clear_error();
    CHECK_EQ_STR(ck_last_error(), "no error");
}

static void test_fail_context_prefixes(void)
{
    ck_fail(CK_ERROR_OVERFLOW, "offset %d does not fit", 7);
    ck_fail_context(CK_ERROR_OVERFLOW, "stage %d", 2);
    CHECK_EQ_STR(ck_last_error(), "stage 2: offset 7 does not fit");
    ck_clear_error();
}

static void *thread_body(void *arg)
{
    (void)arg;
    /* A new thread starts with no error even though the main thread has one. */
    int ok = strcmp(ck_last_error(), "no error") == 0;
    ck_fail(CK_ERROR_IO, "thread error");
    ok = ok && strcmp(ck_last_error(), "thread error") == 0;
    return ok ? (void *)1 : NULL;
}

static void test_errors_are_per_thread(void)
{
    ck_fail(CK_ERROR_PARSE, "main thread error");
    pthread_t t;
    void *res = NULL;
    CHECK(pthread_create(&t, NULL, thread_body, NULL) == 0);
    CHECK(pthread_join(t, &res) == 0);
    CHECK(res != NULL);
    CHECK_EQ_STR(ck_last_error(), "main thread error");
    CHECK_EQ_INT(ck_last_status(), CK_ERROR_PARSE);
    ck_clear_error();
}

static int sink_calls;
static char sink_line[256];
static void sink(ck_log_level level, const char *line, void *user)
{
    (void)level;
    (void)user;
    ++sink_calls;
    snprintf(sink_line, sizeof sink_line, "%s", line);
}

static void test_log_levels_and_sink(void)
{
    ck_log_level lv;
    CHECK_OK(ck_log_level_from_string("debug", &lv));
    CHECK_EQ_INT(lv, CK_LOG_DEBUG);
    CHECK_OK(ck_log_level_from_string("WARN", &lv));
    CHECK_EQ_INT(lv, CK_LOG_WARN);
    CHECK_STATUS(ck_log_level_from_string("loud", &lv), CK_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(ck_last_error(), "'loud'") != NULL);
    CHECK_STATUS(ck_log_level_from_string(NULL, &lv), CK_ERROR_INVALID_ARGUMENT);

    ck_set_log_sink(sink, NULL);
    ck_set_log_level(CK_LOG_WARN);
    sink_calls = 0;
    CK_LOG(CK_LOG_INFO, "hidden %d", 1);
    CHECK_EQ_INT(sink_calls, 0);
    CK_LOG(CK_LOG_WARN, "shown %d", 2);
    CHECK_EQ_INT(sink_calls, 1);
    CHECK_EQ_STR(sink_line, "shown 2");
    ck_set_log_level(CK_LOG_OFF);
    CK_LOG(CK_LOG_ERROR, "hidden");
    CHECK_EQ_INT(sink_calls, 1);
    ck_set_log_sink(NULL, NULL);
}

static void test_cache_dir_follows_environment(void)
{
    char buf[CK_PATH_MAX];
    char small[4];
    setenv("CK_CACHE_DIR", "/tmp/ck-test-cache", 1);
    CHECK_OK(ck_cache_dir(buf, sizeof buf));
    CHECK_EQ_STR(buf, "/tmp/ck-test-cache");
    CHECK_STATUS(ck_cache_dir(small, sizeof small), CK_ERROR_OVERFLOW);
    unsetenv("CK_CACHE_DIR");
    setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
    CHECK_OK(ck_cache_dir(buf, sizeof buf));
    CHECK_EQ_STR(buf, "/tmp/xdg/ck");
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", "/home/someone", 1);
    CHECK_OK(ck_cache_dir(buf, sizeof buf));
    CHECK_EQ_STR(buf, "/home/someone/.cache/ck");
    CHECK_STATUS(ck_cache_dir(NULL, 10), CK_ERROR_INVALID_ARGUMENT);
}

static void test_query_system_without_gpu_reports_reasons(void)
{
    ck_system_info s;
    CHECK_OK(ck_query_system(&s));
    CHECK(s.cache_dir[0] != '\0');
    CHECK(s.cuda_driver_status[0] != '\0');
    CHECK(s.nvrtc_status[0] != '\0');
    if (!s.cuda_driver_found)
        CHECK_EQ_INT(s.device_count, 0);
    CHECK_EQ_STR(ck_version(), CK_VERSION_STRING);
    /* A forced wrong driver path is reported, not fatal. */
    setenv("CK_CUDA_DRIVER_PATH", "/nonexistent/libcuda.so.1", 1);
    CHECK_OK(ck_query_system(&s));
    CHECK(!s.cuda_driver_found);
    CHECK(strstr(s.cuda_driver_status, "CK_CUDA_DRIVER_PATH") != NULL);
    unsetenv("CK_CUDA_DRIVER_PATH");
}

int main(void)
{
    RUN_TEST(test_status_string_names_every_status);
    RUN_TEST(test_last_error_is_a_sentence_naming_the_argument);
    RUN_TEST(test_fail_context_prefixes);
    RUN_TEST(test_errors_are_per_thread);
    RUN_TEST(test_log_levels_and_sink);
    RUN_TEST(test_cache_dir_follows_environment);
    RUN_TEST(test_query_system_without_gpu_reports_reasons);
    return CK_TEST_REPORT();
}
