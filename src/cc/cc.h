/*
 * cc.h — the internals of corun-cc, the source-to-source transformer that
 * turns an unmodified CUDA file into a corun one (docs/corun-cc.md).
 *
 * The pipeline, one file per step:
 *   thread.c    the threads libclang runs on: large stacks, crash reports
 *   reads.c     what a parse may read: regular files, within a limit
 *   parse.c     libclang on the file twice: host side and device side
 *   pch.c       clang's CUDA headers precompiled once per side and flag set
 *   source.c    the file itself: text, lines, raw tokens, macro ranges
 *   kernels.c   every __global__ declaration of the file, as text positions
 *   checks.c    what each kernel's code does: refusals, barrier kind
 *   pins.c      occupancy pins from a ptxas resource report
 *   launches.c  every host launch, as edits to the original text
 *   fnptr.c     launches through a function pointer: a run-time table
 *   emit.c      the text that replaces or follows each kernel
 *   headers.c   the same for the project's headers, written as copies
 *   edits.c     the edit list, applied to the original text
 *   main.c      the command line
 * Nothing here prints: problems are collected as diagnostics (diag.c) and
 * main.c prints them.
 */
#ifndef CORUN_CC_CC_H
#define CORUN_CC_CC_H

#include <clang-c/Index.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define CORUN_CC_VERSION "0.1.0"

#if defined(__GNUC__)
#define CORUN__CC_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CORUN__CC_PRINTF(a, b)
#endif

/* ------------------------------------------------------------------------ */
/* Growable text (buf.c)                                                    */
/* ------------------------------------------------------------------------ */

/* Always NUL-terminated once anything was added. Allocation failure sets
 * oom and turns later additions into no-ops, so callers check once, at the
 * end, instead of after every append. */
typedef struct corun__cc_buf {
    char *p;
    size_t len, cap;
    int oom;
} corun__cc_buf;

void corun__cc_buf_free(corun__cc_buf *b);
void corun__cc_buf_add(corun__cc_buf *b, const char *s, size_t n);
void corun__cc_buf_adds(corun__cc_buf *b, const char *s);
void corun__cc_buf_printf(corun__cc_buf *b, const char *fmt, ...) CORUN__CC_PRINTF(2, 3);
/* A heap copy of s[0, n), or NULL when out of memory. */
char *corun__cc_strndup(const char *s, size_t n);

/* ------------------------------------------------------------------------ */
/* Diagnostics (diag.c)                                                     */
/* ------------------------------------------------------------------------ */

typedef enum corun__cc_severity {
    CORUN_CC_ERROR,
    CORUN_CC_WARNING,
    CORUN_CC_NOTE
} corun__cc_severity;

typedef struct corun__cc_diag {
    corun__cc_severity sev;
    char *file;
    unsigned line, col;
    char *text; /* "<construct>: <reason>" */
} corun__cc_diag;

typedef struct corun__cc_diags {
    corun__cc_diag *v;
    size_t n, cap;
    size_t errors;
    int oom;
    int strict;      /* CORUN_CC_STRICT: a launch corun cannot take is an error */
    int demote;      /* recording for an included header: an error is a warning
                        (not under strict), since what it concerns stays as it is */
} corun__cc_diags;

/* Records "file:line:col: error|warning: corun-cc: <construct>: <reason>".
 * file may be NULL (no position). Duplicates (same position and text) are
 * recorded once: both sides of the parse often find the same problem. */
void corun__cc_diag_add(corun__cc_diags *d, corun__cc_severity sev, const char *file,
                        unsigned line, unsigned col, const char *construct, const char *fmt, ...)
    CORUN__CC_PRINTF(7, 8);
/* Same, at a libclang location (its spelling location). */
void corun__cc_diag_at(corun__cc_diags *d, corun__cc_severity sev, CXSourceLocation loc,
                       const char *construct, const char *fmt, ...) CORUN__CC_PRINTF(5, 6);
/* Sorts by file position, errors first at equal positions. */
void corun__cc_diags_sort(corun__cc_diags *d);
void corun__cc_diags_free(corun__cc_diags *d);

/* ------------------------------------------------------------------------ */
/* The main file (source.c)                                                 */
/* ------------------------------------------------------------------------ */

typedef struct corun__cc_tok {
    unsigned off, len;
    CXTokenKind kind;
} corun__cc_tok;

