/*
 * The GEMM policy: candidate instances of every family that supports the problem on this
 * device, ranked by an estimate of their efficiency (wave quantization over the device's
 * multiprocessors, tile padding waste, arithmetic intensity of the tile), the tuning table's
 * choice first.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ck/tuning.h"
#include "core/error.h"
#include "ops/gemm/gemm_internal.h"

static const ck_gemm_family *const families[] = {&ck_gemm_family_sm90, &ck_gemm_family_sm80q,
                                                 &ck_gemm_family_sm80};
enum { NFAMILIES = (int)(sizeof families / sizeof families[0]) };

const ck_gemm_family *ck_gemm_family_of(int id)
{
    for (int i = 0; i < NFAMILIES; ++i)
        if (families[i]->id == id)
            return families[i];
    return NULL;
}

int ck_gemm_instance_id(const ck_gemm_instance *in)
{
    int kcode = 0; /* tile_k 16, 32, 64, 128 (and more) -> 0, 1, 2, 3 */
    while (kcode < 3 && (16 << kcode) < in->tile_k)
        ++kcode;
    long long id = kcode;
    id = id * 2 + (in->family == CK_GEMM_FAMILY_SM90);
    id = id * 16 + in->tile_m / 32; /* every family's tiles are multiples of 32 */
    id = id * 32 + in->tile_n / 16;
    /* 3: family 80's small-M mixed-input variant (never a decomposition of its own) */
    id = id * 4 + (in->family == CK_GEMM_FAMILY_SM80Q            ? 3
                   : in->decomp == CK_GEMM_DECOMP_SPLIT_K_ATOMIC ? 1
                   : in->decomp == CK_GEMM_DECOMP_STREAM_K       ? 2
                                                                 : 0);
    id = id * 8 + (in->stages & 7);
    id = id * 8 + (in->warps_m & 7);
    id = id * 8 + (in->warps_n & 7);
    id = id * 4 + ((in->cluster - 1) & 3);
    id = id * 2 + (in->persistent & 1);
    id = id * 2 + (in->raster & 1);
    id = id * 16 + ((in->split_k > 1 ? in->split_k - 1 : 0) & 15);
    return (int)id;
}

void ck_gemm_instance_name(const ck_gemm_instance *in, char *buf, size_t size)
{
    if (in->family == CK_GEMM_FAMILY_SM80Q) { /* rows x columns x K chunk, chunks in flight */
        snprintf(buf, size, "sm80.qskinny.%dx%dx%d.u%d.w%d.k%d", in->tile_m, in->tile_n, in->tile_k,
                 in->stages, in->warps_n, in->split_k);
        return;
    }
    char split[16] = "";
    if (in->split_k > 1)
        snprintf(split, sizeof split, ".k%d%s", in->split_k,
                 in->decomp == CK_GEMM_DECOMP_SPLIT_K_ATOMIC ? "a" : "");
    if (in->decomp == CK_GEMM_DECOMP_STREAM_K)
        snprintf(split, sizeof split, ".sk");
    snprintf(buf, size, "sm%d.%dx%dx%d.s%d.w%dx%d%s%s%s", in->family, in->tile_m, in->tile_n,
             in->tile_k, in->stages, in->warps_m, in->warps_n,
             in->cluster > 1 ? (in->cluster == 2 ? ".c2" : ".c4") : "", in->persistent ? ".p" : "",
             split);
}

void ck_gemm_tuning_device_key(const ck_device_props *props, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%s", props->name, props->target);
}

static void matrix_key(char *buf, size_t size, const char *name, const ck_gemm_matrix *m)
{
    snprintf(buf, size, "%s=%s/%c/%lld", name, ck_dtype_name(m->dtype),
             m->order == CK_GEMM_ROW_MAJOR ? 'r' : 'c', (long long)m->ld);
}

