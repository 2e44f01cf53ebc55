/* ck info: version, build options, backends found at run time, cache directory. */
#include <stdio.h>
#include <string.h>

#include "ck/ck.h"
#include "cli.h"

static const char usage[] =
    "Usage: ck info [--json]\n\n"
    "Print the version and build options of ck, the backends found at run time (CUDA driver\n"
    "and NVRTC versions, each GPU's name and compute capability, the CPU emulator's compiler)\n"
    "and the kernel cache directory.\n\n"
    "  --json   one JSON object instead of text\n";

static void print_json(const ck_system_info *s)
{
    printf("{\"version\":");
    cli_json_string(stdout, ck_version());
    printf(",\"build_options\":");
    cli_json_string(stdout, ck_build_options());
    printf(",\"cuda_driver\":{\"found\":%s,\"version\":%d,\"status\":",
           s->cuda_driver_found ? "true" : "false", s->cuda_driver_version);
    cli_json_string(stdout, s->cuda_driver_status);
    printf("},\"nvrtc\":{\"found\":%s,\"version\":\"%d.%d\",\"status\":",
           s->nvrtc_found ? "true" : "false", s->nvrtc_major, s->nvrtc_minor);
    cli_json_string(stdout, s->nvrtc_status);
    printf("},\"devices\":[");
    for (int i = 0; i < s->device_count; ++i) {
        const ck_device_info *d = &s->devices[i];
        printf("%s{\"index\":%d,\"name\":", i ? "," : "", i);
        cli_json_string(stdout, d->name);
        printf(",\"compute_capability\":\"%d.%d\",\"multiprocessors\":%d,\"memory_bytes\":%zu}",
               d->cc_major, d->cc_minor, d->multiprocessors, d->memory_bytes);
    }
    printf("],\"emulator\":{\"found\":%s,\"compiler\":", s->host_compiler_found ? "true" : "false");
    cli_json_string(stdout, s->host_compiler);
    printf("},\"cache_dir\":");
    cli_json_string(stdout, s->cache_dir);
    printf("}\n");
}

static void print_text(const ck_system_info *s)
{
    printf("ck %s\n", ck_version());
    printf("build:        %s\n", ck_build_options());
    if (s->cuda_driver_found)
        printf("cuda driver:  %d.%d (%s)\n", s->cuda_driver_version / 1000,
               (s->cuda_driver_version % 1000) / 10, s->cuda_driver_status);
    else
        printf("cuda driver:  not available - %s\n", s->cuda_driver_status);
    if (s->nvrtc_found)
        printf("nvrtc:        %d.%d (%s)\n", s->nvrtc_major, s->nvrtc_minor, s->nvrtc_status);
    else
        printf("nvrtc:        not available - %s\n", s->nvrtc_status);
    if (s->device_count == 0)
        printf("gpus:         none\n");
    for (int i = 0; i < s->device_count; ++i) {
        const ck_device_info *d = &s->devices[i];
        printf("gpu %d:        %s, compute capability %d.%d, %d SMs, %.1f GiB\n", i, d->name,
               d->cc_major, d->cc_minor, d->multiprocessors,
               (double)d->memory_bytes / (1024.0 * 1024.0 * 1024.0));
    }
    printf("cpu emulator: %s%s\n", s->host_compiler_found ? "compiler " : "unavailable - ",
           s->host_compiler);
    printf("kernel cache: %s\n", s->cache_dir);
}

int ck_cmd_info(int argc, char **argv)
{
    int json = 0;
    for (int i = 1; i < argc; ++i) {
        if (cli_is_help(argv[i])) {
            fputs(usage, stdout);
            return CK_EXIT_OK;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else {
            return cli_usage_error("info", "unknown option '%s'", argv[i]);
        }
    }
    ck_system_info s;
    if (ck_query_system(&s) != CK_SUCCESS)
        return cli_library_error("info");
    if (json)
        print_json(&s);
    else
        print_text(&s);
    return CK_EXIT_OK;
}