typedef struct corun__cc_range {
    unsigned start, end; /* byte offsets, end exclusive */
} corun__cc_range;

typedef struct corun__cc_define {
    corun__cc_range r;   /* from the macro's name to the end of its body */
    unsigned body;       /* offset where the replacement list starts */
    int function_like;
} corun__cc_define;

typedef struct corun__cc_src {
    const char *path;          /* as given on the command line */
    char *text;                /* contents, NUL-terminated */
    size_t len;
    unsigned *line_start;      /* offset of each line's first byte */
    size_t nlines;
    corun__cc_tok *tok;        /* raw tokens of the whole file, in order */
    size_t ntok;
    corun__cc_define *defines; /* #define directives of the file, in order */
    size_t ndefines;
    corun__cc_range *expansions; /* macro invocations in the file, in order */
    size_t nexpansions;
} corun__cc_src;

/* Reads the file: a regular file of at most limit bytes (0: no limit).
 * CORUN_EIO with a diagnostic when it cannot or may not. */
int corun__cc_src_read(corun__cc_src *s, const char *path, uint64_t limit, corun__cc_diags *d);
/* Records tokens and macro ranges from a parsed translation unit. */
int corun__cc_src_index(corun__cc_src *s, CXTranslationUnit tu, CXFile file);
void corun__cc_src_free(corun__cc_src *s);

/* 1-based line and column of a byte offset. */
unsigned corun__cc_src_line(const corun__cc_src *s, unsigned off);
unsigned corun__cc_src_col(const corun__cc_src *s, unsigned off);
/* Index of the token starting at off, or -1. */
long corun__cc_tok_at(const corun__cc_src *s, unsigned off);
/* Index of the first token starting at or after off (ntok if none). */
size_t corun__cc_tok_from(const corun__cc_src *s, unsigned off);
/* Whether token i is exactly the punctuation or identifier text t. */
int corun__cc_tok_is(const corun__cc_src *s, size_t i, const char *t);
/* Index of the token that closes the bracket opened by token i ("(", "[",
 * "{", "<<<", or the "<" of a template list, where ">>" closes two), or
 * ntok when it is not closed. */
size_t corun__cc_tok_match(const corun__cc_src *s, size_t i);
/* The #define whose body contains off, or NULL. */
const corun__cc_define *corun__cc_src_define_at(const corun__cc_src *s, unsigned off);
/* The end of the macro invocation that begins at off, or off itself. */
unsigned corun__cc_src_expansion_end(const corun__cc_src *s, unsigned off);

/* ------------------------------------------------------------------------ */
/* Threads that run libclang (thread.c)                                     */
/* ------------------------------------------------------------------------ */

/* Reserved for each such thread's stack: a 100,000-term expression takes
 * clang ~30 MiB of it; only the pages used are committed. */
#define CORUN_CC_STACK_DEFAULT ((size_t)512 << 20)
#define CORUN_CC_STACK_MIN ((size_t)1 << 20)
#define CORUN_CC_STACK_MAX ((size_t)64 << 30)

typedef struct corun__cc_thread {
    pthread_t th;
    char *map; /* guard zone, then the stack */
    size_t len;
    int slot;  /* in thread.c's table of guard zones */
    const char *name;
    void *(*fn)(void *);
    void *arg;
} corun__cc_thread;

/* Makes libclang run its calls on the calling thread, without its crash
 * recovery, and installs the handler that reports faults on corun-cc's
 * threads, naming file. Call first in main, before any other thread and
 * any libclang call. CORUN_OK, or an error when the environment or a
 * handler could not be set. */
int corun__cc_libclang_setup(const char *file);
/* Runs fn(arg) on a new thread called name (15 characters at most) with a
 * stack of stack bytes and a guard zone below it, and an alternate signal
 * stack of its own for the time fn runs. CORUN_ENOMEM when the stack
 * cannot be reserved or the thread started. */
int corun__cc_thread_start(corun__cc_thread *t, const char *name, size_t stack,
                           void *(*fn)(void *), void *arg);
/* Waits for the thread and releases its stack; fn's result. */
void *corun__cc_thread_join(corun__cc_thread *t);

/* ------------------------------------------------------------------------ */
/* What a parse may read (reads.c)                                          */
/* ------------------------------------------------------------------------ */

