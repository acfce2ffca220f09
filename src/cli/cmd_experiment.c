/*
 * cmd_experiment.c — `corun experiment`: the FLEP, Slate and fine-grained QoS evaluations
 * (scenario/experiments.h) on the simulator or the GPU, as one JSON object.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/progress.h"
#include "scenario/experiments.h"

/* Progress lines carry the seconds since the experiment started, so a
 * slow run set on a GPU shows where the time went. */
static void log_line(void *ctx, const char *line)
{
    corun__progress *p = ctx;

    corun__progress_line(p, "[%6.1f s] %s", corun__progress_elapsed(p), line);
}

void corun__usage_experiment(FILE *out)
{
    fprintf(out,
            "usage: corun experiment NAME [--backend B] [--dir DIR] [--max-sets N] [--duration-ms MS]\n"
            "                        [--quiet]\n"
            "\n"
            "Runs one of the papers' experiments over the scenario files in DIR and\n"
            "prints its results as one JSON object. NAME is one of:\n"
            "\n"
            "  hpf      FLEP 6.3.1: speedup of a high-priority kernel behind a long\n"
            "           low-priority one, flep-hpf over mps (28 pairs)\n"
            "  srt      FLEP 6.3.1-2: ANTT gain of shortest remaining time over mps at\n"
            "           equal priorities, and throughput lost (28 pairs, 8 triplets)\n"
            "  spatial  FLEP 6.4: preemption overhead, spatial against temporal (28 pairs)\n"
            "  ffs      FLEP 6.3.3: GPU shares at weights 2:1, and throughput lost (28 pairs)\n"
            "  model    FLEP 6.2: held-out error of each kernel's duration model\n"
            "  slate    Slate V-E: co-run or solo per Table I, STP against mps (15 pairings)\n"
            "  fgqos    fine-grained QoS 4.2-4.3: QoS_reach of each quota scheme and spart,\n"
            "           90 pairs x 10 goals and 120 trios (minutes on the simulator);\n"
            "           a case counts against its QoS kernel's rate alone measured\n"
            "           right before and after its set of cases\n"
            "  hsm      HSM 6.2-6.3: over the 45 pairs of fgqos's kernels, HSM's NP\n"
            "           prediction against the NP measured, an even SM split against\n"
            "           hsm-fair, and hsm-qos against 80 %% of the SMs for a memory-bound\n"
            "           high-priority kernel (windows of 60 ms unless --duration-ms);\n"
            "           each kernel's rate alone is measured right before and after\n"
            "           its pair and recorded in the store, where the policies read it\n"
            "  all      FLEP's and Slate's (not fgqos or hsm), as members of one object\n"
            "\n"
            "Kernel profiles the policies need are recorded first in the profile store\n"
            "(CORUN_PROFILE_PATH). Progress goes to stderr, one line per run set.\n"
            "\n"
            "options:\n"
            "  --backend B       sim (default), cuda, or auto (cuda where a GPU is usable,\n"
            "                    else sim)\n"
            "  --dir DIR         where the scenario files are (default: the first scenario folder found)\n"
            "  --max-sets N      only the first N pairs (or triplets) of each, in [0, 1000] (0 = all)\n"
            "  --duration-ms MS  arrival window of the loop experiments (ffs, slate), in (0, 1e7]\n"
            "  -q, --quiet       no progress on stderr (errors still print)\n"
            "\n"
            "The scenario folders are looked for as for corun sim --scenario NAME.\n");
}

int corun__cmd_experiment(corun__cli *cli, int argc, char **argv)
{
    corun__exp_opts o;
    corun__cli_maker mk;
    const char *name = NULL;
    char backend[16], why[1024] = "", dir[4096];
    unsigned long long v;
    corun__progress pr;
    const char *who = "corun experiment";
    json_t *res;
    int i, quiet = 0, backend_given = 0;

    memset(&o, 0, sizeof(o));
    for (i = 0; i < argc; i++) {
        const char *a = argv[i], *val;
        if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
            quiet = 1;
            continue;
        }
        if (a[0] != '-') {
            if (name != NULL) {
                fprintf(stderr, "%s: one experiment at a time ('%s', '%s')\n", who, name, a);
                return CORUN_EXIT_USAGE;
            }
            name = a;
            continue;
        }
        if (strcmp(a, "--backend") != 0 && strcmp(a, "--dir") != 0 &&
            strcmp(a, "--max-sets") != 0 && strcmp(a, "--duration-ms") != 0) {
            fprintf(stderr, "%s: unknown option '%s' (%s --help lists them)\n", who, a, who);
            return CORUN_EXIT_USAGE;
        }
        if ((val = corun__cli_value(who, argc, argv, &i)) == NULL) {
            return CORUN_EXIT_USAGE;
        }
        if (strcmp(a, "--backend") == 0) {
            if (corun__cli_set_backend(cli, "experiment", val) != 0) {
                return CORUN_EXIT_USAGE;
            }
            backend_given = 1;
        } else if (strcmp(a, "--dir") == 0) {
            o.dir = val;
        } else if (strcmp(a, "--max-sets") == 0) {
            if (corun__parse_u64(val, 1000, &v) != 0) {
                fprintf(stderr, "%s: option --max-sets: '%s' is not a whole number in [0, 1000]\n",
                        who, val);
                return CORUN_EXIT_USAGE;
            }
            o.max_sets = (size_t)v;
        } else if (corun__parse_ms(val, &o.duration_ms) != 0) {
            fprintf(stderr, "%s: option --duration-ms: '%s' is not a decimal number in (0, 1e7]\n",
                    who, val);
            return CORUN_EXIT_USAGE;
        }
    }
    if (name == NULL) {
        fprintf(stderr,
                "corun experiment: which one? (hpf, srt, spatial, ffs, model, slate, all)\n");
        return CORUN_EXIT_USAGE;
    }
    if (o.dir == NULL) {
        if (corun__scenario_default_dir(&cli->settings, dir, sizeof(dir)) != CORUN_OK) {
            fprintf(stderr, "corun experiment: no scenario folder (--dir DIR or CORUN_SCENARIOS "
                            "names one)\n");
            return CORUN_EXIT_USAGE;
        }
        o.dir = dir;
    }
    if (!backend_given) {
        /* the simulator unless --backend names another, whatever CORUN_BACKEND says */
        (void)corun__cli_set(cli, "backend=sim");
    }
    if (corun__cli_resolve_backend(cli, backend, sizeof(backend), NULL) != 0) {
        return CORUN_EXIT_FAIL;
    }
    mk.cli = cli;
    mk.backend = backend;
    corun__cli_run_env(&o.env, &mk);
    o.backend = backend;
    corun__progress_begin(&pr, quiet, "corun experiment %s on %s", name, backend);
    o.log = log_line;
    o.log_ctx = &pr;
    o.env.progress = corun__progress_fraction;
    o.env.progress_ctx = &pr;
    res = corun__exp_run(name, &o, why, sizeof(why));
    if (res == NULL) {
        corun__progress_break(&pr);
        fprintf(stderr, "corun experiment: %s\n", why);
        return strstr(why, "unknown experiment") ? CORUN_EXIT_USAGE : CORUN_EXIT_FAIL;
    }
    corun__progress_end(&pr);
    corun__cli_print_json(res);
    return CORUN_EXIT_OK;
}
