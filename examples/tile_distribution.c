/*
 * CK Tile's TileDistributionExample with ck's tile programming API: a 9x9 tensor holding
 * i*100 + j, a 4x4 window at origin (1, 3), the encoding
 *   R = [], H = [[2, 2], [2, 2]], P -> RH major [[1], [2]] minor [[0], [0]],
 *   Y -> RH major [1, 2] minor [1, 1]
 * and 128 threads. Each thread loads its part of the window into registers (load_x, generated
 * from the descriptor and the encoding); threads (warp, lane) = (0,0), (0,1), (1,0), (1,1) --
 * threads 0, 1, 32, 33 with 32-lane warps -- report what they collected.
 *
 * Runs on the GPU when one is usable, else on ck's CPU emulator (CK_DEVICE=host|cuda chooses).
 */
#include <stdio.h>
#include <stdlib.h>

#include <ck/tile_kernel.h>

static const char *kernel_source = "CK_KERNEL void collect(float *tensor, float *out)\n"
                                   "{\n"
                                   "    float regs[CK_NREGS_x];\n"
                                   "    ck_win_x w = make_win_x(tensor, 1, 3);\n"
                                   "    load_x(regs, &w);\n"
                                   "    unsigned t = ck_thread_linear();\n"
                                   "    if (t == 0 || t == 1 || t == 32 || t == 33) {\n"
                                   "        int slot = (t / 32) * 2 + t % 32;\n"
                                   "        for (int i = 0; i < CK_NREGS_x; ++i)\n"
                                   "            out[slot * CK_NREGS_x + i] = regs[i];\n"
                                   "    }\n"
                                   "}\n";

static int fail(const char *what)
{
    fprintf(stderr, "%s: %s\n", what, ck_last_error());
    return 1;
}

int main(void)
{
    /* the tensor: 9 x 9 row-major */
    ck_descriptor *desc = NULL;
    ck_ival lengths[2] = {ck_ival_int(9), ck_ival_int(9)};
    if (ck_descriptor_make_packed(2, lengths, &desc) != CK_SUCCESS)
        return fail("descriptor");

    /* the distribution (CK's tile_distribution_encoding) */
    ck_dist_encoding enc;
    if (ck_dist_encoding_parse("tile_distribution_encoding<sequence<>, "
                               "tuple<sequence<2, 2>, sequence<2, 2>>, "
                               "tuple<sequence<1>, sequence<2>>, tuple<sequence<0>, sequence<0>>, "
                               "sequence<1, 2>, sequence<1, 1>>",
                               &enc) != CK_SUCCESS)
        return fail("encoding");

    ck_tile_window_spec win = {0};
    win.name = "x";
    win.desc = desc;
    win.enc = &enc;
    win.dtype = CK_DTYPE_F32;
    win.ops = CK_WIN_LOAD;

    ck_device *dev = NULL;
    ck_module *mod = NULL;
    ck_kernel *kern = NULL;
    if (ck_device_open(CK_BACKEND_AUTO, 0, &dev) != CK_SUCCESS)
        return fail("device");
    if (ck_tile_kernel_load(dev, 1, &win, kernel_source, &mod) != CK_SUCCESS ||
        ck_module_get_kernel(mod, "collect", &kern) != CK_SUCCESS) {
        ck_device_close(dev);
        ck_descriptor_destroy(desc);
        return fail("kernel");
    }

    float host[81], out[16];
    for (int i = 0; i < 9; ++i)
        for (int j = 0; j < 9; ++j)
            host[i * 9 + j] = (float)(i * 100 + j);
    void *d_tensor = NULL, *d_out = NULL;
    int rc = 1;
    if (ck_malloc(dev, sizeof host, &d_tensor) == CK_SUCCESS &&
        ck_malloc(dev, sizeof out, &d_out) == CK_SUCCESS &&
        ck_memcpy_h2d(dev, d_tensor, host, sizeof host, NULL) == CK_SUCCESS) {
        ck_launch_config cfg = {{1, 1, 1}, {128, 1, 1}, {0, 0, 0}, 0, NULL};
        void *args[2] = {&d_tensor, &d_out};
        size_t sizes[2] = {sizeof d_tensor, sizeof d_out};
        if (ck_launch(kern, &cfg, args, sizes, 2) == CK_SUCCESS &&
            ck_device_synchronize(dev) == CK_SUCCESS &&
            ck_memcpy_d2h(dev, out, d_out, sizeof out, NULL) == CK_SUCCESS)
            rc = 0;
    }
    if (rc)
        fail("run");
    /* Direct computation: thread (warp w, lane l) holds rows 1 + 2w + {0, 1} and columns
     * 3 + 2l + {0, 1} of the window's tensor, row-major in its registers. */
    for (int s = 0; s < 4 && !rc; ++s)
        for (int i = 0; i < 4; ++i) {
            int row = 1 + 2 * (s / 2) + i / 2, col = 3 + 2 * (s % 2) + i % 2;
            if (out[s * 4 + i] != (float)(row * 100 + col)) {
                fprintf(stderr, "thread slot %d value %d: %g, expected %d\n", s, i, out[s * 4 + i],
                        row * 100 + col);
                rc = 1;
            }
        }
    for (int s = 0; s < 4 && !rc; ++s) {
        printf("Partition index: (warp=%d, thread=%d)\n", s / 2, s % 2);
        printf("Collected values: %.0f, %.0f, %.0f, %.0f\n\n", out[s * 4], out[s * 4 + 1],
               out[s * 4 + 2], out[s * 4 + 3]);
    }
    ck_free(dev, d_tensor);
    ck_free(dev, d_out);
    ck_device_close(dev);
    ck_descriptor_destroy(desc);
    return rc;
}