/* Read limit of one translation unit: far above any real one (the CUDA
 * headers are ~15 MiB), far below what exhausts a build machine. */
#define CORUN_CC_READ_LIMIT_DEFAULT ((uint64_t)256 << 20)
#define CORUN_CC_READS_KEPT 8

enum { CORUN_CC_READ_DIRECTORY, CORUN_CC_READ_NOT_REGULAR, CORUN_CC_READ_OVER_LIMIT };

typedef struct corun__cc_read_refusal {
    char *path;    /* as clang tried to open it */
    int why;       /* CORUN_CC_READ_*; a directory was let through */
    unsigned mode; /* its st_mode */
    uint64_t size; /* its size in bytes */
    int reported;  /* for the caller */
} corun__cc_read_refusal;

typedef struct corun__cc_reads {
    uint64_t limit; /* bytes one parse may open; 0: no limit */
    uint64_t used;  /* by the parse in progress */
    corun__cc_read_refusal v[CORUN_CC_READS_KEPT]; /* the first ones, once each */
    size_t n;
} corun__cc_reads;

/* Until _leave, files this thread opens for reading (libclang's, in a
 * parse) are checked against r, whose count of bytes starts again. */
void corun__cc_reads_enter(corun__cc_reads *r);
void corun__cc_reads_leave(void);
/* Whether this thread is between _enter and _leave. Async-signal-safe. */
int corun__cc_reads_inside(void);
/* Whether r refused a file (directories are let through). */
int corun__cc_reads_refused(const corun__cc_reads *r);
/* The entry of r whose path ends with name (a "'name' file not found" of
 * clang's), or NULL. */
corun__cc_read_refusal *corun__cc_reads_behind(corun__cc_reads *r, const char *name);
/* What the entry says, in words, into buf. */
void corun__cc_reads_say(const corun__cc_reads *r, const corun__cc_read_refusal *f, char *buf,
                         size_t cap);
/* "a FIFO", "a character device", ... for an st_mode. */
const char *corun__cc_file_kind(unsigned mode);
void corun__cc_reads_free(corun__cc_reads *r);

/* ------------------------------------------------------------------------ */
/* Parsing (parse.c)                                                        */
/* ------------------------------------------------------------------------ */

/* Where parse.c's in-memory files seem to lie. */
#define CORUN_CC_VIRTUAL_DIR "/corun-cc-virtual"

typedef struct corun__cc_opts {
    const char *in;
    const char *out;
    const char *cuda_path;     /* CUDA installation; default /usr/local/cuda */
    const char *line_name;     /* file name for #line; default: in */
    const char *resource_usage;/* ptxas --resource-usage report for pins */
    const char *pinned_usage;  /* the same of the pinned build: spilling pins go */
    int link_allocated;        /* the reports are of relocatable device code
                                  (-rdc): the device link sets the final
                                  registers, so every worker is capped */
    const char *header_dir;    /* where copies of the project's headers go; NULL: none */
    const char *header_tag;    /* in the copies' names, so that the copies of several
                                  inputs can share one include path; NULL: none */
    const char *deps;          /* where the list of project files read goes; NULL: none */
    const char **cflags;       /* -I -D -U -include -isystem -std flags for libclang */
    size_t ncflags;
    int check_only;            /* analyse and report, write nothing */
    const char *pch_dir;       /* folder of precompiled CUDA headers; NULL: none */
    size_t parse_stack;        /* stack of each thread that runs libclang */
    uint64_t read_limit;       /* bytes one translation unit may read; 0: no limit */
    int strict;                /* CORUN_CC_STRICT */
} corun__cc_opts;

typedef struct corun__cc_tu {
    CXIndex index;
    CXTranslationUnit tu;
    CXFile file;   /* the main file in this unit */
    int device;    /* parsed with --cuda-device-only */
    int pch;       /* CORUN_CC_PCH_*: how the CUDA headers came in */
} corun__cc_tu;

enum { CORUN_CC_PCH_NONE, CORUN_CC_PCH_LOADED, CORUN_CC_PCH_BUILT };

/* Precompiled CUDA headers (pch.c). args[0..n) are a side's libclang
 * arguments without the file's own -include flags; files[0..nfiles) the
 * virtual files they name, of which the header to precompile is the last.
 * Writes the path of the side's precompiled header into path: an existing
 * one (CORUN_CC_PCH_LOADED), one built now (CORUN_CC_PCH_BUILT), or none
 * when it could not be written (CORUN_CC_PCH_NONE; the caller parses
 * without). A build reads under reads. Safe against other corun-cc
 * processes doing the same. */
