/* cmd_info.c — commands that describe corun: config, policies, occupancy. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "core/policy.h"
#include "corun/corun.h"

void corun__usage_config(FILE *out)
{
    fprintf(out,
            "usage: corun config\n"
            "\n"
            "Lists every setting: its environment variable, type, bounds, default,\n"
            "current value (after CORUN_* variables and --set) and what it does.\n");
}

/* One row of corun config: the columns before MEANING. */
typedef struct config_row {
    const char *env, *type, *def;
    char bounds[CORUN_SETTING_STR_MAX], value[CORUN_SETTING_STR_MAX];
} config_row;

static void config_row_of(const corun__cli *cli, size_t i, config_row *r)
{
    const corun__setting_info *in = corun__settings_info(i);

    r->env = in->env;
    r->type = in->type == CORUN_SETTING_STR ? "str" : in->type == CORUN_SETTING_UINT ? "uint" : "num";
    r->def = in->def;
    corun__settings_bounds(i, r->bounds, sizeof(r->bounds));
    corun__settings_format(&cli->settings, i, r->value, sizeof(r->value));
}

static int widest(int w, const char *s)
{
    return (int)strlen(s) > w ? (int)strlen(s) : w;
}

int corun__cmd_config(corun__cli *cli, int argc, char **argv)
{
    config_row r;
    int w[5] = {0, 0, 0, 0, 0};
    size_t i;

    if (argc > 0) {
        fprintf(stderr, "corun config: unexpected argument '%s'\n", argv[0]);
        return CORUN_EXIT_USAGE;
    }
    /* columns as wide as their widest cell, headers included */
    for (i = 0; i <= corun__settings_count(); i++) {
        if (i == corun__settings_count()) {
            r = (config_row){.env = "VARIABLE", .type = "TYPE", .def = "DEFAULT",
                             .bounds = "BOUNDS", .value = "VALUE"};
        } else {
            config_row_of(cli, i, &r);
        }
        w[0] = widest(w[0], r.env);
        w[1] = widest(w[1], r.type);
        w[2] = widest(w[2], r.bounds);
        w[3] = widest(w[3], r.def);
        w[4] = widest(w[4], r.value);
    }
    printf("%-*s  %-*s  %-*s  %-*s  %-*s  %s\n", w[0], "VARIABLE", w[1], "TYPE", w[2], "BOUNDS",
           w[3], "DEFAULT", w[4], "VALUE", "MEANING");
    for (i = 0; i < corun__settings_count(); i++) {
        config_row_of(cli, i, &r);
        printf("%-*s  %-*s  %-*s  %-*s  %-*s  %s\n", w[0], r.env, w[1], r.type, w[2], r.bounds,
               w[3], r.def, w[4], r.value, corun__settings_info(i)->help);
    }
    return CORUN_EXIT_OK;
}

void corun__usage_policies(FILE *out)
{
    fprintf(out, "usage: corun policies\n\nLists the scheduling policies by name.\n");
}

int corun__cmd_policies(corun__cli *cli, int argc, char **argv)
{
    size_t i;

    if (argc > 0) {
        fprintf(stderr, "corun policies: unexpected argument '%s'\n", argv[0]);
        return CORUN_EXIT_USAGE;
    }
    for (i = 0; i < corun__policy_count(); i++) {
        printf("%-10s %s\n", corun__policy_at(i)->name, corun__policy_at(i)->help);
    }
    return CORUN_EXIT_OK;
}

void corun__usage_occupancy(FILE *out)
{
    fprintf(out,
            "usage: corun occupancy --threads N [--regs R] [--smem BYTES] [--dyn BYTES] [--optin]\n"
            "\n"
            "Max active blocks per SM of an H100 for a kernel shape, by the rules of\n"
            "CUDA's occupancy calculator; prints each limit.\n"
            "\n"
            "options:\n"
            "  --threads N    threads per block (required)\n"
            "  --regs R       registers per thread (default 32)\n"
            "  --smem BYTES   static shared memory per block (default 0)\n"
            "  --dyn BYTES    dynamic shared memory per block (default 0)\n"
            "  --optin        allow more than 48 KiB of shared memory per block\n");
}

int corun__cmd_occupancy(corun__cli *cli, int argc, char **argv)
{
    corun_kernel_shape s = {0, 32, 0, 0, false};
    corun_gpu_desc d;
    corun_occupancy o;
    unsigned long long v;
    const char *who = "corun occupancy";
    char why[256];
    int i, have_threads = 0;
    static const char *const limiter[] = {"warps", "registers", "shared memory", "blocks"};

    for (i = 0; i < argc; i++) {
        const char *a = argv[i], *val;
        uint32_t *dst = NULL;
        if (strcmp(a, "--optin") == 0) {
            s.smem_optin = true;
            continue;
        }
        if (strcmp(a, "--threads") == 0) {
            dst = &s.threads_per_block;
            have_threads = 1;
        } else if (strcmp(a, "--regs") == 0) {
            dst = &s.regs_per_thread;
        } else if (strcmp(a, "--smem") == 0) {
            dst = &s.smem_static;
        } else if (strcmp(a, "--dyn") == 0) {
            dst = &s.smem_dynamic;
        } else {
            fprintf(stderr, "%s: unknown option '%s' (%s --help lists them)\n", who, a, who);
            return CORUN_EXIT_USAGE;
        }
        if ((val = corun__cli_value(who, argc, argv, &i)) == NULL) {
            return CORUN_EXIT_USAGE;
        }
        if (corun__parse_u64(val, 0xffffffffull, &v) != 0) {
            fprintf(stderr, "%s: option %s: '%s' is not a whole number in [0, 4294967295]\n", who,
                    a, val);
            return CORUN_EXIT_USAGE;
        }
        *dst = (uint32_t)v;
    }
    if (!have_threads) {
        fprintf(stderr, "corun occupancy: --threads is required\n");
        return CORUN_EXIT_USAGE;
    }
    corun_gpu_desc_h100(&d);
    if (corun_occupancy_calc(&d, &s, &o, why, sizeof(why)) != CORUN_OK) {
        fprintf(stderr, "corun occupancy: %s\n", why);
        return CORUN_EXIT_FAIL;
    }
    printf("blocks_per_sm %u (limited by %s)\n", o.blocks_per_sm, limiter[o.limiter]);
    printf("  by warps %u, by registers %u, by shared memory %u, by blocks %u\n", o.by_warps,
           o.by_regs, o.by_smem, o.by_blocks);
    printf("  per block: %u warps, %u registers, %u bytes shared memory allocated\n",
           o.warps_per_block, o.regs_per_block, o.smem_per_block);
    return CORUN_EXIT_OK;
}