void ck_gemm_tuning_problem_key(const ck_gemm_prob *prob, char *buf, size_t size)
{
    const ck_gemm_problem *p = &prob->p;
    char a[64], b[64], c[64] = "c=-", d[64];
    matrix_key(a, sizeof a, "a", &p->a);
    matrix_key(b, sizeof b, "b", &p->b);
    if (prob->has_c)
        matrix_key(c, sizeof c, "c", &p->c);
    matrix_key(d, sizeof d, "d", &p->d);
    int len =
        snprintf(buf, size, "m=%lld,n=%lld,k=%lld,%s,%s,%s,%s,compute=%d,bias=%d,act=%d,epi=%d",
                 (long long)p->m, (long long)p->n, (long long)p->k, a, b, c, d, (int)p->compute,
                 (int)p->bias, (int)p->activation, prob->has_epi ? prob->epi.count : 0);
    /* batched problems: the count and the strides (unbatched keys stay as they were) */
    if (p->batch > 1 && len > 0 && (size_t)len < size)
        len += snprintf(buf + len, size - (size_t)len,
                        ",batch=%lld,sa=%lld,sb=%lld,sc=%lld,sd=%lld", (long long)p->batch,
                        (long long)p->a.batch_stride, (long long)p->b.batch_stride,
                        (long long)p->c.batch_stride, (long long)p->d.batch_stride);
    /* multi-D extras: op, broadcast, type, order of each (problems without keep their keys) */
    for (int x = 0; x < p->extra_count && len > 0 && (size_t)len < size; ++x) {
        const ck_gemm_extra *e = &p->extras[x];
        len += snprintf(buf + len, size - (size_t)len, ",x%d=%d%d%s%c", x, (int)e->op,
                        (int)e->broadcast, ck_dtype_name(e->dtype),
                        e->order == CK_GEMM_ROW_MAJOR ? 'r' : 'c');
    }
    /* quantized problems: scale modes and blocks, packed B (others keep their keys) */
    if (prob->quant && len > 0 && (size_t)len < size)
        len += snprintf(buf + len, size - (size_t)len, ",q=%d:%dx%d/%d:%dx%d/p%d/z%d",
                        (int)p->scale_a.mode, p->scale_a.block_mn, p->scale_a.block_k,
                        (int)p->scale_b.mode, p->scale_b.block_mn, p->scale_b.block_k,
                        (int)p->b_packed, p->b_zeros);
}

/* The tuning table's instance for this problem and device (by name), if any. */
static int tuning_lookup(const ck_gemm_prob *prob, const ck_device_props *props,
                         const ck_gemm_instance *ins, int n)
{
    char dev[CK_TUNING_DEVICE_MAX], key[CK_TUNING_PROBLEM_MAX], name[96];
    ck_tuning_entry e;
    int found = 0;
    ck_gemm_tuning_device_key(props, dev, sizeof dev);
    ck_gemm_tuning_problem_key(prob, key, sizeof key);
    if (ck_tuning_lookup("gemm", dev, key, &e, &found) != CK_SUCCESS || !found)
        return -1;
    for (int i = 0; i < n; ++i) {
        ck_gemm_instance_name(&ins[i], name, sizeof name);
        if (strcmp(name, e.instance) == 0)
            return i;
    }
    CK_LOG(CK_LOG_INFO,
           "gemm: the tuning table names instance '%s', which is no longer a "
           "candidate; the heuristic decides.",
           e.instance);
    return -1;
}

/* Estimated efficiency (0..1] of an instance: the fraction of busy block slots over the waves,
 * the useful fraction of the padded tiles, and the tile's intensity (tm tn / (tm + tn)) against
 * that of 128 x 256, the largest tile the families use. */