int corun__cc_pch_get(const char *dir, const char *const *args, int n,
                      struct CXUnsavedFile *files, unsigned nfiles, corun__cc_reads *reads,
                      char *path, size_t cap);
/* Whether a parse failed because the precompiled header did not fit
 * (headers changed on disk, a damaged file): the caller removes it and
 * parses without. */
int corun__cc_pch_rejected(CXTranslationUnit tu);

/* Parses opts->in for the host and for the device (in parallel). Every
 * error diagnostic of either side is recorded, and every file reads.c
 * refused; the caller refuses the file when there is one, because
 * libclang's KeepGoing drops what it could not parse. CORUN_EPARSE when
 * libclang could not produce a unit at all. Call on a thread of
 * corun__cc_thread_start: a parse takes stack in proportion to the code's
 * nesting, and the device side's thread gets opts->parse_stack too. */
int corun__cc_parse(const corun__cc_opts *o, corun__cc_tu *host, corun__cc_tu *dev,
                    corun__cc_diags *d);
void corun__cc_tu_free(corun__cc_tu *t);

/* Offset of loc in the unit's main file, or -1 when it lies elsewhere.
 * spelling: where the characters are (inside a #define for macro bodies);
 * otherwise where the macro was invoked. */
long corun__cc_off(const corun__cc_tu *t, CXSourceLocation loc, int spelling);
/* Same for a cursor's own location (its name, for declarations). */
long corun__cc_cursor_off(const corun__cc_tu *t, CXCursor c, int spelling);
/* A cursor's extent in the main file as invoked (macro invocations are
 * covered whole); -1 in start when it is not in the main file. */
void corun__cc_extent(const corun__cc_tu *t, const corun__cc_src *s, CXCursor c, long *start,
                      long *end);
/* The cursor's spelling, compared with a C string. */
int corun__cc_spelled(CXCursor c, const char *name);
/* The i-th child of c, or a null cursor. */
CXCursor corun__cc_child(CXCursor c, unsigned i);
unsigned corun__cc_nchildren(CXCursor c);
/* Whether c (a declaration) has a child attribute of this kind. */
int corun__cc_has_attr(CXCursor c, enum CXCursorKind kind);

/* ------------------------------------------------------------------------ */
/* Kernel declarations (kernels.c)                                          */
/* ------------------------------------------------------------------------ */

typedef struct corun__cc_param {
    unsigned start, end;  /* the declaration, default argument included */
    unsigned def;         /* where " = default" starts; == end when none */
    char *name;           /* given or invented (corun_pN / corun_tN) */
    long name_at;         /* where an invented name is inserted, or -1 */
    int pack;             /* a parameter pack (Ts... / Ts... xs) */
} corun__cc_param;

/* One declaration of a kernel in the source (or, with clone set, of a
 * __device__ function that gets a clone): where its parts lie in the text.
 * A kernel declared, then defined, has two of them, with one usr. */
typedef struct corun__cc_decl {
    char *name;
    char *usr;           /* identity shared by declarations and both sides */
    int is_template;
    int is_def;          /* this record is the definition */
    int first;           /* first declaration of the kernel in the file */
    int braced_c;        /* inside extern "C" { } */
    unsigned start;      /* first byte of the declaration (template, extern "C") */
    unsigned tmpl_end;   /* end of "template <...>", == start when not a template */
    unsigned name_off, name_end;
    unsigned lparen, rparen; /* the parameter list's parentheses */
    unsigned end;        /* the body's "{", or the ";" of a declaration */
    unsigned body_end;   /* after the body's "}" (definitions) */
    int launch_bounds;   /* declares __launch_bounds__ */
    corun__cc_param *params;
    size_t nparams;
    corun__cc_param *tparams;
    size_t ntparams;
    int clone;           /* a __device__ function cloned with blockIdx/gridDim
                            parameters (checks.c), not a kernel */
    CXCursor cursor;     /* device-side declaration */
    CXCursor body;       /* device-side body (definitions) */
    /* filled by checks.c */
    int shared;          /* barrier, shared memory or warp sync: CORUN_SHARED */
    int wrap_body;       /* the body declares its own blockIdx/gridDim */
    int refused;
    /* filled by pins.c */
    unsigned maxnreg[3]; /* pins of the worker, its ahead entry and its grid form
                            (the worker's occupancy pin, not its step below: a
                            grid block runs the plain kernel's body alone); 0: none */
    int occupancy_loss;  /* its worker lost its pin (it spilled): registered with
                            CORUN_KERNEL_ALLOW_OCCUPANCY_LOSS; set on the
                            definition and on the first declaration */
    /* filled by headers.c */
    int refused_elsewhere; /* refused because its definition, in another file of
                              the unit, was */
    int elsewhere;       /* a record of another file of the unit, lent to the
                            launches of this one: that file's copy holds its
                            launcher */
} corun__cc_decl;

