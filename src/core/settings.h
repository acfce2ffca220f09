/*
 * settings.h — every corun setting in one table.
 *
 * X(NAME, field, TYPE, default, min, max, allowed, help)
 *   NAME    the environment variable is CORUN_<NAME>; the CLI flag is
 *           --set field=value
 *   TYPE    STR (allowed: comma-separated values, or "" for any; min: the
 *           fewest characters), UINT (whole numbers in decimal digits),
 *           DBL (decimal numbers: no hex, inf or nan)
 * Settings are read once (corun__settings_load_env) into a corun__settings
 * value that is passed down; nothing else calls getenv for a CORUN_*
 * variable. Code that needs one setting and no context (corun-cc, the
 * launch shim through corun_setting_get, corun-nvcc through `corun-cc
 * --setting NAME`) reads it with corun__settings_read_one. STR values hold
 * up to CORUN_SETTING_STR_MAX - 1 characters (paths need more than names).
 */
#ifndef CORUN_CORE_SETTINGS_H
#define CORUN_CORE_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

#define CORUN_SETTING_STR_MAX 256

#define CORUN_SETTINGS(X)                                                                        \
    X(BACKEND, backend, STR, "auto", 0, 0, "auto,cuda,sim",                                      \
      "GPU backend: auto picks cuda when a GPU is usable, else sim (a usable GPU whose "         \
      "backend cannot be set up is an error)")                                                   \
    X(POLICY, policy, STR, "smguard", 0, 0, "mps,priority,smguard,manual,flep-hpf,flep-ffs,slate,green,fgqos,hsm-fair,hsm-qos", \
      "scheduling policy of the in-process scheduler (corun policies describes them)")           \
    X(LOG_LEVEL, log_level, STR, "warn", 0, 0, "error,warn,info,debug",                          \
      "how much the command line logs")                                                          \
    X(RESERVE_CAPSM, reserve_capsm, UINT, "8", 0, 4096, "",                                      \
      "smguard: CapSMs reserved for latency-sensitive kernels; batch quota is the rest")         \
    X(SMGUARD_BIND, smguard_bind, UINT, "1", 0, 2, "",                                           \
      "smguard: 1 runs batch kernels only on SMs outside the LS floor (the reservation, or "     \
      "more by SMGUARD_LS_CAP) and they hold those SMs through their tails, so LS kernels get "  \
      "whole SMs; 2 splits the GPU into an LS "                                                  \
      "partition of GREEN_LS_SMS SMs and the rest (CUDA green contexts), LS kernels in the "    \
      "first, batch kernels always in the second; 0 keeps the paper's logical "                \
      "CapSMs (workers anywhere)")                                                               \
    X(SMGUARD_LS_CAP, smguard_ls_cap, DBL, "0.5", 0, 1, "",                                      \
      "smguard: an LS kernel gets the CapSMs its grid fills in one wave, at least the "          \
      "reservation and at most this share of the GPU, and while LS work goes on that much "     \
      "stays free for the next one (size by need); 0 = the reservation only, as in the paper")  \
    X(CHUNK_BUDGET_US, chunk_budget_us, DBL, "10", 0.5, 1e6, "",                                 \
      "latency budget of one chunk of block-tasks, in microseconds (docs/decisions/0001)")      \
    X(CHUNK_MAX, chunk_max, UINT, "1024", 1, 1048576, "",                                        \
      "most block-tasks a worker claims at once")                                                \
    X(AHEAD, ahead, UINT, "1", 0, 2, "",                                                         \
      "kernels with an ahead entry (CORUN_SHARED): 1 runs them through it where their last "     \
      "run's tasks made chunks of three or fewer (a claim per task, made a task ahead) and, "   \
      "once both entries have run, where it ran faster per task (docs/decisions/0020); 0 "      \
      "never; 2 always")                                                                        \
    X(PLAIN_BELOW_US, plain_below_us, DBL, "15", 0, 1e6, "",                                    \
      "while latency-sensitive work runs (an LS-class or priority > 0 launch in the last "      \
      "second, in this program or, on a GPU corund coordinates, another), a stream-ordered "   \
      "launch of a kernel whose last run took less than this "                                  \
      "(predicted from its task time) runs as the plain kernel: over before a halt could act, " \
      "so not preemptible; 0 never")                                                             \
    X(RELAY, relay, UINT, "1", 0, 1, "",                                                         \
      "cuda: 1 gives a stream-ordered kernel's grid a relay block (one block more, or one "      \
      "worker fewer in a grid of 64 waves or more that fills the GPU; none otherwise), which "   \
      "copies signals from host memory: a halt or narrowing lands ~2 us after it is sent "       \
      "instead of ~8-10 (docs/decisions/0047); 0 never")                                          \
    X(GREEN_LS_SMS, green_ls_sms, UINT, "0", 0, 4096, "",                                       \
      "green: SMs of the partition for LS kernels (class ls or priority > 0), rounded up to "   \
      "what the hardware splits (H100: multiples of 8); the rest is the batch partition; 0 = "  \
      "a scenario's LS need as smguard sizes it, else RESERVE_CAPSM")                           \
    X(PLAIN_BATCH_BELOW_US, plain_batch_below_us, DBL, "100", 0, 1e6, "",                       \
      "the same line while only batch work runs: the longest a preemption may wait for a "      \
      "plain kernel to end when no LS work is waiting (docs/decisions/0019, 0043); 0 never")    \
    X(PLAIN_ONE_WAVE, plain_one_wave, UINT, "1", 0, 1, "",                                       \
      "1: while no LS work runs (as for the plain line), a stream-ordered batch launch of "      \
      "priority 0, with no QoS goal and no job handle, whose blocks all fit at once in its "    \
      "allotment on the whole GPU runs as the plain kernel: as workers each would run its own " \
      "task whatever a halt says, so it gains nothing (docs/decisions/0048); 0 never")          \
    X(GRID_TASK_US, grid_task_us, DBL, "100", 0, 1e6, "",                                      \
      "a stream-ordered batch launch (no QoS goal, no LS work near, a job handle or not) of "   \
      "more than one wave on the whole GPU runs in the grid form, a block per task that "       \
      "claims its task as it starts (preemptible at block starts), where the kernel's last "    \
      "measured block-task took at least this many microseconds: the hardware then schedules "  \
      "its blocks, and no worker waits on a claim between tasks (docs/decisions/0049); 0 = "   \
      "every such launch once one has measured its task time")                                  \
    X(GRID, grid, UINT, "1", 0, 1, "",                                                           \
      "1: the grid form where GRID_TASK_US allows it; 0 never")                                 \
    X(REPORT_POLL_US, report_poll_us, DBL, "200", 10, 1e6, "",                                   \
      "cuda: how often the scheduler reads what running stream-ordered kernels reported "       \
      "(finished, held); accounting and policies only, never a stream's progress")              \
    X(COMPLETION_SPIN_US, completion_spin_us, DBL, "1000", 0, 1e7, "",                          \
      "cuda: how long a scheduled launch's event is polled (by the scheduler's thread when it "   \
      "launched it, else by a completion waiter) before a waiter sleeps in the driver, whose "  \
      "wake-up sees a completion tens of us late; 0 never polls")                               \
    X(SEED, seed, UINT, "1", 0, 4294967295.0, "", "random seed of simulations and scenarios")    \
    X(SIM_SIGNAL_US, sim_signal_us, DBL, "8", 0, 1e6, "",                                        \
      "sim: delay from a host signal to the workers seeing it (H100: 10-12 us incl. exit)")      \
    X(SIM_RELAY_US, sim_relay_us, DBL, "2.5", 0, 1e6, "",                                        \
      "sim: the same delay for a grid with a relay block (RELAY; H200: ~2.3 us)")                \
    X(SIM_LAUNCH_US, sim_launch_us, DBL, "17", 0, 1e6, "",                                       \
      "sim: delay from a launch call to its blocks reaching the dispatcher (H100, busy GPU: "    \
      "17-18 us from an LS request to its kernel's start)")                                      \
    X(SIM_LAUNCH_JITTER_US, sim_launch_jitter_us, DBL, "14", 0, 1e6, "",                         \
      "sim: mean of the random (exponential) delay added to each launch; launches still "       \
      "arrive in call order (H200: an LS request alone waits p50 ~35 us, p99 ~90 us)")           \
    X(SIM_IDLE_LAUNCH_US, sim_idle_launch_us, DBL, "8", 0, 1e6, "",                              \
      "sim: delay added to a launch that finds the GPU idle (nothing resident or queued) for "   \
      "SIM_IDLE_AFTER_US")                                                                       \
    X(SIM_IDLE_AFTER_US, sim_idle_after_us, DBL, "100", 0, 1e6, "",                              \
      "sim: how long the GPU must have been idle for SIM_IDLE_LAUNCH_US to apply")              \
    X(SIM_NOTIFY_US, sim_notify_us, DBL, "5", 0, 1e6, "",                                        \
      "sim: delay from a launch's last block leaving to the host knowing (H200: an LS kernel "   \
      "of 16 us on the GPU is seen ending 20-22 us after it starts)")                           \
    X(SIM_WAKE_US, sim_wake_us, DBL, "0", 0, 1e6, "",                                            \
      "sim: how late the host wakes for a deadline with nothing to report first (a timer)")      \
    X(SIM_STREAM_GAP_US, sim_stream_gap_us, DBL, "2.3", 0, 1e6, "",                              \
      "sim: delay from one kernel's end to the next one of its stream reaching the dispatcher "  \
      "(H100: ~2.3 us)")                                                                         \
    X(SIM_CLAIM_NS, sim_claim_ns, DBL, "800", 0, 1e9, "",                                        \
      "sim: cost of one chunk claim (atomic on the counter plus a barrier)")                     \
    X(SIM_BLOCK_SPEEDUP, sim_block_speedup, DBL, "4", 1, 64, "",                                \
      "sim: most a block's compute runs faster than in its kernel alone at full occupancy, "     \
      "when its SM has issue to spare (H200: ~4, the demo's LS kernel one block per SM "         \
      "against eight)")                                                                          \
    X(SIM_MAX_STEPS, sim_max_steps, UINT, "1000000000", 0, 1e15, "",                            \
      "sim: most steps (block-tasks plus workers started) one run or profiling may take, "       \
      "estimated before it starts (some ten million a second); 0 = no limit")                   \
    X(PROFILE_PATH, profile_path, STR, "~/.local/share/corun/profiles-%h.txt", 1, 0, "",         \
      "kernel profile store (durations, intensities); ~ = home, %h = host; 'off' (any case) = "  \
      "none")                                                                                    \
    X(PROFILE_TRAIN_RUNS, profile_train_runs, UINT, "100", 5, 100000, "",                        \
      "solo runs per kernel when training duration models (FLEP: 100 random inputs)")            \
    X(PROFILE_COUNTERS, profile_counters, UINT, "0", 0, 1, "",                                   \
      "cuda: Slate's kernel rates from counted operations (0) or CUPTI hardware counters (1); " \
      "the scenarios' real kernels have rates only from the counters")                           \
    X(PROFILE_HOLDOUT, profile_holdout, DBL, "0.2", 0, 0.9, "",                                  \
      "share of a kernel's recorded runs held out to measure the duration model's error")       \
    X(RIDGE_LAMBDA, ridge_lambda, DBL, "0.001", 0, 1e6, "",                                      \
      "duration model: L2 penalty of the ridge regression, on standardized features")           \
    X(PREEMPT_OVERHEAD_US, preempt_overhead_us, DBL, "50", 0, 1e6, "",                           \
      "flep: preemption overhead assumed for a kernel until one of its preemptions is measured") \
    X(HPF_SPATIAL, hpf_spatial, UINT, "1", 0, 1, "",                                             \
      "flep-hpf: 1 = a preempting kernel that cannot fill the GPU takes only the SMs it needs")  \
    X(FFS_MAX_OVERHEAD, ffs_max_overhead, DBL, "0.10", 0.001, 0.9, "",                           \
      "flep-ffs: most throughput to lose to preemptions; sets the epoch T")                      \
    X(FFS_MIN_EPOCH_US, ffs_min_epoch_us, DBL, "100", 1, 1e7, "",                                \
      "flep-ffs: shortest epoch unit T, whatever the measured overheads")                        \
    X(FFS_GRACE_US, ffs_grace_us, DBL, "20", 0, 1e6, "",                                         \
      "flep-ffs: how long a kernel's epoch waits at least for its program's next launch "       \
      "(longer where its recent gaps were, up to 5x)")                                           \
    X(FGQOS_SCHEME, fgqos_scheme, STR, "rollover", 0, 0, "naive,history,elastic,rollover,spart", \
      "fgqos: how quotas follow the epochs (docs/policies.md): naive, history (alpha), "        \
      "elastic (epochs end once every quota is used), rollover (QoS kernels keep unused "       \
      "quota), or spart (no quotas: a spatial split hill-climbed by SMs, the baseline)")         \
    X(FGQOS_EPOCH_US, fgqos_epoch_us, DBL, "1000", 10, 1e7, "",                                  \
      "fgqos: epoch length; each kernel's quota of block-tasks is set per epoch")               \
    X(FGQOS_MARGIN, fgqos_margin, DBL, "0.10", 0, 0.5, "",                                        \
      "fgqos: QoS quotas aim this fraction above the goal (corun's quotas are met to the "      \
      "task, where the paper's counters overshoot, and a kernel's rate alone moves by "          \
      "several per cent from run to run)")                                                       \
    X(FGQOS_NONQOS_INIT, fgqos_nonqos_init, DBL, "0.05", 0.001, 1, "",                            \
      "fgqos: a non-QoS kernel's first rate and its floor, as a fraction of its isolated rate " \
      "(the paper's small initial IPC_epoch)")                                                   \
    X(HSM_EPOCH_US, hsm_epoch_us, DBL, "1000", 10, 1e7, "",                                      \
      "hsm-fair, hsm-qos: epoch length; each epoch's normalized progress decides the next "     \
      "SM partition")                                                                            \
    X(HSM_FAIR_THRESHOLD, hsm_fair_threshold, DBL, "0.9", 0, 1, "",                               \
      "hsm-fair: repartition when fairness (min NP / max NP) falls below this; 0 keeps the "    \
      "even partition (the paper's baseline)")                                                   \
    X(HSM_QOS_TARGET, hsm_qos_target, DBL, "0.8", 0.01, 1, "",                                    \
      "hsm-qos: the normalized progress the high-priority application is held at")               \
    X(HSM_QOS_UPPER, hsm_qos_upper, DBL, "0.9", 0.01, 1, "",                                      \
      "hsm-qos: above this normalized progress the high-priority application gives SMs back")   \
    X(HSM_QOS_FIXED, hsm_qos_fixed, DBL, "0", 0, 1, "",                                           \
      "hsm-qos: if > 0, the high-priority application's fixed share of the SMs and no "         \
      "repartitioning (the paper's proportional baseline, 0.8)")                                 \
    X(SLATE_COMPUTE_MED, slate_compute_med, DBL, "0.01", 0, 1, "",                               \
      "slate: achieved FLOP/s over peak from which compute intensity is Medium (Table II)")      \
    X(SLATE_COMPUTE_HIGH, slate_compute_high, DBL, "0.10", 0, 1, "",                             \
      "slate: achieved FLOP/s over peak from which compute intensity is High (Table II)")        \
    X(SLATE_MEM_MED, slate_mem_med, DBL, "0.30", 0, 2, "",                                       \
      "slate: achieved DRAM bandwidth over peak from which memory intensity is Medium")          \
    X(SLATE_MEM_HIGH, slate_mem_high, DBL, "0.90", 0, 2, "",                                     \
      "slate: achieved DRAM bandwidth over peak from which memory intensity is High")            \
    X(SCENARIOS, scenarios, STR, "", 0, 0, "",                                                   \
      "folder searched for a scenario (--scenario NAME) after the path as given and before "     \
      "the installed ones; empty = none")                                                        \
    X(CACHE, cache, STR, "", 0, 0, "",                                                           \
      "corun-nvcc and corun-cc: folder of transformed files and precompiled CUDA headers; "     \
      "empty = ${XDG_CACHE_HOME:-~/.cache}/corun")                                               \
    X(LAUNCH_STATS, launch_stats, STR, "", 0, 0, "",                                             \
      "transformed programs: file each appends one JSON line to at exit (launches through "      \
      "corun, plain ones, the first plain one's reason); empty = none")                          \
    X(LAUNCH_CLASS, launch_class, STR, "batch", 0, 0, "batch,ls",                                \
      "transformed programs: the class of their kernel launches (corun_ctx_launch_attr)")       \
    X(LAUNCH_CAPSM, launch_capsm, UINT, "0", 0, 4096, "",                                        \
      "transformed programs: CapSMs their launches ask for, a reservation (ls) or a quota "      \
      "(batch); 0 = the policy's default")                                                       \
    X(LAUNCH_PRIORITY, launch_priority, UINT, "0", 0, 1000, "",                                  \
      "transformed programs: the priority of their kernel launches (larger is more urgent; "     \
      "corun run --priority sets it)")                                                           \
    X(LAUNCH_WEIGHT, launch_weight, UINT, "0", 0, 1000000, "",                                   \
      "transformed programs: the fair-share weight of their kernel launches; 0 = 1 (corun run "  \
      "--weight sets it)")                                                                       \
    X(LAUNCH_QOS, launch_qos, DBL, "0", 0, 1, "",                                                \
      "transformed programs: the QoS goal of their kernel launches under fgqos, a fraction of " \
      "the kernel's isolated rate; 0 = none (corun run --qos sets it)")                         \
    X(DEVICE, device, STR, "auto", 1, 0, "",                                                     \
      "cuda: the GPU corun runs on, an ordinal as CUDA numbers them (after "                     \
      "CUDA_VISIBLE_DEVICES); auto = the GPU of the calling thread's current CUDA context "     \
      "(a program's, once it has used CUDA), else 0. Launches on another GPU run plain")         \
    X(DAEMON, daemon, STR, "auto", 1, 0, "",                                                     \
      "libcorun: auto uses corund where DAEMON_SOCKET accepts a connection and else schedules "  \
      "in-process; off always in-process; an absolute path: that daemon's socket, an error "     \
      "if it cannot be reached (docs/daemon.md)")                                                \
    X(DAEMON_SOCKET, daemon_socket, STR, "/run/corun/corund.sock", 1, 0, "",                     \
      "the Unix socket corund listens on and DAEMON=auto connects to")                           \
    X(DAEMON_GROUP, daemon_group, STR, "", 0, 0, "",                                             \
      "corund: the group whose members may connect (the socket is mode 0660); empty = the "     \
      "daemon's own group")                                                                      \
    X(NVCC_PIN, nvcc_pin, UINT, "1", 0, 1, "",                                                   \
      "corun-nvcc: 1 compiles each transformed file once for the device to measure registers, "  \
      "pins workers that would lose occupancy and caps those at the last register of their "    \
      "occupancy step one below it (docs/corun-cc.md); 0 = off")                                 \
    X(CC_STRICT, cc_strict, UINT, "0", 0, 1, "",                                                 \
      "corun-cc: 1 refuses a launch it would leave unchanged, not through corun (a kernel "      \
      "defined in another file); 0 warns")                                                       \
    X(NVCC_ON_REFUSAL, nvcc_on_refusal, STR, "fail", 0, 0, "fail,plain",                         \
      "corun-nvcc: a file corun-cc refuses fails the build (fail) or is compiled unchanged, "    \
      "with a warning (plain)")                                                                  \
    X(NVCC_KEEP, nvcc_keep, STR, "", 0, 0, "",                                                   \
      "corun-nvcc: folder that receives a copy of each transformed file, as NAME.cu (to "        \
      "compile it where libclang is missing); empty = none")                                     \
    X(NVCC_EXTRA_LIBS, nvcc_extra_libs, STR, "", 0, 0, "",                                       \
      "corun-nvcc: more link arguments, split at spaces (tests: a stub of libcorun)")            \
    X(NVCC_VERBOSE, nvcc_verbose, UINT, "0", 0, 1, "", "corun-nvcc: 1 prints what it runs")

