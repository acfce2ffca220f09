/*
 * profile_store.h — what corun remembers about kernels between runs: the
 * measured durations of solo runs (FLEP §4.2: the duration model is trained
 * on them) and the compute and memory intensity of each kernel (Slate §III-B:
 * profiles decide which kernels may co-run).
 *
 * One file per user and host (setting PROFILE_PATH), a text file of one
 * record per line, documented in docs/policies.md:
 *
 *   corun-profiles 1
 *   run  BACKEND KERNEL GRID BLOCK SIZE SMEM DURATION_NS
 *   prof BACKEND KERNEL FLOP_FRAC BW_FRAC DURATION_NS SAMPLES
 *   end  RECORDS CHECKSUM
 *
 * KERNEL is percent-encoded (no blanks); numbers are written and read in the
 * C locale whatever the host program's locale; CHECKSUM is the FNV-1a 64-bit
 * hash of every byte before the `end` line. A file that does not parse, or
 * whose count or checksum is wrong (truncated, overwritten, hand-edited), is
 * corrupt: corun__pstore_load and writers rename it PATH.corrupt-<unix
 * time>, never read again, and the store starts afresh — the caller is told
 * so (libraries do not print). corun__pstore_read, for those that only show
 * the store, reports it and leaves it where it is.
 *
 * Writers never modify the file in place. Under an exclusive flock(2) of
 * PATH.lock a writer reads the current file, merges its records in, writes
 * PATH.tmp.<pid>, fsyncs it and renames it over PATH; readers need no lock,
 * since rename replaces the file atomically. So concurrent writers (several
 * programs at once) lose no record and a crash leaves either the old or the
 * new file, never half of one. Only a regular file is replaced or set aside
 * (common/output.h): a PATH that links to one is followed, a device or FIFO
 * is written in place and never moved.
 */
#ifndef CORUN_CORE_PROFILE_STORE_H
#define CORUN_CORE_PROFILE_STORE_H

#include <stddef.h>
#include <stdint.h>

/* At most this many runs are kept per kernel and backend, the newest. */
#define CORUN_PSTORE_MAX_RUNS 1000

/* One solo run of a kernel: its launch features and how long it took. */
typedef struct corun__prun {
    char backend[16];   /* "sim", "cuda": durations are only comparable within one */
    char kernel[64];
    double grid;        /* blocks in the grid, x*y*z */
    double block;       /* threads per block */
    double size;        /* the launch's input-size hint (corun_launch_attr.size_hint), 0 = none */
    double smem;        /* shared memory per block, bytes (static + dynamic) */
    double dur_ns;      /* first launch to completion seen by the host, alone on the GPU;
                           for a window of a loop at the kernel's own size, the window's
                           time per launch (fgqos's isolated rate) */
} corun__prun;

/* A kernel's intensity profile (Slate): achieved rates relative to the
 * device's peaks, measured in a solo run on the whole GPU. */
typedef struct corun__pprof {
    char backend[16];
    char kernel[64];
    double flop_frac;   /* achieved FLOP/s / peak FLOP/s */
    double bw_frac;     /* achieved DRAM bytes/s / peak bytes/s */
    double dur_ns;      /* duration of the profiled runs (mean) */
    uint32_t samples;   /* runs averaged into this profile */
} corun__pprof;

typedef struct corun__pstore {
    corun__prun *runs;
    size_t nruns, cap_runs;
    corun__pprof *profs;
    size_t nprofs, cap_profs;
} corun__pstore;

void corun__pstore_init(corun__pstore *ps);
void corun__pstore_free(corun__pstore *ps);
/* Appends a run (copied). CORUN_EINVAL for a name that is empty or a
 * duration that is not positive; CORUN_ENOMEM. */
int corun__pstore_add_run(corun__pstore *ps, const corun__prun *r);
/* Adds a profile: merged with the one of the same backend and kernel, if
 * any, as a mean weighted by samples. */
int corun__pstore_add_prof(corun__pstore *ps, const corun__pprof *p);
/* The profile of a kernel on a backend, or NULL. */
const corun__pprof *corun__pstore_find_prof(const corun__pstore *ps, const char *backend,
                                            const char *kernel);