typedef struct corun__cc_decls {
    corun__cc_decl *v;
    size_t n, cap;
} corun__cc_decls;

/* Every __global__ declaration in the main file of the device-side unit,
 * in file order. Kernels that cannot be rewritten are refused here (defined
 * by a macro, explicit specializations, block scope). */
int corun__cc_find_kernel_decls(const corun__cc_tu *dev, const corun__cc_src *s,
                                corun__cc_decls *ks, corun__cc_diags *d);
/* Describes function declaration fn (device side) like a kernel, appended
 * to list; *index is the new record, or -1 when fn is not in this file or
 * cannot be rewritten (then with a diagnostic). */
/* Refuses a kernel whose first declaration or definition the host-side
 * unit does not see at the same place (#if __CUDA_ARCH__ around it): its
 * worker and launcher would be missing from the host pass. */
int corun__cc_check_host_pass(const corun__cc_tu *host, const corun__cc_tu *dev,
                              corun__cc_decls *ks, corun__cc_diags *d);
int corun__cc_describe_function(const corun__cc_tu *dev, const corun__cc_src *s, CXCursor fn,
                                corun__cc_decls *list, corun__cc_diags *d, long *index);
/* The declaration record that holds the launcher for this USR: the first
 * declaration in the file; NULL when the kernel is not declared here. */
corun__cc_decl *corun__cc_decl_first(corun__cc_decls *ks, const char *usr);
/* The USR of a function or function template cursor, specializations
 * mapped to their template. Caller frees. */
char *corun__cc_decl_usr(CXCursor fn);
void corun__cc_decls_free(corun__cc_decls *ks);

/* ------------------------------------------------------------------------ */
/* Checks (checks.c)                                                        */
/* ------------------------------------------------------------------------ */

/* A call of a cloned function, to become f__corun(blockIdx, gridDim, ...). */
typedef struct corun__cc_callsite {
    unsigned name_end; /* "__corun" goes here */
    unsigned args_at;  /* just after "(": "blockIdx, gridDim" goes here */
    int has_args;
} corun__cc_callsite;

typedef struct corun__cc_callsites {
    corun__cc_callsite *v;
    size_t n, cap;
} corun__cc_callsites;

/* Analyses what each kernel definition's code does (the device side: the
 * kernel and everything it calls in the unit) and refuses what a worker
 * cannot run safely; sets shared and wrap_body. Functions of this file that
 * a kernel calls and that read blockIdx/gridDim (or call such functions)
 * are described in clones, and their calls from kernels and from other
 * clones in sites. */
int corun__cc_check_kernels(const corun__cc_tu *dev, const corun__cc_src *s,
                            corun__cc_decls *ks, corun__cc_decls *clones,
                            corun__cc_callsites *sites, corun__cc_diags *d);

/* ------------------------------------------------------------------------ */
/* Edits (edits.c)                                                          */
/* ------------------------------------------------------------------------ */

typedef struct corun__cc_edit {
    unsigned off, len; /* replaces [off, off + len) of the original */
    char *text;
    size_t seq;        /* insertion order, for edits at one offset */
} corun__cc_edit;

typedef struct corun__cc_edits {
    corun__cc_edit *v;
    size_t n, cap;
} corun__cc_edits;

/* Adds an edit. Identical edits are kept once (a macro body edited for
 * each of its expansions). CORUN_ENOMEM. */
int corun__cc_edit_add(corun__cc_edits *e, unsigned off, unsigned len, const char *text);
/* Writes the original text with every edit applied to out, behind the
 * prologue. CORUN_EINVAL, with a diagnostic, when two edits overlap. */