typedef struct corun__settings {
#define CORUN__SET_FIELD_STR(f) char f[CORUN_SETTING_STR_MAX];
#define CORUN__SET_FIELD_UINT(f) uint64_t f;
#define CORUN__SET_FIELD_DBL(f) double f;
#define CORUN__SET_FIELD(N, f, T, d, lo, hi, allowed, help) CORUN__SET_FIELD_##T(f)
    CORUN_SETTINGS(CORUN__SET_FIELD)
#undef CORUN__SET_FIELD
    uint64_t given[2]; /* bit i: setting i came from its variable or --set, not its default */
} corun__settings;

typedef enum corun__setting_type {
    CORUN_SETTING_STR,
    CORUN_SETTING_UINT,
    CORUN_SETTING_DBL
} corun__setting_type;

typedef struct corun__setting_info {
    const char *env;     /* CORUN_BACKEND */
    const char *name;    /* backend */
    corun__setting_type type;
    const char *def;
    double min, max;     /* numeric bounds */
    const char *allowed; /* STR: comma-separated choices, "" = any */
    const char *help;
    size_t offset;       /* of the field in corun__settings */
} corun__setting_info;

/* The chunk latency budget in nanoseconds, as the control block and the
 * entry choice (corun__entry_decide) take it. */
static inline uint32_t corun__budget_ns(const corun__settings *s)
{
    return (uint32_t)(s->chunk_budget_us * 1e3);
}

