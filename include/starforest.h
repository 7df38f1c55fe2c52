/* starforest: star-forest communication on MPI.
 *
 * A star forest (SF) connects leaves to roots. Roots are data slots owned by a
 * rank; each leaf is a slot on some rank that names at most one root as
 * (rank, offset). The graph is given from the leaf side only; stf_setup()
 * discovers the reverse direction. Data then moves over the graph with
 * split-phase operations (begin ... end), several of them in flight at once.
 *
 * Conventions
 * - Every function returns an stf_error code (STF_SUCCESS == 0). On failure,
 *   stf_last_error_message() explains it (thread-local, valid until the next
 *   failing call on this thread). Bad input never aborts or corrupts data.
 * - Handles (stf_sf, stf_request) are opaque and freed explicitly.
 * - Functions marked "collective" must be called on every rank of the SF's
 *   communicator, in the same order.
 * - "unit" is any MPI datatype: one root or leaf holds one unit. Builtin
 *   datatypes and contiguous derived datatypes of one builtin type support
 *   every op MPI defines for that type; any other datatype supports
 *   MPI_REPLACE. User-defined MPI_Op are applied with MPI_Reduce_local.
 */
#ifndef STARFOREST_H
#define STARFOREST_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STF_VERSION_MAJOR 0
#define STF_VERSION_MINOR 1

/* Local counts and offsets. */
typedef int stf_int;

typedef enum {
  STF_SUCCESS = 0,
  STF_ERR_ARG,         /* an argument is out of range or inconsistent */
  STF_ERR_NULL,        /* a required pointer is NULL */
  STF_ERR_RANK,        /* a rank outside the communicator */
  STF_ERR_OFFSET,      /* a negative or too large root/leaf offset */
  STF_ERR_DUPLICATE,   /* the same leaf listed twice */
  STF_ERR_STATE,       /* call not allowed in the object's current state */
  STF_ERR_TYPE,        /* datatype not supported for this operation */
  STF_ERR_OP,          /* op not defined for this datatype */
  STF_ERR_REQUEST,     /* invalid, already completed or mismatched request */
  STF_ERR_OPTION,      /* unknown option or bad option value */
  STF_ERR_MPI,         /* an MPI call failed */
  STF_ERR_MEMORY,      /* allocation failed */
  STF_ERR_UNSUPPORTED, /* valid request that this build cannot serve */
  STF_ERR_INTERNAL     /* a bug in starforest: please report it */
} stf_error;

/* A root as seen from a leaf: the owning rank and the offset on that rank. */
typedef struct {
  int rank;
  stf_int index;
} stf_node;

/* Who owns an array handed to stf_set_graph(). */
typedef enum {
  STF_COPY_VALUES, /* starforest copies it; the caller keeps its array */
  STF_OWN_POINTER, /* starforest takes it and free()s it (allocate with malloc) */
  STF_USE_POINTER  /* borrowed: must stay valid and unchanged until reset/destroy */
} stf_copy_mode;

typedef enum {
  STF_DUPLICATE_CONFIG, /* options only, no graph */
  STF_DUPLICATE_GRAPH   /* options and graph (the copy still needs stf_setup) */
} stf_duplicate_mode;

typedef struct stf_sf_s *stf_sf;
typedef struct stf_request_s *stf_request;

/* ---- errors and options ------------------------------------------------ */

/* Short name of an error code ("STF_ERR_RANK"). Never NULL. */
const char *stf_error_name(int code);
/* Message of the last failing call on this thread ("" if none). */
const char *stf_last_error_message(void);

/* Parse an options string such as "-stf_type basic -stf_twosided nbx".
 * Sets the defaults for SFs created afterwards (STF_* environment variables
 * are read first; this string overrides them). STF_ERR_OPTION on unknown
 * options or bad values, with nothing changed. */
int stf_set_options(const char *options);
/* Text listing every option, its environment variable and its default. */
const char *stf_options_help(void);

/* ---- graph --------------------------------------------------------------- */

/* Create an empty SF on comm (the communicator is duplicated). Collective. */
int stf_create(MPI_Comm comm, stf_sf *sf);
/* Destroy *sf and set it to NULL. Pending requests must have ended. Collective. */
int stf_destroy(stf_sf *sf);
/* Per-SF options, same syntax as stf_set_options(); before stf_setup(). */
int stf_set_sf_options(stf_sf sf, const char *options);

/* Set the graph from the leaf side.
 * nroots: number of roots owned by this rank. nleaves: number of leaves.
 * ilocal: leaf slots (length nleaves, unique, >= 0), or NULL for 0..nleaves-1.
 * iremote: root of each leaf (length nleaves).
 * Checks done here (local): counts >= 0, non-NULL arrays for nleaves > 0,
 * ranks inside the communicator, offsets >= 0, no duplicate leaf.
 * Root offsets >= the owner's nroots are caught at stf_setup() when the
 * option -stf_validate (STF_VALIDATE=1) is on. Not collective. */
