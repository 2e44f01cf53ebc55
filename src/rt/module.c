/* Kernel modules: compile (NVRTC or the host compiler) through the module cache, load, launch. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck/ck.h"
#include "core/error.h"
#include "rt/emulator.h"
#include "rt/host_compile.h"
#include "rt/runtime_internal.h"

static ck_status check_options(const char *const *options, int n)
{
    if (n < 0 || n > 64 || (n > 0 && !options))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_module_load: option_count = %d with options %s; 0 to 64 options in a "
                       "non-NULL array are accepted.",
                       n, options ? "given" : "NULL");
    for (int i = 0; i < n; ++i) {
        const char *o = options[i];
        if (!o || (strncmp(o, "-D", 2) != 0 && strncmp(o, "-U", 2) != 0) || strlen(o) < 3)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "ck_module_load: option %d ('%s') is not accepted; only -DNAME, "
                           "-DNAME=VALUE and -UNAME work on both backends.",
                           i, o ? o : "(null)");
    }
    return CK_SUCCESS;
}

static ck_status module_key(ck_device *d, const char *source, const char *const *options, int n,
                            ck_hash128 *key)
{
    ck_hasher h;
    ck_hasher_init(&h);
    ck_hasher_str(&h, "ck-module-1");
    ck_hasher_str(&h, CK_VERSION_STRING);
    ck_hasher_str(&h, d->props.target);
    ck_hash128 hh = ck_device_headers_hash();
    ck_hasher_field(&h, &hh, sizeof hh);
    if (d->backend == CK_BACKEND_CUDA) {
        int v[2] = {0, 0};
        ck_status st = ck_nvrtc_version_for_key(&v[0], &v[1]);
        if (st != CK_SUCCESS)
            return st;
        ck_hasher_field(&h, v, sizeof v);
    } else {
        int api = CK_EMU_API_VERSION;
        ck_hasher_field(&h, &api, sizeof api);
        ck_status st = ck_host_compile_key(&h);
        if (st != CK_SUCCESS)
            return st;
    }
    for (int i = 0; i < n; ++i)
        ck_hasher_str(&h, options[i]);
    ck_hasher_str(&h, source);
    *key = ck_hasher_final(&h);
    return CK_SUCCESS;
}

/* Compile, using the disk cache. *bin malloc'd. */
static ck_status build(ck_device *d, const char *source, const ck_kernel_sig *sigs, int nsigs,
                       const char *const *options, int n, ck_hash128 key, int use_cache, void **bin,
                       size_t *size)
{
    const char *kind = d->backend == CK_BACKEND_CUDA ? "cubin" : "host-so";
    if (use_cache && ck_mcache_load(key, kind, bin, size) == CK_SUCCESS)
        return CK_SUCCESS;
    ck_clear_error();
    ck_status st;
    if (d->backend == CK_BACKEND_CUDA) {
        st = ck_nvrtc_compile(source, d->props.target, options, n, bin, size);
    } else {
        char *unit = ck_kernel_emu_unit(source, sigs, nsigs);
        if (!unit)
            return CK_ERROR_OUT_OF_MEMORY;
        st = ck_host_compile(unit, options, n, bin, size);
        free(unit);
    }
    if (st != CK_SUCCESS)
        return st;
    if (ck_mcache_store(key, kind, *bin, *size) != CK_SUCCESS) {
        if (!ck_mcache_dir_refused()) /* else logged once by the cache */
            CK_LOG(CK_LOG_WARN, "%s (continuing without caching)", ck_last_error());
        ck_clear_error();
    }
    return CK_SUCCESS;
}

/* CK_DUMP=dir: every kernel source is written to dir/<key>.<target>.cu (best effort). */
static void dump_source(const ck_device *d, const char *source, ck_hash128 key)
{
    const char *dir = getenv("CK_DUMP");
    if (!dir || !*dir)
        return;
    char hex[33], path[CK_PATH_MAX + 64];
    ck_hash_hex(key, hex);
    snprintf(path, sizeof path, "%s/%s.%s.cu", dir, hex, d->props.target);
    FILE *f = fopen(path, "wb");
    if (!f) {
        CK_LOG(CK_LOG_WARN, "CK_DUMP: could not write '%s'.", path);
        return;
    }
    fputs(source, f);
    fclose(f);
    CK_LOG(CK_LOG_INFO, "CK_DUMP: kernel source written to '%s'.", path);
}