int corun__cc_edits_apply(corun__cc_edits *e, const corun__cc_src *s, const char *prologue,
                          corun__cc_buf *out, corun__cc_diags *d);
void corun__cc_edits_free(corun__cc_edits *e);

/* ------------------------------------------------------------------------ */
/* Launches (launches.c) and kernel text (emit.c)                            */
/* ------------------------------------------------------------------------ */

/* Finds every launch in the host-side unit (and device-side launches, which
 * are refused) and adds the edits that send host launches through corun. */
int corun__cc_rewrite_launches(const corun__cc_tu *host, const corun__cc_tu *dev,
                               const corun__cc_src *s, corun__cc_decls *ks,
                               corun__cc_edits *e, corun__cc_diags *d, size_t *nlaunches);

/* Launches through a function pointer (fnptr.c), for launches.c. The
 * kernels a pointer may hold are the file's non-template kernels of its
 * function type declared before the launch; the host side's kernels are
 * gathered on first use. */
typedef struct corun__cc_fnptr {
    const corun__cc_tu *t; /* the host side */
    const corun__cc_src *s;
    corun__cc_decls *ks;
    corun__cc_edits *e;
    corun__cc_diags *d;
    struct corun__cc_fnptr_kernel *v;
    size_t n, cap;
    int collected;
} corun__cc_fnptr;

/* call is a host <<<...>>> (cfg its configuration call) whose callee is
 * not a kernel's name. With kernels the pointer may hold: edits that send
 * it to ::corun::launch_through, which compares the pointer with each at
 * run time (*rewritten = 1), and a warning saying so; with none: a
 * warning, or an error under CORUN_CC_STRICT, and no edit. CORUN_OK or
 * CORUN_ENOMEM. */
int corun__cc_fnptr_launch(corun__cc_fnptr *f, CXCursor call, CXCursor cfg, int *rewritten);
/* The same for cudaLaunchKernel(arg0, ...), through
 * ::corun::launch_kernel_through; *taken = 0, and nothing said, when arg0
 * has no function pointer type under its casts (a const void * variable). */
int corun__cc_fnptr_launch_kernel(corun__cc_fnptr *f, CXCursor call, CXCursor arg0, int *taken,
                                  int *rewritten);
void corun__cc_fnptr_free(corun__cc_fnptr *f);

/* Adds the edits that turn each kernel into body, plain kernel, worker and
 * launcher, that follow explicit instantiations with the worker's, and that
 * add each clone (f__corun, taking blockIdx and gridDim first) after its
 * function, with the calls in sites rewritten.
 * line_name is the file name written in #line directives. */
int corun__cc_emit_kernels(const corun__cc_src *s, corun__cc_decls *ks,
                           const corun__cc_decls *clones, const corun__cc_callsites *sites,
                           const char *line_name, corun__cc_edits *e, corun__cc_diags *d);
/* Appends a C string literal for s (quotes and escapes) to b. */
void corun__cc_quote(corun__cc_buf *b, const char *s);

/* ------------------------------------------------------------------------ */
/* Occupancy pins (pins.c)                                                  */
/* ------------------------------------------------------------------------ */

/* Reads a ptxas --resource-usage report of a first transformed build and
 * sets maxnreg for every kernel whose worker would fit fewer blocks per SM
 * than its plain kernel at some block size (the most registers that keep
 * the plain kernel's blocks per SM at every block size); warns where a pin
 * cannot help. pinned_path, when not NULL, is the report of the build so
 * pinned: an entry that spills there (more than its plain kernel) is left
 * unpinned, with a warning, and a kernel whose worker is so left is marked
 * occupancy_loss. Runs before the launches are rewritten (a cudaLaunchKernel
 * passes the flag on). link: the reports are of relocatable device code,
 * whose final registers the device link sets (a call to another file's
 * function can raise them): every worker is capped at the most registers
 * that keep its plain kernel's blocks per SM, silently, whatever it used. */
int corun__cc_pins_from_report(const char *path, const char *pinned_path, int link,
                               const corun__cc_src *s, corun__cc_decls *ks, corun__cc_diags *d);

/* ------------------------------------------------------------------------ */
/* The project's headers (headers.c)                                        */
/* ------------------------------------------------------------------------ */

