/*
 * Device code of ck_im2col (src/ops/im2col/kernel.c generates the source: the parameter
 * table's #defines, the windows "src" -- over the im2col view of one group's input, zero in the
 * padding -- and "dst" -- over the group's packed M x K matrix -- then this file and the kernel's
 * declaration). One block moves one IM2COL_TM x IM2COL_TK tile of group blockIdx.z.
 */
CK_DEVICE void im2col_tile(const IM2COL_T *x, IM2COL_T *out)
{
    long long g = ck_block_idx_z();
    long long m0 = (long long)ck_block_idx_x() * IM2COL_TM;
    long long k0 = (long long)ck_block_idx_y() * IM2COL_TK;
    ck_win_src src = make_win_src((IM2COL_T *)x + g * IM2COL_C, m0, k0);
    ck_win_dst dst = make_win_dst(out + g * IM2COL_M * IM2COL_K, m0, k0);
    IM2COL_T v[CK_NREGS_src];
    load_src(v, &src);
    store_dst(v, &dst);
}
