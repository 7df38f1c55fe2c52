/* starforest apps: what users build on star forests, written on the public
 * API only. This header grows with the apps; today it has the Matrix Market
 * reader that the sparse-matrix app and the benchmarks use. */
#ifndef STF_APPS_H
#define STF_APPS_H

#include <stdint.h>

#include "starforest.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Message of the last failing apps call on this thread ("" if none). */
const char *stf_apps_last_error_message(void);

/* ---- Matrix Market ------------------------------------------------------- */

/* A sparse matrix as coordinate triples, 0-based, in file order. Symmetric
 * and skew-symmetric files are expanded: every stored off-diagonal entry
 * (i, j, v) also yields (j, i, v), respectively (j, i, -v). Pattern files get
 * value 1. */
typedef struct {
  int64_t nrows, ncols;
  int64_t nnz; /* entries after expansion */
  int64_t *row, *col;
  double *val;
} stf_coo;

/* Read a Matrix Market coordinate file (real, integer or pattern; general,
 * symmetric or skew-symmetric), plain or gzip-compressed (detected from the
 * content, not the name). On error: STF_ERR_ARG for malformed input with the
 * line number in the message, STF_ERR_UNSUPPORTED for valid but unsupported
 * kinds (array format, complex, hermitian), STF_ERR_ARG for a file that
 * cannot be opened, STF_ERR_MEMORY; *out is then empty. Free with
 * stf_coo_free. Not collective. */
int stf_mm_read(const char *path, stf_coo *out);
/* Same, from a string in memory (plain text). */
int stf_mm_parse(const char *text, int64_t length, stf_coo *out);
/* Free the arrays of a matrix and zero it; NULL is ignored. */
void stf_coo_free(stf_coo *m);

#ifdef __cplusplus
}
#endif

#endif /* STF_APPS_H */
