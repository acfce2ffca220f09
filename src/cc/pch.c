/*
 * pch.c — clang's CUDA headers, precompiled once per side and flag set.
 *
 * Most of a parse is not the file: clang includes its CUDA runtime wrapper
 * (cuda_runtime.h and the C++ headers under it) before the first line, and
 * that part is the same for every file parsed with the same flags. It is
 * parsed once into a precompiled header in the cache folder and loaded by
 * later parses (about 0.45 s -> 0.12 s a side on the 5,000-line benchmark).
 * The name is a hash of everything that shapes it (libclang's version,
 * corun-cc's, the arguments, the virtual files); clang itself checks on
 * load that no header it read has changed since, and a header it rejects
 * is removed and the file parsed without (parse.c).
 *
 * Files are written under a temporary name and renamed (over a regular file
 * only: common/output.h), so parallel builds never read half a file; the
 * folder keeps the CORUN__CC_PCH_KEEP most recently used (each is ~7 MB).
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cc/cc.h"
#include "common/dirs.h"
#include "common/output.h"

#define CORUN__CC_PCH_KEEP 32

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ b[i]) * 1099511628211ull;
    }
    return (h ^ 0x100u) * 1099511628211ull; /* ends the field: ("ab","c") != ("a","bc") */
}

static uint64_t key_of(const char *const *args, int n, const struct CXUnsavedFile *files,
                       unsigned nfiles)
{
    uint64_t h = 14695981039346656037ull;
    CXString v = clang_getClangVersion();
    const char *vs = clang_getCString(v);
    h = fnv(h, vs, strlen(vs));
    clang_disposeString(v);
    h = fnv(h, CORUN_CC_VERSION, sizeof(CORUN_CC_VERSION) - 1);
    for (int i = 0; i < n; i++) {
        h = fnv(h, args[i], strlen(args[i]));
    }
    for (unsigned i = 0; i < nfiles; i++) {
        h = fnv(h, files[i].Filename, strlen(files[i].Filename));
        h = fnv(h, files[i].Contents, files[i].Length);
    }
    return h;
}

/* dir/name into buf; 0 when it does not fit. */
static int in_dir(char *buf, size_t cap, const char *dir, const char *name)
{
    int n = snprintf(buf, cap, "%s/%s", dir, name);
    return n > 0 && (size_t)n < cap;
}

/* Removes the least recently used headers (and markers) beyond
 * CORUN__CC_PCH_KEEP. */
static void prune(const char *dir)
{
    struct { char name[64]; time_t t; } v[4 * CORUN__CC_PCH_KEEP];
    size_t n = 0;
    DIR *d = opendir(dir);
    if (d == NULL) {
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < sizeof(v) / sizeof(v[0])) {
        size_t len = strlen(e->d_name);
        char path[PATH_MAX];
        struct stat st;
        int pch = len > 4 && strcmp(e->d_name + len - 4, ".pch") == 0;
        int bad = len > 8 && strcmp(e->d_name + len - 8, ".pch.bad") == 0;
        if (!(pch || bad) || len >= sizeof(v[0].name)) {
            continue;
        }
        if (in_dir(path, sizeof(path), dir, e->d_name) && stat(path, &st) == 0) {
            memcpy(v[n].name, e->d_name, len + 1);
            v[n++].t = st.st_mtime;
        }
    }
    closedir(d);
    while (n > CORUN__CC_PCH_KEEP) {
        size_t old = 0;
        for (size_t i = 1; i < n; i++) {
            old = v[i].t < v[old].t ? i : old;
        }
        char path[PATH_MAX];
        if (in_dir(path, sizeof(path), dir, v[old].name)) {
            unlink(path);
        }
        v[old] = v[--n];
    }
}

/* 1 when path was written. Flags under which the headers alone do not
 * parse leave a marker path.bad, so later runs do not pay for trying again
 * (the plain parse reports the errors where the file includes them); not
 * when reads refused a file, which is the file system's doing, not the
 * flags'. */
static int build(const char *path, const char *const *args, int n,
                 struct CXUnsavedFile *files, unsigned nfiles, corun__cc_reads *reads)
{
    char tmp[PATH_MAX + 32], bad[PATH_MAX + 8];
    int parsed = 0, ok = 0;
    CXTranslationUnit tu = NULL;
    CXIndex ix;

    if (snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid()) >= (int)sizeof(tmp) ||
        snprintf(bad, sizeof(bad), "%s.bad", path) >= (int)sizeof(bad)) {
        return 0;
    }
    ix = clang_createIndex(0, 0);
    corun__cc_reads_enter(reads);
    enum CXErrorCode e = clang_parseTranslationUnit2(
        ix, files[nfiles - 1].Filename, args, n, files, nfiles,
        CXTranslationUnit_Incomplete | CXTranslationUnit_ForSerialization, &tu);
    if (e == CXError_Success && tu != NULL) {
        parsed = 1;
        for (unsigned i = 0; i < clang_getNumDiagnostics(tu) && parsed; i++) {
            CXDiagnostic g = clang_getDiagnostic(tu, i);
            parsed = clang_getDiagnosticSeverity(g) < CXDiagnostic_Error;
            clang_disposeDiagnostic(g);
        }
        if (parsed &&
            clang_saveTranslationUnit(tu, tmp, clang_defaultSaveOptions(tu)) == CXSaveError_None) {
            ok = corun__output_commit(tmp, path, NULL, 0) == 0;
        } else {
            unlink(tmp);
        }
        clang_disposeTranslationUnit(tu);
    }
    corun__cc_reads_leave();
    clang_disposeIndex(ix);
    if (!parsed && !corun__cc_reads_refused(reads)) {
        close(open(bad, O_WRONLY | O_CREAT, 0644));
    }
    return ok;
}

int corun__cc_pch_get(const char *dir, const char *const *args, int n,
                      struct CXUnsavedFile *files, unsigned nfiles, corun__cc_reads *reads,
                      char *path, size_t cap)
{
    uint64_t k = key_of(args, n, files, nfiles);
    if (snprintf(path, cap, "%s/%016llx.pch", dir, (unsigned long long)k) >= (int)cap) {
        return CORUN_CC_PCH_NONE;
    }
    if (access(path, R_OK) == 0) {
        utimensat(AT_FDCWD, path, NULL, 0); /* most recently used */
        return CORUN_CC_PCH_LOADED;
    }
    char bad[PATH_MAX + 8];
    if (snprintf(bad, sizeof(bad), "%s.bad", path) >= (int)sizeof(bad) ||
        access(bad, F_OK) == 0) {
        return CORUN_CC_PCH_NONE;
    }
    if (corun__mkdir_p(dir, NULL, 0) != 0 || !build(path, args, n, files, nfiles, reads)) {
        return CORUN_CC_PCH_NONE;
    }
    prune(dir);
    return CORUN_CC_PCH_BUILT;
}

int corun__cc_pch_rejected(CXTranslationUnit tu)
{
    int bad = 0;
    unsigned n = clang_getNumDiagnostics(tu);
    for (unsigned i = 0; i < n && !bad; i++) {
        CXDiagnostic g = clang_getDiagnostic(tu, i);
        if (clang_getDiagnosticSeverity(g) >= CXDiagnostic_Error) {
            CXString s = clang_getDiagnosticSpelling(g);
            const char *m = clang_getCString(s);
            bad = strstr(m, "precompiled") != NULL || strstr(m, "PCH") != NULL ||
                  strstr(m, "AST file") != NULL;
            clang_disposeString(s);
        }
        clang_disposeDiagnostic(g);
    }
    return bad;
}