static double score_of(const ck_gemm_prob *prob, const ck_gemm_instance *in,
                       const ck_device_props *props, double *waves_out)
{
    const ck_gemm_problem *p = &prob->p;
    double tm = ceil((double)p->m / in->tile_m), tn = ceil((double)p->n / in->tile_n);
    double tiles = tm * tn * (double)p->batch;
    double slots = props->multiprocessors > 0 ? props->multiprocessors : 1;
    double waves = tiles / slots;
    double wave_eff = waves / ceil(waves);
    double useful = (double)p->m * (double)p->n * (double)p->batch /
                    (tiles * in->tile_m * in->tile_n); /* tiles counts every batch */
    double kt = ceil((double)p->k / in->tile_k);
    double kuse = (double)p->k / (kt * in->tile_k);
    double intensity =
        (double)in->tile_m * in->tile_n / (in->tile_m + in->tile_n) / (128.0 * 256 / 384);
    double fam = in->family == CK_GEMM_FAMILY_SM90 ? 1.0 : (props->cc_major >= 9 ? 0.5 : 1.0);
    *waves_out = waves;
    if (in->family == CK_GEMM_FAMILY_SM80Q) { /* bandwidth-bound decode (quant_skinny.c) */
        *waves_out = waves * in->split_k;
        return ck_gemm_qskinny_score(prob, in, (int)slots);
    }
    if (in->family == CK_GEMM_FAMILY_SM90) { /* its own model: tile sizes and split-K */
        *waves_out = waves * (in->split_k > 1 ? in->split_k : 1);
        return ck_gemm_sm90_score(prob, in, (int)slots);
    }
    /* an operand whose rows are not whole 16-byte vectors is copied element by element,
     * several times slower than vector copies (bench/RESULTS.md, fourth session); this also
     * lets the plan weigh copying such operands first (repack.c) */
    double copies =
        (ck_gemm_copy_vec(prob, 0) ? 1.0 : 0.45) * (ck_gemm_copy_vec(prob, 1) ? 1.0 : 0.45);
    /* a tile's prologue and epilogue, as the sm90 estimate counts them (3 K steps of 128 x 256
     * scaled by the tile's area): without them a short K (a 1x1 convolution's C = 64 or 128)
     * ranked sm80 over sm90, which ran those far slower (bench/RESULTS.md, eighth session, runs
     * W and X) */
    double area = (double)in->tile_m * in->tile_n / (128.0 * 256.0);
    double pro = kt / (kt + 3.0 * area);
    return wave_eff * useful * kuse * (intensity > 1 ? 1 : intensity) * fam * copies * pro;
}

int ck_gemm_policy_rank(const ck_gemm_prob *prob, const ck_device_props *props,
                        ck_gemm_instance *out, double *score, int max, char *reason,
                        size_t reason_size)
{
    int n = 0;
    size_t used = 0;
    if (reason && reason_size)
        reason[0] = 0;
    for (int f = 0; f < NFAMILIES; ++f) {
        char why[256] = {0};
        if (!families[f]->supports(prob, props, why, sizeof why)) {
            if (reason && used < reason_size)
                used += (size_t)snprintf(reason + used, reason_size - used, "%s%s: %s",
                                         used ? "; " : "", families[f]->name, why);
            continue;
        }
        n += families[f]->instances(prob, props, out + n, max - n);
    }
    double waves;
    for (int i = 0; i < n; ++i)
        score[i] = score_of(prob, &out[i], props, &waves);
    int tuned = tuning_lookup(prob, props, out, n);
    if (tuned >= 0)
        score[tuned] = 1e9; /* the table's choice first */
    /* insertion sort, best first; ties keep the families' order */
    for (int i = 1; i < n; ++i) {
        ck_gemm_instance in = out[i];
        double s = score[i];
        int j = i;
        while (j > 0 && score[j - 1] < s) {
            out[j] = out[j - 1];
            score[j] = score[j - 1];
            --j;
        }
        out[j] = in;
        score[j] = s;
    }
    return n;
}

void ck_gemm_candidate_fill(const ck_gemm_prob *prob, const ck_gemm_instance *in,
                            const ck_device_props *props, double score, ck_gemm_candidate *c)
{
    memset(c, 0, sizeof *c);
    c->id = ck_gemm_instance_id(in);
    ck_gemm_instance_name(in, c->name, sizeof c->name);
    c->family = in->family;
    c->tile_m = in->tile_m;
    c->tile_n = in->tile_n;
    c->tile_k = in->tile_k;
    c->stages = in->stages;
    c->cluster = in->cluster;
    score_of(prob, in, props, &c->est_waves);
    c->score = score;
    c->tuned = score >= 1e9;
}