void corun__settings_default(corun__settings *s);
/* Reads every CORUN_<NAME> variable that is set. On a bad value returns
 * CORUN_EINVAL with a message naming the variable; *s is then unchanged. */
int corun__settings_load_env(corun__settings *s, char *why, size_t why_len);
/* Sets one setting by name ("chunk_budget_us") or variable ("CORUN_CHUNK_BUDGET_US"). */
int corun__settings_set(corun__settings *s, const char *name, const char *value, char *why,
                        size_t why_len);
/* Sets one setting from "name=value" (corun --set, corun_test_ctx_create). */
int corun__settings_assign(corun__settings *s, const char *assignment, char *why, size_t why_len);
size_t corun__settings_count(void);
const corun__setting_info *corun__settings_info(size_t i);
/* The setting named by field ("cache") or variable ("CORUN_CACHE"), or NULL. */
const corun__setting_info *corun__settings_find(const char *name);
/* The current value of setting i as text (whole numbers in digits). */
void corun__settings_format(const corun__settings *s, size_t i, char *buf, size_t len);
/* What setting i takes, as text: "[1, 1048576]", "auto,cuda,sim", "not
 * empty" or "-" (any text). */
void corun__settings_bounds(size_t i, char *buf, size_t len);
/* The number parsers of the settings, for options that are not settings:
 * a whole number in decimal digits only ("12"; not "+12", " 12", "0x0c"),
 * and a finite decimal number ("1e3", "-0.5"; not hex, inf, nan or with
 * blanks). Return 0, or -1 (and leave *out) if text is not one. */
int corun__parse_whole(const char *text, uint64_t *out);
int corun__parse_decimal(const char *text, double *out);
/* 1 if the setting named ("reserve_capsm" or "CORUN_RESERVE_CAPSM") was
 * given, by its variable or corun__settings_set, rather than defaulted. */
int corun__settings_given(const corun__settings *s, const char *name);
/* One setting as a program that needs no other sees it: its variable if
 * set, checked like corun__settings_load_env does, else its default,
 * written to buf as text. Returns CORUN_ENOENT for an unknown name,
 * CORUN_EINVAL for a bad value (why says which), CORUN_ERANGE if buf is too
 * short; buf is written only on success. */
int corun__settings_read_one(const char *name, char *buf, size_t len, char *why, size_t why_len);

#endif