static ck_status resolve_kernels(ck_module *m)
{
    m->kernels = calloc(m->sig_count ? (size_t)m->sig_count : 1, sizeof *m->kernels);
    if (!m->kernels)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "ck_module_load: no memory.");
    for (int i = 0; i < m->sig_count; ++i) {
        ck_kernel *k = &m->kernels[i];
        k->module = m;
        k->sig = &m->sigs[i];
        k->cu_static_shared = -1;
        k->cu_param_known = -1;
        if (m->device->backend == CK_BACKEND_CUDA) {
            ck_status st =
                ck_cuda_get_function(m->device, m->cu_module, k->sig->name, &k->cu_function);
            if (st != CK_SUCCESS)
                return ck_fail_context(st, "ck_module_load: kernel '%s'", k->sig->name);
            continue;
        }
        char sym[CK_SIG_NAME_MAX + 32];
        snprintf(sym, sizeof sym, "ck_emu_run_%s", k->sig->name);
        void *run = dlsym(m->so_handle, sym);
        snprintf(sym, sizeof sym, "ck_emu_layout_%s", k->sig->name);
        k->layout = dlsym(m->so_handle, sym);
        if (!run || !k->layout)
            return ck_fail(CK_ERROR_INTERNAL,
                           "ck_module_load: the emulator object lacks the entry point of kernel "
                           "'%s'.",
                           k->sig->name);
        memcpy(&k->run, &run, sizeof run);
    }
    return CK_SUCCESS;
}

static ck_status load_binary(ck_module *m, const void *bin, size_t size)
{
    if (m->device->backend == CK_BACKEND_CUDA)
        return ck_cuda_module_load(m->device, bin, &m->cu_module);
    return ck_host_load(bin, size, &m->so_handle);
}

ck_status ck_module_load(ck_device *d, const char *source, const char *const *options,
                         int option_count, ck_module **module)
{
    CK_REQUIRE_NOT_NULL(d, "ck_module_load");
    CK_REQUIRE_NOT_NULL(source, "ck_module_load");
    CK_REQUIRE_NOT_NULL(module, "ck_module_load");
    *module = NULL;
    ck_status st = check_options(options, option_count);
    if (st != CK_SUCCESS)
        return st;
    ck_hash128 key;
    if ((st = module_key(d, source, options, option_count, &key)) != CK_SUCCESS)
        return st;
    dump_source(d, source, key);
    for (ck_module *m = d->modules; m; m = m->next) {
        if (m->key.a == key.a && m->key.b == key.b) {
            *module = m;
            return CK_SUCCESS;
        }
    }
    ck_module *m = calloc(1, sizeof *m);
    if (!m)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "ck_module_load: no memory.");
    m->device = d;
    m->key = key;
    if ((st = ck_kernel_sigs_parse(source, &m->sigs, &m->sig_count)) != CK_SUCCESS) {
        free(m);
        return ck_fail_context(st, "ck_module_load");
    }
    if (m->sig_count == 0) {
        free(m->sigs);
        free(m);
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_module_load: the source declares no kernel; declare kernels as "
                       "'CK_KERNEL void name(parameters)'.");
    }
    void *bin = NULL;
    size_t size = 0;
    st = build(d, source, m->sigs, m->sig_count, options, option_count, key, 1, &bin, &size);
    if (st == CK_SUCCESS && load_binary(m, bin, size) != CK_SUCCESS) {
        /* a cached binary that does not load is treated as corrupted: rebuild once */
        CK_LOG(CK_LOG_WARN, "module cache: a cached kernel did not load (%s); recompiling.",
               ck_last_error());
        free(bin);
        bin = NULL;
        st = build(d, source, m->sigs, m->sig_count, options, option_count, key, 0, &bin, &size);
        if (st == CK_SUCCESS)
            st = load_binary(m, bin, size);
    }
    free(bin);
    if (st == CK_SUCCESS)
        st = resolve_kernels(m);
    if (st != CK_SUCCESS) {
        if (m->so_handle)
            dlclose(m->so_handle);
        if (m->cu_module)
            ck_cuda_module_unload(d, m->cu_module);
        free(m->kernels);
        free(m->sigs);
        free(m);
        return st;
    }
    m->next = d->modules;
    d->modules = m;
    *module = m;
    return CK_SUCCESS;
}

ck_status ck_module_get_kernel(ck_module *m, const char *name, ck_kernel **kernel)
{
    CK_REQUIRE_NOT_NULL(m, "ck_module_get_kernel");
    CK_REQUIRE_NOT_NULL(name, "ck_module_get_kernel");
    CK_REQUIRE_NOT_NULL(kernel, "ck_module_get_kernel");
    char names[512] = "";
    for (int i = 0; i < m->sig_count; ++i) {
        if (strcmp(m->sigs[i].name, name) == 0) {
            *kernel = &m->kernels[i];
            return CK_SUCCESS;
        }
        size_t u = strlen(names);
        snprintf(names + u, sizeof names - u, "%s'%s'", i ? ", " : "", m->sigs[i].name);
    }
    *kernel = NULL;
    return ck_fail(CK_ERROR_NOT_FOUND,
                   "ck_module_get_kernel: the module has no kernel '%s'; it has %s.", name, names);
}

int ck_kernel_param_count(const ck_kernel *k)
{
    return k ? k->sig->param_count : -1;
}

