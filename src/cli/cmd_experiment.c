/*
 * cmd_experiment.c — `corun experiment`: the FLEP and Slate evaluations
 * (scenario/experiments.h) on the simulator or the GPU, as one JSON object.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "scenario/experiments.h"

/* Progress lines carry the seconds since the experiment started, so a
 * slow run set on a GPU shows where the time went. */
static void log_line(void *ctx, const char *line)
{
    static double t0;
    double now = corun__cli_now_s();

    if (t0 == 0) {
        t0 = now;
    }
    fprintf(stderr, "  [%6.1f s] %s\n", now - t0, line);
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
            "  all      every one of them, as members of one object\n"
            "\n"
            "Kernel profiles the policies need are recorded first in the profile store\n"
            "(CORUN_PROFILE_PATH). Progress goes to stderr, one line per run set.\n"
            "\n"
            "options:\n"
            "  --backend B       sim (default) or cuda\n"
            "  --dir DIR         where the scenario files are (default: the first scenario folder found)\n"
            "  --max-sets N      only the first N pairs (or triplets) of each, in [0, 1000] (0 = all)\n"
            "  --duration-ms MS  arrival window of the loop experiments (ffs, slate), in (0, 1e7]\n"
            "  -q, --quiet       no progress\n"
            "\n"
            "The scenario folders are looked for as for corun sim --scenario NAME.\n");
}

int corun__cmd_experiment(corun__cli *cli, int argc, char **argv)
{
    corun__exp_opts o;
    corun__cli_maker mk;
    const char *name = NULL;
    char backend[16] = "sim", why[1024] = "", dir[4096];
    unsigned long long v;
    const char *who = "corun experiment";
    json_t *res;
    int i, quiet = 0;

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
            if (strcmp(val, "sim") != 0 && strcmp(val, "cuda") != 0) {
                fprintf(stderr, "%s: option --backend takes sim or cuda (got '%s')\n", who, val);
                return CORUN_EXIT_USAGE;
            }
            snprintf(backend, sizeof(backend), "%s", val);
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
    mk.cli = cli;
    mk.backend = backend;
    corun__cli_run_env(&o.env, &mk);
    o.backend = backend;
    if (!quiet) {
        o.log = log_line;
        fprintf(stderr, "corun experiment %s on %s\n", name, backend);
    }
    res = corun__exp_run(name, &o, why, sizeof(why));
    if (res == NULL) {
        fprintf(stderr, "corun experiment: %s\n", why);
        return strstr(why, "unknown experiment") ? CORUN_EXIT_USAGE : CORUN_EXIT_FAIL;
    }
    corun__cli_print_json(res);
    return CORUN_EXIT_OK;
}
