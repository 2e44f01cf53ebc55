/* ck dist --svg: draw a distribution's tile, each cell coloured by warp and labelled with the
 * lane and register index of its (lowest) holder, like the figures of the CK documents. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/distribution.h"

int cmd_dist_svg(const ck_distribution *d, const char *path);

/* Tiles of up to DETAIL_CELLS cells are drawn with a lane/register label per cell; larger ones
 * (up to MAX_CELLS, e.g. a 256x256 or 1024x1024 GEMM tile) compactly: small unlabelled cells,
 * runs of one warp in a row merged into one rectangle, indices every few rows and columns. */
enum {
    CELL_W = 54,
    CELL_H = 34,
    LEFT = 46,
    TOP = 64,
    WARP = 32,
    DETAIL_CELLS = 16384,
    MAX_CELLS = 1 << 20,
    COMPACT_PIXELS = 2048 /* the longer side of a compact drawing */
};

/* A pastel colour per warp: golden-angle hues in HSV. */
static void warp_color(int w, char *out, size_t n)
{
    double h = fmod(w * 137.508, 360.0) / 60.0, s = 0.45, v = 0.97;
    double c = v * s, x = c * (1.0 - fabs(fmod(h, 2.0) - 1.0)), m = v - c, r = 0, g = 0, b = 0;
    switch ((int)h) {
    case 0:
        r = c, g = x;
        break;
    case 1:
        r = x, g = c;
        break;
    case 2:
        g = c, b = x;
        break;
    case 3:
        g = x, b = c;
        break;
    case 4:
        r = x, b = c;
        break;
    default:
        r = c, b = x;
        break;
    }
    snprintf(out, n, "#%02x%02x%02x", (int)((r + m) * 255), (int)((g + m) * 255),
             (int)((b + m) * 255));
}

/* The compact drawing's cells: rows x cols of s pixels, runs of one colour merged. */
static void compact_cells(FILE *f, const long long *tid, long long rows, long long cols,
                          long long s)
{
    long long step = 1; /* index labels every `step` cells, at least 40 pixels apart */
    while (step * s < 40)
        step *= 2;
    for (long long c = 0; c < cols; c += step)
        fprintf(f,
                "<text x=\"%lld\" y=\"%d\" font-size=\"10\" fill=\"#666\">%lld</text>\n",
                LEFT + c * s, TOP - 6, c);
    for (long long r = 0; r < rows; ++r) {
        if (r % step == 0)
            fprintf(f,
                    "<text x=\"%d\" y=\"%lld\" font-size=\"10\" text-anchor=\"end\" "
                    "fill=\"#666\">%lld</text>\n",
                    LEFT - 6, TOP + r * s + 9, r);
        for (long long c = 0; c < cols;) {
            long long t = tid[r * cols + c], e = c + 1;
            while (e < cols && (tid[r * cols + e] < 0 ? -1 : tid[r * cols + e] / WARP) ==
                                   (t < 0 ? -1 : t / WARP))
                ++e;
            char color[16] = "#dddddd";
            if (t >= 0)
                warp_color((int)(t / WARP), color, sizeof color);
            fprintf(f,
                    "<rect x=\"%lld\" y=\"%lld\" width=\"%lld\" height=\"%lld\" "
                    "fill=\"%s\"/>\n",
                    LEFT + c * s, TOP + r * s, (e - c) * s, s, color);
            c = e;
        }
    }
    fprintf(f,
            "<rect x=\"%d\" y=\"%d\" width=\"%lld\" height=\"%lld\" fill=\"none\" "
            "stroke=\"#555\" stroke-width=\"1\"/>\n",
            LEFT, TOP, cols * s, rows * s);
}