static ck_status check_args(const ck_kernel *k, void *const *args, const size_t *sizes, int n)
{
    const ck_kernel_sig *s = k->sig;
    if (n != s->param_count)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_launch: kernel '%s' takes %d arguments but %d were given.", s->name,
                       s->param_count, n);
    if (n > 0 && (!args || !sizes))
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_launch: kernel '%s' takes %d arguments but '%s' is NULL.", s->name, n,
                       args ? "arg_sizes" : "args");
    for (int i = 0; i < n; ++i) {
        if (!args[i])
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "ck_launch: args[%d] (parameter '%s' of kernel '%s') is NULL; it must "
                           "point to the value.",
                           i, s->params[i], s->name);
        if (k->layout && sizes[i] != k->layout[3 + 2 * i + 1])
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "ck_launch: argument %d of kernel '%s' has %zu bytes but parameter "
                           "'%s' has %zu.",
                           i, s->name, sizes[i], s->params[i], k->layout[3 + 2 * i + 1]);
    }
    return CK_SUCCESS;
}

ck_status ck_kernel_max_active(ck_kernel *k, const ck_launch_config *cfg, int *count)
{
    CK_REQUIRE_NOT_NULL(k, "ck_kernel_max_active");
    CK_REQUIRE_NOT_NULL(cfg, "ck_kernel_max_active");
    CK_REQUIRE_NOT_NULL(count, "ck_kernel_max_active");
    *count = 0;
    if (k->module->device->backend != CK_BACKEND_CUDA)
        return CK_SUCCESS;
    return ck_cuda_max_active(k, cfg, count);
}

ck_status ck_launch(ck_kernel *k, const ck_launch_config *cfg, void *const *args,
                    const size_t *sizes, int n)
{
    CK_REQUIRE_NOT_NULL(k, "ck_launch");
    CK_REQUIRE_NOT_NULL(cfg, "ck_launch");
    ck_status st = check_args(k, args, sizes, n);
    if (st != CK_SUCCESS)
        return st;
    ck_device *d = k->module->device;
    unsigned long threads = 1;
    for (int i = 0; i < 3; ++i)
        threads *= cfg->block[i] ? cfg->block[i] : 1;
    if (threads > 1024)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_launch: a block of %lu threads (%u x %u x %u) is too large for kernel "
                       "'%s'; at most 1024 are accepted.",
                       threads, cfg->block[0], cfg->block[1], cfg->block[2], k->sig->name);
    if (cfg->dynamic_shared_bytes > d->props.max_shared_per_block && d->props.max_shared_per_block)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_launch: kernel '%s' asks for %zu bytes of dynamic shared memory; the "
                       "device allows at most %zu per block.",
                       k->sig->name, cfg->dynamic_shared_bytes, d->props.max_shared_per_block);
    unsigned long cluster_blocks = 1;
    for (int i = 0; i < 3; ++i) {
        unsigned g = cfg->grid[i] ? cfg->grid[i] : 1, c = cfg->cluster[i] ? cfg->cluster[i] : 1;
        cluster_blocks *= c;
        if (g % c != 0)
            return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                           "ck_launch: grid dimension %d of kernel '%s' (%u) is not a multiple of "
                           "the cluster dimension (%u).",
                           i, k->sig->name, g, c);
    }
    if (cluster_blocks > 1 && d->props.cc_major < 9)
        return ck_fail(CK_ERROR_UNSUPPORTED,
                       "ck_launch: kernel '%s' asks for clusters of %lu blocks, which need compute "
                       "capability 9.0; the device has %d.%d.",
                       k->sig->name, cluster_blocks, d->props.cc_major, d->props.cc_minor);
    if (cfg->stream && cfg->stream->device != d)
        return ck_fail(CK_ERROR_INVALID_ARGUMENT,
                       "ck_launch: the stream belongs to another device than kernel '%s'.",
                       k->sig->name);
    if (d->backend == CK_BACKEND_CUDA) {
        k->arg_sizes_checked = sizes;
        st = ck_cuda_launch(k, cfg, args, n);
        k->arg_sizes_checked = NULL;
        return st;
    }

    size_t size = k->layout[1], align = k->layout[2] < 16 ? 16 : k->layout[2];
    unsigned char *packed = aligned_alloc(align, (size + align - 1) / align * align + align);
    if (!packed)
        return ck_fail(CK_ERROR_OUT_OF_MEMORY, "ck_launch: no memory for the arguments.");
    memset(packed, 0, size);
    for (int i = 0; i < n; ++i)
        memcpy(packed + k->layout[3 + 2 * i], args[i], sizes[i]);
    ck_emu_launch_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.kernel_name = k->sig->name;
    desc.run = k->run;
    desc.args = packed;
    for (int i = 0; i < 3; ++i) {
        desc.grid[i] = cfg->grid[i] ? cfg->grid[i] : 1;
        desc.block[i] = cfg->block[i] ? cfg->block[i] : 1;
        desc.cluster[i] = cfg->cluster[i] ? cfg->cluster[i] : 1;
    }
    desc.dynamic_shared_bytes = cfg->dynamic_shared_bytes;
    st = ck_emu_launch(&desc);
    free(packed);
    return st;
}