/* An #include, in the input or in a project header, of a project header. */
typedef struct corun__cc_include {
    long from;           /* the including header's index; -1: the input */
    long to;             /* the included header's index */
    unsigned name_start, name_end; /* its "name" or <name> in the including text */
} corun__cc_include;

/* A file the unit includes that is not a system header nor CUDA's. */
typedef struct corun__cc_header {
    char *name;          /* as clang names it: messages and #line */
    char *real;          /* its real path: one identity on both sides; the deps list */
    corun__cc_tu host, dev; /* the units seen from this file (views: never freed);
                               file NULL where that side does not include it */
    unsigned *at;        /* where it enters the unit: the offset of each #include, */
    size_t nat;          /* from the input's down to the one that names it */
    int kernels;         /* declares a kernel */
    const char *unreachable; /* why the build cannot be pointed at a copy, or NULL */
    CXSourceLocation why_at;
    int read;            /* src read and indexed */
    corun__cc_src src;
    corun__cc_decls ks, clones;
    corun__cc_callsites sites;
    corun__cc_edits e;
    size_t nlaunches;    /* launches rewritten in it */
    int copied;          /* written as a copy */
    char *copy;          /* the copy's file name in the header folder */
    corun__cc_buf out;   /* the copy's text */
} corun__cc_header;

typedef struct corun__cc_headers {
    corun__cc_header *v; /* in the unit's order */
    size_t n, cap;
    corun__cc_include *inc;
    size_t ninc, capinc;
} corun__cc_headers;

/* Lists the project headers of the two units and the #include directives
 * that name them, and which of them the build cannot be pointed at a copy
 * of (an #include through a macro, from a system header, by -include).
 * CORUN_ENOMEM. */
int corun__cc_headers_find(const corun__cc_opts *o, const corun__cc_tu *host,
                           const corun__cc_tu *dev, corun__cc_headers *hs);
/* The index of the header that f (of either unit) is, or -1. */
long corun__cc_headers_index(const corun__cc_headers *hs, CXFile f);
/* Appends the real path of every project header, one a line: the files
 * the output depends on besides the input. */
int corun__cc_headers_deps(const corun__cc_headers *hs, corun__cc_buf *out);
/* Finds and checks the kernels of each header (as kernels.c, checks.c and,
 * with o->resource_usage, pins.c do for the input), problems demoted to
 * warnings; a header the build cannot reach gets a warning instead. */
int corun__cc_headers_kernels(const corun__cc_opts *o, const corun__cc_tu *dev,
                              corun__cc_headers *hs, corun__cc_diags *d);
/* Ties the records of one kernel in several files (ks: the input's): a
 * definition gives every declaration its kind and its refusal (marked
 * refused_elsewhere), and the launcher (first) is only at the first
 * declaration in the unit. */
int corun__cc_headers_link(corun__cc_headers *hs, corun__cc_decls *ks);
/* The records the launches of one file may use (self: the header's index,
 * -1 for the input, whose records are ks): copies, in out->v (caller
 * frees out->v only), of its own and of the other files' records (marked
 * elsewhere), refused ones left out, so that a launch of a kernel left
 * plain is said. The input keeps its own refusals: they are errors. */
int corun__cc_headers_visible(const corun__cc_headers *hs, const corun__cc_decls *ks, long self,
                              corun__cc_decls *out);
/* Rewrites the launches in each header, problems demoted to warnings. */
int corun__cc_headers_launches(const corun__cc_opts *o, corun__cc_headers *hs,
                               const corun__cc_decls *ks, corun__cc_diags *d);
/* Emits the headers' kernels, chooses the headers to copy (those changed
 * and those including a copy), points the #include directives of the
 * input (edits added to main_e) and of the copies at the copies, and
 * writes each copy's text. */
int corun__cc_headers_emit(const corun__cc_opts *o, corun__cc_headers *hs,
                           corun__cc_edits *main_e, corun__cc_diags *d);
/* Writes the copies into dir (created when missing), each replaced whole
 * (common/output.h). CORUN_EIO, with why, when one cannot be. */
int corun__cc_headers_write(const corun__cc_headers *hs, const char *dir, char *why, size_t cap);
/* How many headers are copied. */
size_t corun__cc_headers_copied(const corun__cc_headers *hs);
void corun__cc_headers_free(corun__cc_headers *hs);

#endif /* CORUN_CC_CC_H */