int cmd_dist_svg(const ck_distribution *d, const char *path)
{
    const int nx = d->enc.ndim_x;
    const long long cols = d->x_lengths[nx - 1], rows = d->tile_elements / cols;
    if (d->tile_elements > MAX_CELLS) {
        fprintf(stderr, "ck dist: --svg draws at most %d cells (a 1024x1024 tile); this tile has "
                        "%lld.\n",
                MAX_CELLS, d->tile_elements);
        return 1;
    }
    const int compact = d->tile_elements > DETAIL_CELLS;
    long long s = COMPACT_PIXELS / (rows > cols ? rows : cols);
    s = s < 2 ? 2 : s > 16 ? 16 : s;
    const long long cw = compact ? s : CELL_W, ch = compact ? s : CELL_H;
    long long *tid = malloc(sizeof *tid * (size_t)d->tile_elements);
    long long *reg = malloc(sizeof *reg * (size_t)d->tile_elements);
    errno = ENOMEM;
    FILE *f = tid && reg ? fopen(path, "w") : NULL;
    if (!f) {
        fprintf(stderr, "ck dist: cannot write '%s': %s.\n", path, strerror(errno));
        free(tid);
        free(reg);
        return 1;
    }
    for (long long i = 0; i < d->tile_elements; ++i)
        tid[i] = -1;
    for (long long t = d->threads - 1; t >= 0; --t) { /* descending: lowest holder wins */
        int p[CK_DIST_MAX_P], y[CK_DIST_MAX_Y], x[CK_DIST_MAX_X];
        ck_dist_partition_index(d, t, p);
        for (long long r = 0; r < d->elements_per_thread; ++r) {
            ck_dist_d_to_ys(d, r, y);
            ck_dist_calculate_x(d, p, y, x);
            long long lin = 0;
            for (int i = 0; i < nx; ++i)
                lin = lin * d->x_lengths[i] + x[i];
            tid[lin] = t;
            reg[lin] = r;
        }
    }
    const long long warps = (d->threads + WARP - 1) / WARP;
    const long long legend_rows = warps > 1 ? (warps + 15) / 16 : 0;
    const long long width = LEFT + cols * cw + 20;
    const long long height = TOP + rows * ch + 20 + legend_rows * 22;
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%lld\" height=\"%lld\" "
            "font-family=\"DejaVu Sans, Arial, sans-serif\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            width, height);
    fprintf(f,
            "<text x=\"%d\" y=\"20\" font-size=\"14\" font-weight=\"bold\">Tile %lld x %lld: "
            "%lld threads (%lld warps), %lld elements per thread, replication %lld</text>\n",
            LEFT, rows, cols, d->threads, warps, d->elements_per_thread, d->replication);
    fprintf(f,
            "<text x=\"%d\" y=\"38\" font-size=\"11\" fill=\"#444\">cell colour = warp; "
            "label = lane L and register r of the %sholder; rows X0%s, columns X%d</text>\n",
            LEFT, d->replication > 1 ? "lowest " : "", nx > 2 ? "..X(n-2)" : "", nx - 1);
    if (compact)
        fprintf(f,
                "<text x=\"%d\" y=\"52\" font-size=\"11\" fill=\"#444\">compact drawing "
                "of a large tile: %lld-pixel cells without labels (ck dist --json or --p lists "
                "lanes and registers)</text>\n",
                LEFT, s);
    if (compact)
        compact_cells(f, tid, rows, cols, s);
    for (long long c = 0; !compact && c < cols; ++c)
        fprintf(f,
                "<text x=\"%lld\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\" "
                "fill=\"#666\">%lld</text>\n",
                LEFT + c * CELL_W + CELL_W / 2, TOP - 6, c);
    for (long long r = 0; !compact && r < rows; ++r) {
        fprintf(f,
                "<text x=\"%d\" y=\"%lld\" font-size=\"10\" text-anchor=\"end\" "
                "fill=\"#666\">%lld</text>\n",
                LEFT - 6, TOP + r * CELL_H + CELL_H / 2 + 4, r);
        for (long long c = 0; c < cols; ++c) {
            long long t = tid[r * cols + c];
            char color[16] = "#dddddd";
            if (t >= 0)
                warp_color((int)(t / WARP), color, sizeof color);
            long long x0 = LEFT + c * CELL_W, y0 = TOP + r * CELL_H;
            fprintf(f,
                    "<rect x=\"%lld\" y=\"%lld\" width=\"%d\" height=\"%d\" fill=\"%s\" "
                    "stroke=\"#555\" stroke-width=\"0.6\"/>\n",
                    x0, y0, CELL_W, CELL_H, color);
            if (t >= 0)
                fprintf(f,
                        "<text x=\"%lld\" y=\"%lld\" font-size=\"11\" text-anchor=\"middle\">"
                        "L%lld</text>\n<text x=\"%lld\" y=\"%lld\" font-size=\"10\" "
                        "text-anchor=\"middle\" fill=\"#333\">r%lld</text>\n",
                        x0 + CELL_W / 2, y0 + 14, t % WARP, x0 + CELL_W / 2, y0 + 28,
                        reg[r * cols + c]);
        }
    }
    for (long long w = 0; w < warps && legend_rows; ++w) {
        char color[16];
        warp_color((int)w, color, sizeof color);
        long long lx = LEFT + (w % 16) * 70, ly = TOP + rows * ch + 14 + (w / 16) * 22;
        fprintf(
            f,
            "<rect x=\"%lld\" y=\"%lld\" width=\"14\" height=\"14\" fill=\"%s\" stroke=\"#555\"/>"
            "<text x=\"%lld\" y=\"%lld\" font-size=\"11\">warp %lld</text>\n",
            lx, ly, color, lx + 18, ly + 11, w);
    }
    fprintf(f, "</svg>\n");
    int bad = ferror(f) || fflush(f) != 0;
    int err = errno;
    bad |= fclose(f) != 0;
    if (bad && !err)
        err = errno;
    free(tid);
    free(reg);
    if (bad)
        fprintf(stderr, "ck dist: error writing '%s': %s.\n", path, strerror(err ? err : EIO));
    return bad ? 1 : 0;
}