int stf_set_graph(stf_sf sf, stf_int nroots, stf_int nleaves, const stf_int *ilocal,
                  stf_copy_mode local_mode, const stf_node *iremote, stf_copy_mode remote_mode);
/* Borrowed views of the graph; *ilocal is NULL for contiguous leaves. Any
 * output pointer may be NULL. STF_ERR_STATE if no graph is set. */
int stf_get_graph(stf_sf sf, stf_int *nroots, stf_int *nleaves, const stf_int **ilocal,
                  const stf_node **iremote);
/* Leaf slots touched lie in [*minleaf, *maxleaf]; an SF without leaves gives 0, -1. */
int stf_get_leaf_range(stf_sf sf, stf_int *minleaf, stf_int *maxleaf);
/* Build the communication plan (two-sided discovery). Collective. Called
 * implicitly by the first operation if the user did not. */
int stf_setup(stf_sf sf);
/* Drop the graph and plan, keep the options. Collective. */
int stf_reset(stf_sf sf);
/* New SF on the same communicator. Collective. */
int stf_duplicate(stf_sf sf, stf_duplicate_mode mode, stf_sf *newsf);
/* Human-readable summary of the graph and plan of every rank, in rank order:
 * gathered to rank 0, which writes it to its out (NULL: stdout); other ranks
 * write nothing. An SF without a graph prints "no graph". Collective. */
int stf_view(stf_sf sf, FILE *out);

/* ---- operations ---------------------------------------------------------- *
 * begin returns a request; end completes it and sets it to NULL. Until end,
 * the buffers belong to starforest. Operations are collective: every rank
 * calls the begins of its operations on one SF in the same order (ends may
 * come in any order). Blocking forms = begin + end. An SF whose plan is not
 * set up yet is set up by the first begin (collective). */

/* Roots to leaves: leafdata[l] = leafdata[l] op rootdata[root(l)]. */
int stf_bcast_begin(stf_sf sf, MPI_Datatype unit, const void *rootdata, void *leafdata,
                    MPI_Op op, stf_request *req);
int stf_bcast_end(stf_sf sf, stf_request *req);
int stf_bcast(stf_sf sf, MPI_Datatype unit, const void *rootdata, void *leafdata, MPI_Op op);

/* Leaves to roots: rootdata[r] = rootdata[r] op leafdata[l] for every leaf l of r. */
int stf_reduce_begin(stf_sf sf, MPI_Datatype unit, const void *leafdata, void *rootdata,
                     MPI_Op op, stf_request *req);
int stf_reduce_end(stf_sf sf, stf_request *req);
int stf_reduce(stf_sf sf, MPI_Datatype unit, const void *leafdata, void *rootdata, MPI_Op op);

/* Fetch-and-op: leafupdate[l] receives the value of its root just before
 * leafdata[l] is combined into it. Contributions to one root are applied in
 * the order (leaf rank, leaf slot), so the result is deterministic. */
int stf_fetch_and_op_begin(stf_sf sf, MPI_Datatype unit, void *rootdata, const void *leafdata,
                           void *leafupdate, MPI_Op op, stf_request *req);
int stf_fetch_and_op_end(stf_sf sf, stf_request *req);
int stf_fetch_and_op(stf_sf sf, MPI_Datatype unit, void *rootdata, const void *leafdata,
                     void *leafupdate, MPI_Op op);

/* Degree (number of leaves) of each root. The array (nroots entries) is owned
 * by the SF and valid until reset/destroy. */
int stf_compute_degree_begin(stf_sf sf, stf_request *req);
int stf_compute_degree_end(stf_sf sf, stf_request *req, const stf_int **degree);
int stf_compute_degree(stf_sf sf, const stf_int **degree);

/* Multi-SF: every root r becomes degree(r) consecutive multi-roots, one per
 * leaf, ordered by (leaf rank, leaf slot). Owned by sf; do not destroy. */
int stf_get_multi_sf(stf_sf sf, stf_sf *multi);

/* Leaves to multi-roots (each leaf's unit lands in its own slot). multirootdata
 * has sum(degree) units. */
int stf_gather_begin(stf_sf sf, MPI_Datatype unit, const void *leafdata, void *multirootdata,
                     stf_request *req);
int stf_gather_end(stf_sf sf, stf_request *req);
int stf_gather(stf_sf sf, MPI_Datatype unit, const void *leafdata, void *multirootdata);

/* Multi-roots to leaves (each leaf receives its own slot). */
int stf_scatter_begin(stf_sf sf, MPI_Datatype unit, const void *multirootdata, void *leafdata,
                      stf_request *req);
int stf_scatter_end(stf_sf sf, stf_request *req);
int stf_scatter(stf_sf sf, MPI_Datatype unit, const void *multirootdata, void *leafdata);

#ifdef __cplusplus
}
#endif

#endif /* STARFOREST_H */
