/* cmpout.c - compare two CRUNOUT1 output files record by record.
 *
 * File format: a sequence of records, each
 *   char     magic[8] = "CRUNOUT1"
 *   uint32   element type (0 = float32, 1 = int32/uint32, 2 = float64)
 *   uint32   reserved
 *   uint64   element count
 *   element data (count * element size bytes)
 * in the byte order of the machine that wrote it (little-endian in practice).
 *
 * Integers are compared bitwise.  Floats match when |a - b| <= atol + rtol*|b|
 * (b is taken from the second file); NaN matches only NaN; equal values
 * (including infinities of the same sign) always match.
 *
 * usage: cmpout A B [--rtol R] [--atol A]
 * exit status: 0 equal within tolerance, 1 different, 2 bad files/arguments.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_ELEMS 65536

static const char MAGIC[8] = {'C', 'R', 'U', 'N', 'O', 'U', 'T', '1'};

struct header {
  uint32_t type;
  uint32_t reserved;
  uint64_t count;
};

static void usage(FILE *f) {
  fprintf(f,
          "usage: cmpout A B [--rtol R] [--atol A]\n"
          "  Compares two CRUNOUT1 files record by record: integers bitwise, floats with\n"
          "  |a-b| <= atol + rtol*|b| (NaN only equals NaN).  Defaults: --rtol 1e-6 --atol 0.\n"
          "  Exit status: 0 equal within tolerance, 1 different, 2 bad files or arguments.\n");
}

static int parse_double(const char *opt, const char *s, double *out) {
  char *end = NULL;
  errno = 0;
  double v = strtod(s, &end);
  if (errno != 0 || end == s || *end != '\0' || !(v >= 0.0) || isinf(v)) {
    fprintf(stderr, "cmpout: invalid value '%s' for %s (expected a finite number >= 0)\n", s, opt);
    return -1;
  }
  *out = v;
  return 0;
}

static size_t elem_size(uint32_t type) {
  switch (type) {
    case 0: return 4;
    case 1: return 4;
    case 2: return 8;
    default: return 0;
  }
}

static const char *type_name(uint32_t type) {
  switch (type) {
    case 0: return "float32";
    case 1: return "int32";
    case 2: return "float64";
    default: return "unknown";
  }
}

/* Reads a record header.  Returns 1 on success, 0 at a clean end of file,
 * -1 on error (message printed). */
static int read_header(FILE *f, const char *path, int rec, struct header *h) {
  unsigned char buf[24];
  size_t got = fread(buf, 1, sizeof buf, f);
  if (got == 0 && feof(f)) return 0;
  if (got != sizeof buf) {
    if (ferror(f))
      fprintf(stderr, "cmpout: %s: read error: %s\n", path, strerror(errno));
    else
      fprintf(stderr, "cmpout: %s: record %d: truncated header\n", path, rec);
    return -1;
  }
  if (memcmp(buf, MAGIC, 8) != 0) {
    fprintf(stderr, "cmpout: %s: record %d: bad magic (not a CRUNOUT1 file?)\n", path, rec);
    return -1;
  }
  memcpy(&h->type, buf + 8, 4);
  memcpy(&h->reserved, buf + 12, 4);
  memcpy(&h->count, buf + 16, 8);
  if (elem_size(h->type) == 0) {
    fprintf(stderr, "cmpout: %s: record %d: unknown element type %u\n", path, rec,
            (unsigned)h->type);
    return -1;
  }
  return 1;
}

static int read_data(FILE *f, const char *path, int rec, void *buf, size_t size, size_t n) {
  if (fread(buf, size, n, f) != n) {
    if (ferror(f))
      fprintf(stderr, "cmpout: %s: read error: %s\n", path, strerror(errno));
    else
      fprintf(stderr, "cmpout: %s: record %d: truncated data\n", path, rec);
    return -1;
  }
  return 0;
}

struct stats {
  double max_abs;      /* over pairs where both values are finite */
  double max_rel;      /* |a-b|/|b| over finite pairs with a != b */
  uint64_t mismatches;
  uint64_t first_bad;  /* index of the first mismatch (valid if mismatches > 0) */
  double first_a, first_b;
};

static void compare_value(double a, double b, uint64_t idx, double rtol, double atol,
                          struct stats *st) {
  int ok;
  if (isnan(a) || isnan(b)) {
    ok = isnan(a) && isnan(b);
  } else if (a == b) {
    ok = 1;
  } else {
    double d = fabs(a - b);
    if (isfinite(a) && isfinite(b)) {
      double rel = (b != 0.0) ? d / fabs(b) : INFINITY;
      if (d > st->max_abs) st->max_abs = d;
      if (rel > st->max_rel) st->max_rel = rel;
    }
    ok = d <= atol + rtol * fabs(b);  /* false for infinities of different value */
  }
  if (!ok) {
    if (st->mismatches == 0) {
      st->first_bad = idx;
      st->first_a = a;
      st->first_b = b;
    }
    st->mismatches++;
  }
}

