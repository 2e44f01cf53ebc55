/* The emulator primitives of EMU_CONTRACT.md, called from kernel code: group collectives of
 * warp and warpgroup size (partial groups and exited lanes give zero inputs, one call of fn per
 * group), thread identity, shared-memory base and size, yield. Emulator only. */
#include "kernel_harness.h"

static const char *source =
    "#include \"ck_device.h\"\n"
    "typedef struct { unsigned calls; } counter;\n"
    /* all_out[i] = sum of all inputs * 1000 + lane i's own input; counts calls of fn */
    "static void sum_fn(const void *all_in, void *all_out, void *ctx)\n"
    "{\n"
    "    const unsigned *in = (const unsigned *)all_in;\n"
    "    unsigned *out = (unsigned *)all_out, s = 0;\n"
    "    for (unsigned i = 0; i < 128; ++i) s += in[2 * i] + in[2 * i + 1];\n"
    "    for (unsigned i = 0; i < 128; ++i) out[i] = s * 1000u + in[2 * i];\n"
    "    ((counter *)ctx)->calls++;\n"
    "}\n"
    "CK_KERNEL void group128(unsigned *out, unsigned *calls)\n"
    "{\n"
    "    CK_SHARED_ARRAY(counter, c, 1);\n"
    "    unsigned t = ck_emu_thread_linear();\n"
    "    if (t == 0) c[0].calls = 0;\n"
    "    ck_sync_threads();\n"
    "    if (t % 7 == 3) return; /* these lanes exit: zero inputs */\n"
    "    unsigned in[2] = {t + 1, 1};\n"
    "    unsigned r = 0;\n"
    "    ck_emu_group_collective(128, in, sizeof in, &r, sizeof r, sum_fn, (counter *)calls);\n"
    "    out[t] = r;\n"
    "    if (t == 1) calls[1] = c[0].calls;\n"
    "    if (t == 2) {\n"
    "        out[1000] = ck_emu_block_threads();\n"
    "        out[1001] = (unsigned)ck_emu_shared_bytes();\n"
    "        out[1002] = (unsigned)((char *)c - (char *)ck_emu_shared_base());\n"
    "        out[1003] = (unsigned)((char *)ck_dynamic_shared() - (char *)ck_emu_shared_base());\n"
    "    }\n"
    "    ck_emu_yield();\n"
    "}\n";

static void test_group_collective(void)
{
    ck_device *d = ckk_open();
    ck_module *m = NULL;
    ck_kernel *k = NULL;
    CHECK_OK(ck_module_load(d, source, NULL, 0, &m));
    if (!m || ck_module_get_kernel(m, "group128", &k) != CK_SUCCESS)
        return;
    enum { BT = 192 };
    unsigned out[1004], calls[2] = {0, 77};
    void *dout = ckk_upload(NULL, sizeof out), *dcalls = ckk_upload(calls, sizeof calls);
    CHECK_OK(ckk_launch(k, 1, 1, 1, BT, 1, 1, 200, 2, CKK_ARG(dout), CKK_ARG(dcalls)));
    ckk_download(out, dout, sizeof out);
    ckk_download(calls, dcalls, sizeof calls);
    for (unsigned g = 0; g < 2; ++g) {
        unsigned s = 0;
        for (unsigned t = g * 128; t < g * 128 + 128 && t < BT; ++t)
            if (t % 7 != 3)
                s += t + 1 + 1;
        for (unsigned t = g * 128; t < g * 128 + 128 && t < BT; ++t)
            if (t % 7 != 3)
                CHECK_EQ_INT(out[t], s * 1000u + t + 1);
    }
    CHECK_EQ_INT(calls[0], 2); /* one call of fn per group */
    CHECK_EQ_INT(calls[1], 0); /* the shared counter was not the context used */
    CHECK_EQ_INT(out[1000], BT);
    CHECK_EQ_INT(out[1002], 256); /* static after the 200 dynamic bytes, 128-aligned */
    CHECK(out[1001] >= 256 + 4);
    CHECK_EQ_INT(out[1003], 0);
    ck_free(d, dout);
    ck_free(d, dcalls);
}

int main(void)
{
    setenv("CK_DEVICE", "host", 1);
    if (!ckk_open())
        return 1;
    RUN_TEST(test_group_collective);
    ckk_close();
    return CK_TEST_REPORT();
}
