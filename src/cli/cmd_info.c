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

int corun__cmd_config(corun__cli *cli, int argc, char **argv)
{
    size_t i;

    if (argc > 0) {
        fprintf(stderr, "corun config: unexpected argument '%s'\n", argv[0]);
        return CORUN_EXIT_USAGE;
    }
    printf("%-24s %-5s %-22s %-10s %-10s %s\n", "VARIABLE", "TYPE", "BOUNDS", "DEFAULT", "VALUE",
           "MEANING");
    for (i = 0; i < corun__settings_count(); i++) {
        const corun__setting_info *in = corun__settings_info(i);
        char value[CORUN_SETTING_STR_MAX], bounds[64];
        const char *type = in->type == CORUN_SETTING_STR    ? "str"
                           : in->type == CORUN_SETTING_UINT ? "uint"
                                                            : "num";
        corun__settings_format(&cli->settings, i, value, sizeof(value));
        if (in->type == CORUN_SETTING_STR) {
            snprintf(bounds, sizeof(bounds), "%s", in->allowed[0] ? in->allowed : "-");
        } else {
            snprintf(bounds, sizeof(bounds), "[%g, %g]", in->min, in->max);
        }
        printf("%-24s %-5s %-22s %-10s %-10s %s\n", in->env, type, bounds, in->def, value, in->help);
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
            "usage: corun occupancy --threads N --regs R [--smem BYTES] [--dyn BYTES] [--optin]\n"
            "\n"
            "Max active blocks per SM of an H100 for a block of N threads using R\n"
            "registers per thread and static (--smem) and dynamic (--dyn) shared memory;\n"
            "--optin allows more than 48 KiB per block. Prints each limit.\n");
}

int corun__cmd_occupancy(corun__cli *cli, int argc, char **argv)
{
    corun_kernel_shape s = {0, 32, 0, 0, false};
    corun_gpu_desc d;
    corun_occupancy o;
    unsigned long long v;
    char why[256];
    int i, have_threads = 0;
    static const char *const limiter[] = {"warps", "registers", "shared memory", "blocks"};

    for (i = 0; i < argc; i++) {
        const char *a = argv[i];
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
            fprintf(stderr, "corun occupancy: unknown option '%s'\n", a);
            return CORUN_EXIT_USAGE;
        }
        if (i + 1 >= argc || corun__parse_u64(argv[i + 1], 0xffffffffull, &v) != 0) {
            fprintf(stderr, "corun occupancy: %s needs a whole number\n", a);
            return CORUN_EXIT_USAGE;
        }
        *dst = (uint32_t)v;
        i++;
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