int main(int argc, char **argv) {
  const char *paths[2] = {NULL, NULL};
  int npaths = 0;
  double rtol = 1e-6, atol = 0.0;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--rtol") || !strcmp(a, "--atol")) {
      if (i + 1 >= argc) {
        fprintf(stderr, "cmpout: option %s needs a value\n", a);
        return 2;
      }
      if (parse_double(a, argv[++i], !strcmp(a, "--rtol") ? &rtol : &atol) != 0) return 2;
    } else if (a[0] == '-' && a[1] == '-') {
      fprintf(stderr, "cmpout: unknown option '%s'\n", a);
      usage(stderr);
      return 2;
    } else {
      if (npaths == 2) {
        fprintf(stderr, "cmpout: too many files\n");
        usage(stderr);
        return 2;
      }
      paths[npaths++] = a;
    }
  }
  if (npaths != 2) {
    usage(stderr);
    return 2;
  }

  FILE *f[2];
  for (int k = 0; k < 2; ++k) {
    f[k] = fopen(paths[k], "rb");
    if (!f[k]) {
      fprintf(stderr, "cmpout: cannot open %s: %s\n", paths[k], strerror(errno));
      if (k == 1) fclose(f[0]);
      return 2;
    }
  }

  unsigned char *buf[2];
  buf[0] = malloc(CHUNK_ELEMS * 8);
  buf[1] = malloc(CHUNK_ELEMS * 8);
  if (!buf[0] || !buf[1]) {
    fprintf(stderr, "cmpout: out of memory\n");
    return 2;
  }

  int status = 0; /* 0 equal, 1 different, 2 error */
  int rec = 0;
  for (;; ++rec) {
    struct header h[2];
    int r0 = read_header(f[0], paths[0], rec, &h[0]);
    int r1 = read_header(f[1], paths[1], rec, &h[1]);
    if (r0 < 0 || r1 < 0) {
      status = 2;
      break;
    }
    if (r0 == 0 && r1 == 0) break;
    if (r0 == 0 || r1 == 0) {
      printf("record %d: present only in %s\n", rec, r0 ? paths[0] : paths[1]);
      status = 1;
      break;
    }
    if (h[0].type != h[1].type || h[0].count != h[1].count) {
      printf("record %d: layout differs: %s[%llu] vs %s[%llu]\n", rec, type_name(h[0].type),
             (unsigned long long)h[0].count, type_name(h[1].type), (unsigned long long)h[1].count);
      status = 1;
      break;
    }

    const uint32_t type = h[0].type;
    const size_t es = elem_size(type);
    struct stats st;
    memset(&st, 0, sizeof st);
    uint64_t done = 0;
    int err = 0;
    while (done < h[0].count) {
      size_t n = (h[0].count - done > CHUNK_ELEMS) ? CHUNK_ELEMS : (size_t)(h[0].count - done);
      if (read_data(f[0], paths[0], rec, buf[0], es, n) != 0 ||
          read_data(f[1], paths[1], rec, buf[1], es, n) != 0) {
        err = 1;
        break;
      }
      for (size_t i = 0; i < n; ++i) {
        const uint64_t idx = done + i;
        if (type == 1) {
          uint32_t a, b;
          memcpy(&a, buf[0] + 4 * i, 4);
          memcpy(&b, buf[1] + 4 * i, 4);
          if (a != b) {
            double d = fabs((double)(int32_t)a - (double)(int32_t)b);
            if (d > st.max_abs) st.max_abs = d;
            if (st.mismatches == 0) {
              st.first_bad = idx;
              st.first_a = (double)(int32_t)a;
              st.first_b = (double)(int32_t)b;
            }
            st.mismatches++;
          }
        } else if (type == 0) {
          float a, b;
          memcpy(&a, buf[0] + 4 * i, 4);
          memcpy(&b, buf[1] + 4 * i, 4);
          compare_value(a, b, idx, rtol, atol, &st);
        } else {
          double a, b;
          memcpy(&a, buf[0] + 8 * i, 8);
          memcpy(&b, buf[1] + 8 * i, 8);
          compare_value(a, b, idx, rtol, atol, &st);
        }
      }
      done += n;
    }
    if (err) {
      status = 2;
      break;
    }

    printf("record %d: %s[%llu] max_abs_diff=%.9g max_rel_diff=%.9g mismatches=%llu", rec,
           type_name(type), (unsigned long long)h[0].count, st.max_abs, st.max_rel,
           (unsigned long long)st.mismatches);
    if (st.mismatches) {
      printf(" first_mismatch=%llu (%.17g vs %.17g)", (unsigned long long)st.first_bad, st.first_a,
             st.first_b);
      status = 1;
    }
    printf("\n");
  }

  if (status == 0 && rec == 0) printf("both files are empty\n");
  if (status != 2) printf("%s\n", status == 0 ? "EQUAL" : "DIFFERENT");

  free(buf[0]);
  free(buf[1]);
  fclose(f[0]);
  fclose(f[1]);
  return status;
}