/* Runs at a kernel's own size that its rate alone is taken from: three
 * measurements of three windows each. */
#define CORUN_PSTORE_OWN_LATEST 9

/* Block-tasks per ns of a kernel alone on a backend at exactly this grid
 * size and block size: the second-highest of the store's latest
 * CORUN_PSTORE_OWN_LATEST runs at that size, or their median where there
 * are three or fewer (fgqos's and HSM's isolated rate; `corun profile`
 * records three windows of the kernel alone in a loop of launches, what a
 * program that launches it back to back gets). High, since what disturbs
 * a measurement alone only slows it (on the H100 one in ~30 is 8-17 %
 * slow, several in a row), and the QoS goals sized from it must hold
 * against the kernel's real rate; not the highest, so that one window
 * timed fast does not set it. The latest, since a kernel's rate alone
 * moves on the GPU: three new measurements replace the old ones. 0 when
 * the store holds none (or memory ran out). */
double corun__pstore_own_rate(const corun__pstore *ps, const char *backend, const char *kernel,
                              double grid, double block);

/* The file's text, without the file (the readers and writers below use
 * these; so does the fuzz target fuzz/fuzz_profile.c). corun__pstore_parse
 * reads len bytes of text, which it cuts into words in place, into *ps
 * (initialised; emptied first), numbers in the C locale whatever the
 * program's. Returns CORUN_OK; CORUN_EPARSE with why in err ("line 7:
 * malformed record") for text that is not a whole, unaltered store, *ps
 * then empty; CORUN_ENOMEM. */
int corun__pstore_parse(char *text, size_t len, corun__pstore *ps, char *err, size_t err_len);
/* The store as the file's text, end line and checksum included;
 * corun__pstore_parse gives back the same records. *text is malloc'd, the
 * caller frees it (NULL on failure). Returns CORUN_OK or CORUN_ENOMEM. */
int corun__pstore_format(const corun__pstore *ps, char **text, size_t *len);

/* The store's file name from the PROFILE_PATH setting: "~/" is the user's
 * home directory ($HOME when it is an absolute path, as for a shell and
 * corun-cc's cache; else the password database's), "%h" the host name.
 * Returns CORUN_ENOENT for "" or "off" in any case (no store), and
 * CORUN_ERANGE (with why) if the result does not fit in len. */
int corun__pstore_path(const char *setting, char *out, size_t len, char *why, size_t why_len);

/* Reads the store at path into *ps (which it initialises). A missing file is
 * an empty store. A corrupt file is set aside as described above and *ps is
 * empty; `note` then says what happened (else note[0] = '\0'). Returns
 * CORUN_OK in both cases; CORUN_EIO (with why in note) only when the file
 * exists but cannot be read or set aside, CORUN_ENOMEM. */
int corun__pstore_load(const char *path, corun__pstore *ps, char *note, size_t note_len);

/* Reads the store at path into *ps (which it initialises) and changes
 * nothing on disk: no lock file, no folder, a corrupt file left where it is.
 * A missing file is an empty store. Returns CORUN_OK; CORUN_EPARSE for a
 * corrupt file, CORUN_EIO for one that cannot be read (note says why, naming
 * the file); CORUN_ENOMEM. */
int corun__pstore_read(const char *path, corun__pstore *ps, char *note, size_t note_len);

/* corun__pstore_path then corun__pstore_load; no store (PROFILE_PATH
 * "off", or no home directory) is an empty one. */
int corun__pstore_load_setting(const char *setting, corun__pstore *ps, char *note,
                               size_t note_len);

/* Merges the records of *add into the store at path, creating the file and
 * its directory if needed, under the writers' lock (see above). A run equal
 * in every field to one the store holds is not added again (a training
 * repeated with the same seed on the simulator). A corrupt file found on
 * the way is set aside (note says so). Returns CORUN_OK, CORUN_EIO with the
 * reason in note, or CORUN_ENOMEM. */
int corun__pstore_merge(const char *path, const corun__pstore *add, char *note, size_t note_len);

#endif
