/* starforest: star-forest communication on MPI.
 *
 * A star forest (SF) connects leaves to roots. Roots are data slots owned by a
 * rank; each leaf is a slot on some rank that names at most one root as
 * (rank, offset). The graph is given from the leaf side only; stf_setup()
 * discovers the reverse direction. Data then moves over the graph with
 * split-phase operations (begin ... end), several of them in flight at once.
 *
 * Conventions
 * - Handles (stf_sf, stf_request) are opaque and freed explicitly.
 * - Functions marked "collective" must be called on every rank of the SF's
 *   communicator, in the same order.
 * - "unit" is any MPI datatype: one root or leaf holds one unit. Builtin
 *   datatypes and contiguous derived datatypes of one builtin type support
 *   every op MPI defines for that type; any other datatype supports
 *   MPI_REPLACE. User-defined MPI_Op are applied with MPI_Reduce_local.
 *
 * Errors
 * - Every function returns an stf_error code (STF_SUCCESS == 0), except
 *   stf_error_name, stf_last_error_message and stf_options_help, which
 *   cannot fail; stf_get_version and stf_set_error always succeed (the
 *   latter returns the code it is given). Bad input gives an error, never
 *   an abort, a crash or corrupted data. No C++ exception leaves the
 *   library: allocation failures are STF_ERR_MEMORY.
 * - On failure stf_last_error_message() explains it: thread-local, valid
 *   until the next failure on this thread. It does not repeat the code's
 *   name: print stf_error_name(code) beside it. The apps library
 *   (stf_apps.h) reports through the same channel.
 * - A failed *_begin leaves *req == NULL; a failed call that creates an
 *   object leaves its output handle NULL; no other output is promised.
 * - Errors agreed across ranks (every rank of the communicator returns an
 *   error; the rank that found it has its own message, the others say which
 *   rank failed or that another rank's graph is wrong):
 *     stf_setup, and the set-up done by an SF's first operation, for a root
 *     offset past its owner's nroots (STF_ERR_OFFSET), for running out
 *     of memory while building the plan (STF_ERR_MEMORY), for options that
 *     must be alike on every rank and are not (STF_ERR_OPTION, see
 *     stf_set_sf_options), and for a failure on any rank in making the
 *     transport or strategy (out of memory, a step transport that cannot
 *     be made): every rank fails, and the SF is left not set up (a later
 *     call sets it up again), while -stf_validate is on (the default).
 *     Running out of memory on one rank anywhere in set-up is such a
 *     failure: the rank takes part in every collective before it fails
 *     (the options check, the node topology, both discoveries, the plan,
 *     each transport's set-up, -stf_type auto's choice and -stf_autotune's
 *     copies of the SF, a node-aware strategy's planning and step SFs).
 *     Not so, yet: the operations of -stf_autotune's timed trial, where
 *     a rank short of memory can still leave the others waiting, as in
 *     any operation;
 *     stf_create of the first SF of a communicator (the one that makes
 *     the library's duplicate of it), for running out of memory while the
 *     duplicate is made: every rank fails (a failure after that, making
 *     the SF object, is the rank's own, as in a later stf_create);
 *     the graph algebra calls and stf_create_from_matching_indices: every
 *     error, argument checks included (an input SF they set up has its root
 *     offsets checked on every rank, whatever -stf_validate says);
 *     a *_begin whose (unit, op) is not supported (STF_ERR_TYPE, STF_ERR_OP,
 *     found before any message), provided every rank passes the same unit
 *     and op, as the collective begins require anyway;
 *     with -stf_debug 1 (STF_DEBUG=1; a debugging aid, default 0), every
 *     argument check of a *_begin (NULL data where this rank has roots or
 *     leaves, memory types, the unit and op, the request pointer): each
 *     begin agrees on them with one MPI_Allreduce on the SF's communicator
 *     before any message is posted, so that an error on one rank is an
 *     error on all (the largest code) instead of a hang; the same allreduce
 *     checks that every rank's unit has the same size (STF_ERR_ARG) and
 *     that every rank passes the same op (STF_ERR_OP; user-defined ops
 *     are compared only as being user-defined). Without it, different ops
 *     on different ranks are the caller's error: basic, neighbor, window
 *     and putsignal combine what each rank receives with that rank's own
 *     op (the result mixes them silently); collective and its variants,
 *     which reduce inside MPI collectives, may wait for ever.
 *     It costs that allreduce per operation. Without it, units of
 *     different sizes are the caller's error, and no transport writes past
 *     a buffer: basic fails on every rank receiving a message of another
 *     size than it posted for (STF_ERR_ARG from its size check of each
 *     received message, or STF_ERR_MPI where MPI reports a truncation
 *     first); collective's own collectives report a longer message
 *     (STF_ERR_MPI) where MPI does; window moves what fits and fails the
 *     end (STF_ERR_ARG) on the rank whose message differs from its
 *     target's; putsignal fails the end (STF_ERR_ARG) on the receiver,
 *     from a size tag in its signal or the received size, also where one
 *     end's message fits its region and the other's does not (every
 *     message is signalled in its region, the large ones with a mark);
 *     large messages are tagged by their operation's number (modulo twice
 *     -stf_putsignal_slots), so where the receiver's unit is the larger,
 *     its receive takes no later operation's message, also where the
 *     sender ran ahead; where the sender's is the larger and the
 *     receiver had an operation that many numbers later in flight, with
 *     a receive posted that could take that message, those fail too and
 *     its SF refuses new bcasts and reduces (STF_ERR_STATE); neighbor
 *     sends a size word behind each message, so every receiver of a
 *     message of another size fails its end or test: STF_ERR_MPI where
 *     MPI reports the truncation of a longer message (Open MPI 4.1; the
 *     end after a failed test fails too), else STF_ERR_ARG (a shorter
 *     message, or a longer one MPI truncated silently, as MPICH 4.0.2
 *     does, within the buffer); collective's receiver of a shorter
 *     message gets it without an error. Under Open MPI, which raises a neighbourhood collective's
 *     error on MPI_COMM_WORLD's handler, neighbor's end and test set that
 *     handler to MPI_ERRORS_RETURN while they wait, and restore yours
 *     (meanwhile, errors other threads meet on MPI_COMM_WORLD return too).
 * - Every other error is local to the calling rank: NULL or invalid
 *   arguments, stf_set_graph's checks (not collective), STF_ERR_STATE,
 *   STF_ERR_REQUEST, data pointers, device errors, failed MPI calls, memory.
 *   A failed call that is not collective affects no other rank. When a
 *   collective call or an operation fails on some ranks only, the others
 *   see nothing at that call: they may return success and then wait, in
 *   that collective or in a later end, for messages the failed rank never
 *   sends. Make such errors agreed yourself (for example an MPI_Allreduce
 *   of the codes) or end the program (MPI_Abort). With -stf_validate 0, a
 *   bad root offset fails only on its owner (STF_ERR_OFFSET there).
 * - A failed operation leaves its SF usable: a failed begin or end cancels
 *   or completes what it had posted and frees its request (an error in an
 *   end, such as a message longer than posted for when ranks pass units of
 *   different sizes, still ends the request). Such a failure is local: a
 *   peer's operation may have succeeded or may wait for messages never sent.
 *   The node-aware strategies run every step of a failed operation and
 *   fail its end. Exceptions: after STF_ERR_TIMEOUT from the putsignal
 *   transport, the case of units of different sizes above, a begin that
 *   failed once a message of it had left or come (basic, putsignal: beginning
 *   it again would send or await that message twice), a basic end that
 *   failed before a peer's message came (the next operation would take
 *   it) or a putsignal end that failed before completing, its SF refuses
 *   new bcasts and reduces (STF_ERR_STATE); destroy it.
 * - A request handle is valid from its begin to its end. A stale copy of an
 *   ended request gives STF_ERR_REQUEST, also once its slot serves a newer
 *   operation (handles carry the slot's generation, modulo 65,536; 256
 *   on 32-bit machines and where the allocator tags pointers' top byte).
 *
 * Threads
 * - The library calls MPI from the threads that call it, so it needs the
 *   MPI thread level of its caller: MPI_THREAD_FUNNELED (or SINGLE) when
 *   one thread makes every call, MPI_THREAD_SERIALIZED when several threads
 *   take turns, MPI_THREAD_MULTIPLE to use different SFs from different
 *   threads at the same time. The emulated device's threads never call MPI
 *   (a kernel you launch may, then it needs MPI_THREAD_MULTIPLE).
 * - With MPI_THREAD_MULTIPLE, different SFs may be used at once from
 *   different threads (operations, stf_test, stats, views of the graph),
 *   provided that:
 *     one SF, its requests and its multi-SF are used by one thread at a
 *     time (nothing in an SF is locked; a begin, end or stf_test called
 *     while another thread is in one of these on the same SF fails with
 *     STF_ERR_STATE instead of mixing their operations, but the ranks'
 *     operations may then no longer pair: treat it as a bug to fix);
 *     collective calls on SFs of one communicator (stf_create, stf_setup
 *     and the first operation, stf_destroy, stf_view, the algebra) are not
 *     made from several threads at once: SFs on one communicator share one
 *     private duplicate of it, and MPI does not order collectives on one
 *     communicator issued from several threads (neither would it on yours);
 *     with the neighbor and collective transports, or with stream model C
 *     on device data, SFs used at once from different threads live on
 *     different communicators (those SFs share graph communicators, a
 *     collective's order, or a queue of deferred sends per communicator).
 *   What several SFs share is locked or thread-local: the communicator
 *   records and their tag counters, stf_set_options' defaults, the active
 *   device, the datatype cache, error messages. So basic SFs of one
 *   communicator (created one after the other) may be driven from
 *   different threads at once; tests/mpi/test_threads.cpp runs two threads
 *   on two basic SFs of MPI_COMM_WORLD, and on a basic and a neighbor SF
 *   of two communicators set up inside the threads, for thousands of
 *   operations each. The window transport and device data from several
 *   threads at once are not tested.
 */
#ifndef STARFOREST_H
#define STARFOREST_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header; stf_get_version() gives the library's. */
#define STF_VERSION_MAJOR 0
#define STF_VERSION_MINOR 1
#define STF_VERSION_PATCH 0

/* Local counts and offsets. */
typedef int stf_int;
/* Global ids (layouts, global-index and matching-index SFs, the vector scatter). */
typedef int64_t stf_gint;

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
  STF_ERR_INTERNAL,    /* a bug in starforest: please report it */
  STF_ERR_DEVICE,      /* a device runtime call failed (the message has the runtime's own) */
  STF_ERR_TIMEOUT      /* a peer did not come within the time an option allows */
} stf_error;

/* A root as seen from a leaf: the owning rank and the offset on that rank. */
typedef struct {
  int rank;
  stf_int index;
} stf_node;
/* The MPI datatype of one stf_node, to move nodes over an SF or with MPI. */
#define STF_MPI_NODE MPI_2INT

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
/* For libraries built on starforest (its apps library is one): make a
 * printf-style message this thread's last error message and return code, so
 * that stf_last_error_message() explains failures of both libraries. */
int stf_set_error(int code, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* The library's version (any pointer may be NULL). Compare it with the
 * STF_VERSION_* of the header an application was compiled with. */
int stf_get_version(int *major, int *minor, int *patch);

/* Parse an options string such as "-stf_type basic -stf_twosided nbx".
 * Sets the defaults for SFs created afterwards. Calls add up, a later value
 * of an option replacing an earlier one (so repeated calls keep no more
 * than one value per option). A yes/no option (values 0|1) given without a
 * value means 1 ("-stf_log_view -stf_view"). STF_ERR_OPTION on unknown
 * options or bad values, with nothing changed.
 * Where an SF's options come from, each overriding the ones before: the
 * built-in defaults; one STF_<NAME> environment variable per option
 * (STF_TYPE=putsignal); the whole string in the environment variable
 * STF_OPTIONS ("-stf_type putsignal -stf_view", as PETSC_OPTIONS); the
 * calls of stf_set_options and stf_set_options_from_args, in call order;
 * stf_set_sf_options on that SF. stf_create reads all but the last, and
 * fails with STF_ERR_OPTION naming the variable where one holds an unknown
 * option or a bad value. */
int stf_set_options(const char *options);
/* The same with the command line, as PetscInitialize reads it: every
 * argument from argv[1] on that starts with "-stf_" is an option, the next
 * argument its value (none for a yes/no option followed by another option
 * or by nothing). Other arguments are left alone, argv is not changed.
 * STF_ERR_OPTION for an unknown -stf_ option or a bad value, with nothing
 * changed. */
int stf_set_options_from_args(int argc, char *const argv[]);
/* Text listing every option, its environment variable and its default. */
const char *stf_options_help(void);

/* ---- graph --------------------------------------------------------------- */

/* Create an empty SF on comm. Collective. All SFs on one communicator share
 * one private duplicate of it (made with the first, kept after the last
 * for the next SF until comm is freed or MPI_Finalize), each with tags of
 * its own, so thousands of SFs cost one communicator.
 * STF_ERR_ARG for MPI_COMM_NULL or an intercommunicator. */
int stf_create(MPI_Comm comm, stf_sf *sf);
/* Destroy *sf and set it to NULL. Pending requests must have ended. Collective.
 * Every handle and array the SF gave out (multi-SF, degrees, graph and peer
 * arrays, requests) dies with it. A copy of the handle kept past this call
 * is refused by every call (STF_ERR_STATE) until its memory is reused, which
 * takes at least 64 further stf_destroy calls; do not rely on it beyond. */
int stf_destroy(stf_sf *sf);
/* Per-SF options, same syntax as stf_set_options(); before stf_setup().
 * Every rank must give an SF the same values of the options its ranks use
 * together: -stf_type and the options of that transport or strategy (for
 * auto, of every candidate, with -stf_model_profile and -stf_autotune),
 * -stf_twosided, -stf_ranks_per_node, -stf_debug, -stf_log_view and -stf_view. An
 * option left unset counts as its default. With -stf_validate on (the
 * default), set-up compares them (one allreduce) and fails on every rank
 * with STF_ERR_OPTION, naming the first that differs, instead of the ranks
 * waiting for each other in different collectives. -stf_validate itself
 * must be alike too. The others (index analysis, device data paths,
 * -stf_putsignal_timeout, another transport's options) may differ. */
int stf_set_sf_options(stf_sf sf, const char *options);
/* Choose the transport that moves this SF's messages, before stf_setup()
 * (or after stf_reset(); STF_ERR_STATE otherwise); the same as
 * "-stf_type <type>". Every rank must choose the same one. Every transport
 * and strategy moves messages of any size, also above INT_MAX bytes (MPI-4
 * large-count calls where the MPI has them, else one derived datatype per
 * message; see the README). Types:
 *   "basic"    (default) one message per peer and direction, point-to-point
 *              (persistent receives, MPI_Isend);
 *   "neighbor" one MPI-3 neighbourhood collective (MPI_Ineighbor_alltoallw)
 *              per direction and operation on distributed-graph
 *              communicators built at set-up from the SF's peers, shared
 *              with the SFs of the same communicator that have the same
 *              peers (so begin the operations of all SFs of a communicator
 *              in the same order on every rank); fetch-and-op returns, sent
 *              from end in any order, fall back to basic;
 *   "window"   MPI-3 one-sided: basic's messages, each written by one
 *              MPI_Put of contiguous bytes into the target's receive buffer
 *              (attached to a dynamic window created at set-up), which the
 *              target unpacks; synchronised by "-stf_window_sync
 *              fence|lock|pscw" (STF_WINDOW_SYNC). A begin waits until the
 *              ranks it writes to reach the same begin; with fence every
 *              rank must call the SF's ends in the same order. At most 32
 *              receive buffers are attached at a time (Open MPI 4.1 allows
 *              64): receives beyond them, with more than about 30
 *              operations in flight, go by point-to-point instead.
 *              Fetch-and-op's return leg falls back to basic;
 *   "collective", "allgatherv", "allgather", "gatherv", "gather",
 *   "alltoall"  for SFs with that collective shape (recognised at set-up):
 *              one nonblocking collective on the user's arrays for
 *              MPI_REPLACE; other ops, and SFs without the shape, basic.
 *              The collectives run on the communicator the SFs of one
 *              communicator share: begin the operations of all of them in
 *              the same order on every rank;
 *   "putsignal" one-sided put with signal: the sender packs straight into
 *              the receiver's region (a shared-memory heap for ranks of
 *              its node, an MPI RMA window, passive target, for the
 *              others where MPI's RMA is one-sided, else point-to-point:
 *              -stf_putsignal_net auto|rma|p2p, default auto, which
 *              probes once whether a put reaches a rank outside MPI, and
 *              means p2p where built with MPICH)
 *              and raises a signal; the receiver unpacks from the
 *              region and returns a credit. No MPI call per message inside
 *              a node. -stf_putsignal_slots S (1..64, a power of two,
 *              default 4) regions per peer and direction: more operations
 *              in flight are staged by the sender, never blocking begin;
 *              -stf_putsignal_unit_bytes (default 16) sizes the regions,
 *              larger messages go by point-to-point; -stf_putsignal_timeout
 *              T gives STF_ERR_TIMEOUT after T seconds without a peer (0:
 *              wait for ever); the SF then refuses new bcasts and
 *              reduces (STF_ERR_STATE) and is to be destroyed, as its late
 *              peer's messages would meet the wrong operations. Begin the
 *              operations of the SF in the same order on every rank.
 *              Fetch-and-op goes through basic;
 *   "ipc"      the same protocol in the device memory of one node's ranks
 *              (cuda: CUDA IPC handles; emu: shared memory), every step
 *              queued on the library stream (copies, and signal and credit
 *              words written and waited for by the stream), so device data
 *              needs no host wait. Every peer on the rank's node (else
 *              STF_ERR_UNSUPPORTED on every rank; 2step's
 *              -stf_node_transport ipc uses it inside nodes). Operation n
 *              of a direction may begin only once operation n - S has
 *              ended on the rank (S = -stf_ipc_slots); a refusal makes the
 *              SF refuse every later operation (STF_ERR_STATE). Units of
 *              at most -stf_ipc_unit_bytes. Destroy ipc SFs in the same
 *              order on every rank. Fetch-and-op goes through basic;
 *   "nvshmem"  the same protocol on device data through NVSHMEM, queued on
 *              the library stream (a plug-in built where CMake finds
 *              NVSHMEM). NVSHMEM starts once per process: stf_nvshmem_init(),
 *              else the first nvshmem SF over all of MPI_COMM_WORLD; an SF
 *              on any communicator of its PEs may then use it. Set-up gives
 *              STF_ERR_UNSUPPORTED on every rank where it cannot run (a
 *              build without NVSHMEM, no GPU, the active device not "cuda",
 *              a rank that is not a PE, ranks sharing a GPU without CUDA
 *              MPS or over 100 % of it, NVSHMEM failing to start, a full
 *              pool); see the README.
 * Node-aware strategies (nodes: the ranks that share memory, or groups of
 * -stf_ranks_per_node K consecutive ranks). bcast and reduce (every unit
 * and op, host or device data) run in steps over SFs of their own; a root
 * value needed by several leaves of one node crosses to that node once,
 * and a reduce combines the contributions of one node with the op there
 * before they cross. Fetch-and-op, gather and scatter use basic:
 *   "3step"    values for another node are gathered on one rank of their
 *              node, one message per pair of nodes and direction, then
 *              forwarded inside the destination node;
 *   "2step"    each rank sends straight to one rank of each other node
 *              (the one with its local rank, modulo that node's size),
 *              which forwards inside its node;
 *   "split"    3step with a node pair's values cut into chunks of at most
 *              -stf_split_bytes B bytes (default 16384), each chunk one
 *              message with its own sender and receiver, so that several
 *              ranks of a node share the traffic between nodes; never more
 *              chunks than either node has ranks (then they exceed B).
 *              A node's leader gives the chunks it receives (and those it
 *              is asked to send) to its ranks pair by pair, largest first,
 *              a pair's chunks to different ranks with the fewest values.
 *   -stf_node_transport and -stf_net_transport (default basic) name the
 *   transports of the steps inside a node and between nodes. Set-up
 *   (collective) plans the steps; split plans again, once, for each
 *   new unit size. Operations of such an SF may be ended in any order:
 *   ending one finishes those begun before it.
 *   "auto"     at set-up, the one of basic, neighbor, putsignal, 2step,
 *              3step and split (node-aware ones across nodes only; putsignal
 *              faster than basic only where the profile measured its
 *              protocol, see scripts/bench calibrate) with the smallest
 *              predicted time for 8-byte units (stf_explain prints the
 *              predictions), from the machine profile -stf_model_profile
 *              FILE (else built-in values); -stf_autotune N also times the
 *              three best predictions and basic over N interleaved rounds of a bcast
 *              and a reduce (collective, at set-up) and keeps the fastest.
 *              Every rank makes the same choice; stf_get_type and stf_view
 *              then name it (stf_view with the predictions).
 * stf_view() names the transport in use, its parameters and fallbacks.
 * STF_ERR_OPTION for an unknown type. Not collective. */
int stf_set_type(stf_sf sf, const char *type);
/* The transport chosen for sf (owned by sf, valid until the next change). */
int stf_get_type(stf_sf sf, const char **type);

/* Set the graph from the leaf side.
 * nroots: number of roots owned by this rank. nleaves: number of leaves.
 * ilocal: leaf slots (length nleaves, unique, >= 0), or NULL for 0..nleaves-1.
 * iremote: root of each leaf (length nleaves).
 * Checks done here (local): counts >= 0, non-NULL arrays for nleaves > 0,
 * ranks inside the communicator, offsets >= 0, leaf slots < INT_MAX
 * (STF_ERR_ARG: leaf buffers have maxleaf + 1 slots, which must fit in
 * stf_int), no duplicate leaf.
 * Root offsets >= the owner's nroots are caught at stf_setup(), on every
 * rank while -stf_validate is on (the default: an allreduce at set-up),
 * on the owner only with -stf_validate 0 (see "Errors"). Not collective. */
int stf_set_graph(stf_sf sf, stf_int nroots, stf_int nleaves, const stf_int *ilocal,
                  stf_copy_mode local_mode, const stf_node *iremote, stf_copy_mode remote_mode);
/* Borrowed views of the graph; *ilocal is NULL for contiguous leaves. Any
 * output pointer may be NULL. STF_ERR_STATE if no graph is set. */
int stf_get_graph(stf_sf sf, stf_int *nroots, stf_int *nleaves, const stf_int **ilocal,
                  const stf_node **iremote);
/* The SF's communicator: the private duplicate of the one given to
 * stf_create, shared by every SF on it (do not free; valid until
 * stf_destroy). SFs created on it share it too. Not collective. */
int stf_get_comm(stf_sf sf, MPI_Comm *comm);
/* Leaf slots touched lie in [*minleaf, *maxleaf]; an SF without leaves gives 0, -1. */
int stf_get_leaf_range(stf_sf sf, stf_int *minleaf, stf_int *maxleaf);
/* The ranks this rank's leaves read from ("root ranks"), ascending, this
 * rank included when some leaves read its own roots. Peer k = ranks[k] owns
 * the edges offset[k] .. offset[k+1]-1 (offset has nranks + 1 entries):
 * leaves[i] is the leaf slot here and roots[i] the root offset on ranks[k]
 * it reads, in ascending leaf slot order. Local: needs the graph only.
 * Arrays owned by sf, valid until stf_reset or stf_destroy; any output
 * may be NULL. (PETSc: PetscSFGetRootRanks.) */
int stf_get_root_ranks(stf_sf sf, int *nranks, const int **ranks, const stf_int **offset, const stf_int **leaves,
                       const stf_int **roots);
/* The ranks whose leaves read this rank's roots ("leaf ranks"), ascending,
 * this rank included likewise. roots[offset[k]] .. roots[offset[k+1]-1] are
 * the local roots read by leaves of ranks[k], one entry per leaf (a root
 * read by two of its leaves appears twice), in that rank's leaf slot order:
 * the order of the messages. Needs the plan: sets the SF up if it is not
 * (collective then, as stf_setup). Arrays as for stf_get_root_ranks.
 * (PETSc: PetscSFGetLeafRanks.) */
int stf_get_leaf_ranks(stf_sf sf, int *nranks, const int **ranks, const stf_int **offset, const stf_int **roots);
/* Build the communication plan (two-sided discovery). Collective. Called
 * implicitly by the first operation if the user did not. */
int stf_setup(stf_sf sf);
/* The nodes as the SF sees them, once set up: this rank's node, the number
 * of nodes, this rank's rank on its node and the number of ranks there.
 * Nodes are the ranks that share memory (MPI_COMM_TYPE_SHARED), or with
 * -stf_ranks_per_node K groups of K consecutive ranks (emulated nodes);
 * they are numbered by their lowest rank and may differ in size. Any output
 * may be NULL. STF_ERR_STATE before set-up. Not collective. */
int stf_get_node_layout(stf_sf sf, int *node, int *nnodes, int *local_rank, int *local_size);
/* Drop the graph and plan, keep the options. Collective. */
int stf_reset(stf_sf sf);
/* New SF on the same communicator. Collective. */
int stf_duplicate(stf_sf sf, stf_duplicate_mode mode, stf_sf *newsf);
/* Human-readable summary of the graph and plan of every rank, in rank order:
 * gathered to rank 0, which writes it to its out (NULL: stdout); other ranks
 * write nothing. An SF without a graph prints "no graph". Collective. */
int stf_view(stf_sf sf, FILE *out);
/* What the performance model says of this SF for units of `unit`: its
 * traffic (busiest rank and node), the predicted time of one bcast under
 * every transport and strategy that applies (node-aware ones across nodes
 * only), fastest first, with each one's dominant term (latency, injection,
 * bandwidth, node bandwidth, busy step), the position of its messages on the message
 * roofline, and, once the SF has run operations, the measured time per
 * bcast and reduce beside them (the timings of stf_stats). The machine
 * profile is -stf_model_profile FILE (written by scripts/bench calibrate),
 * else built-in values, which the text says. Sets the SF up if needed.
 * Rank 0 writes to out (NULL: stdout). Collective. */
int stf_explain(stf_sf sf, MPI_Datatype unit, FILE *out);

/* ---- operations ---------------------------------------------------------- *
 * begin returns a request; end completes it and sets it to NULL (a prepared
 * request's stays: see stf_start). Until end,
 * the buffers belong to starforest. Operations are collective: every rank
 * calls the begins of its operations on one SF in the same order (with the
 * neighbor and collective transports: on all SFs of one communicator); ends may
 * come in any order (a fetch-and-op end first answers, oldest first, every
 * fetch-and-op in flight on that SF whose old values this rank owes, so
 * peers waiting in other ends are served). Blocking forms = begin + end.
 * An SF whose plan is not set up yet is set up by the first begin
 * (collective). */

/* Operand order: "x op y" below is what MPI_Reduce_local(x, y, ...) leaves
 * in y (MPI's order, as PETSc's star forest applies user ops); only
 * user-defined ops that do not commute tell the difference. */

/* Roots to leaves: leafdata[l] = rootdata[root(l)] op leafdata[l]. */
int stf_bcast_begin(stf_sf sf, MPI_Datatype unit, const void *rootdata, void *leafdata,
                    MPI_Op op, stf_request *req);
int stf_bcast_end(stf_sf sf, stf_request *req);
int stf_bcast(stf_sf sf, MPI_Datatype unit, const void *rootdata, void *leafdata, MPI_Op op);

/* Leaves to roots: rootdata[r] = leafdata[l] op rootdata[r] for every leaf l
 * of r (several leaves of one root: in no particular order). */
int stf_reduce_begin(stf_sf sf, MPI_Datatype unit, const void *leafdata, void *rootdata,
                     MPI_Op op, stf_request *req);
int stf_reduce_end(stf_sf sf, stf_request *req);
int stf_reduce(stf_sf sf, MPI_Datatype unit, const void *leafdata, void *rootdata, MPI_Op op);

/* Fetch-and-op: leafupdate[l] receives the value of its root just before
 * leafdata[l] is combined into it (rootdata[r] = leafdata[l] op rootdata[r]).
 * Contributions to one root are applied in the order (leaf rank, leaf slot),
 * so the result is deterministic. */
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
 * leaf, ordered by (leaf rank, leaf slot). Owned by sf (valid until its reset
 * or destroy): stf_destroy on it is STF_ERR_ARG. */
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

/* Complete *req without waiting if its messages have arrived (and its sends
 * are done): then *done = 1 and *req = NULL (a prepared request's stays),
 * exactly as after its end (the request knows whether it is a bcast,
 * reduce, ...; the end's work, such as
 * unpacking, is done here). Otherwise *done = 0 and the request stays in
 * flight: test again, or call its end. Lets a rank poll while it computes;
 * each call drives MPI's progress. Not collective. Notes: a fetch-and-op
 * test also serves, without waiting, this SF's fetch-and-ops whose
 * contributions have arrived (oldest first, as an end would); with stream
 * model C the first test posts the request's deferred sends, waiting for
 * their packing as end would; the window transport in fence mode learns of
 * arrival only at the fence, a collective over its ranks: there stf_test
 * completes the operation like its end, waiting for the other ranks to
 * reach it. STF_ERR_REQUEST for a compute-degree request (its end returns
 * the degrees) and as the ends say; a failed test leaves *req in flight. */
int stf_test(stf_sf sf, stf_request *req, int *done);

/* Prepared operations, for a bcast or reduce repeated on the same arrays (as
 * MPI's persistent requests): init takes a begin's arguments and makes the
 * request, posting nothing; each stf_start begins the operation, ended as
 * any other by its end or stf_test, which leave the request prepared (*req
 * kept) for the next start. The checks of the arguments, the unit and its
 * kernels, the memory types and the request's slot are done once, at init,
 * so a start and its end cost less than a begin and end. Until
 * stf_request_free, the arrays, the unit and the op stay the request's (their
 * values may change between operations) and the SF cannot be reset or
 * destroyed. Starts are collective as begins are: every rank starts its
 * operations on one SF in the same order, prepared or not. init is local
 * (collective under -stf_debug, whose checks it agrees as a begin does).
 * STF_ERR_REQUEST: a start of a request in flight, an end or stf_test of one
 * that is not, a free of one in flight or of a request that init did not
 * make. */
int stf_bcast_init(stf_sf sf, MPI_Datatype unit, const void *rootdata, void *leafdata,
                   MPI_Op op, stf_request *req);
int stf_reduce_init(stf_sf sf, MPI_Datatype unit, const void *leafdata, void *rootdata,
                    MPI_Op op, stf_request *req);
int stf_start(stf_sf sf, stf_request *req);
/* Release a prepared request that is not in flight; *req becomes NULL. */
int stf_request_free(stf_sf sf, stf_request *req);

/* Repeated begins: a bcast or reduce begun on host memory with the same
 * unit (a named MPI datatype), predefined op, arrays and memory types as
 * recent ones on the SF restarts that operation as stf_start restarts a
 * prepared one, so it costs about what a start costs (where this rank's
 * messages of the operation hold at most 1 MiB). The second such begin
 * keeps its operation for the third and later ones; an SF keeps up to
 * eight, and a begin seen once among the last eight that kept nothing
 * qualifies. -stf_repeat_begins 0 turns this off.
 * Nothing changes for the caller: each begin returns a new request, which
 * its end or stf_test ends (stf_start and stf_request_free refuse it).
 * stf_stats' repeated_begins counts them. */

/* ---- devices ------------------------------------------------------------- *
 * Root and leaf data may live in device memory. One device backend is active
 * per process: "host" (default: no device, all memory is host memory) or
 * "emu", an emulated device that runs the device code paths on CPU threads
 * (its memory is host memory the backend registered; each stream is a
 * worker thread; kernels run on a small thread pool), for testing without a
 * GPU, or "cuda" (builds configured with CUDA: the calling thread's current
 * CUDA device). Choose it with stf_device_select(), -stf_device or
 * STF_DEVICE.
 *
 * Operations find out where their data lives by asking the device (answers
 * are cached); the _mem variants take it from the caller instead. Device
 * data is packed and unpacked by kernels on the library's stream. Two data
 * paths (-stf_device_aware auto|0|1): device-aware, where device pointers
 * go to MPI, and staged, where packed device data is copied to pinned host
 * buffers, sent, received into pinned buffers and copied back to the device
 * (MPI never sees device memory); auto asks the device whether its MPI
 * accepts device memory ("emu" says yes). When and where the host waits is
 * the SF's stream model (stf_stream_model below). After *_end, device
 * results may still be in flight on the library stream (models B and C):
 * call stf_device_synchronize() before reading them on the host.
 * Supported on the device: bcast, reduce, gather, scatter with MPI_REPLACE
 * on units of one builtin type, and MPI_SUM/PROD/MAX/MIN on integer and
 * floating types (not long double); other ops on device data are
 * STF_ERR_UNSUPPORTED. fetch-and-op works on device data for every unit and
 * op the host supports: it is staged through host copies (root data, leaf
 * data and leafupdate over [minleaf, maxleaf] copied down in begin,
 * results copied back in end) and waits in begin and end.
 * STF_DEVICE_CHECK_MPI=1 (debugging) checks every buffer handed to MPI for
 * device memory; see stf_stats. */

typedef enum { STF_MEMTYPE_HOST = 0, STF_MEMTYPE_DEVICE = 1 } stf_memtype;

/* Make "host", "emu" or "cuda" the active device. STF_ERR_STATE while the
 * active device still has allocations (including pack buffers and index
 * copies of SFs that moved device data: destroy those SFs first).
 * STF_ERR_UNSUPPORTED for "cuda" in a build without CUDA or where the CUDA
 * runtime finds no GPU ("no CUDA device"; the active device stays as it
 * was). When -stf_device / STF_DEVICE names a device that does not exist
 * here, the device calls below fail with that error, and operations on host
 * memory still work (no device memory can exist). Not collective. */
int stf_device_select(const char *name);
/* Name of the active device ("host", "emu" or "cuda"). */
int stf_device_get_name(const char **name);
/* Starts NVSHMEM, for the nvshmem transport, over every rank of comm
 * (collective over comm; once per process; each rank's current CUDA
 * device). Its symmetric pool takes -stf_nvshmem_pool_mib MiB (default
 * 256, the same on every rank) of each GPU. Without this call the first
 * nvshmem SF over all of MPI_COMM_WORLD starts it there. Errors, on every
 * rank of comm: STF_ERR_ARG (MPI_COMM_NULL, an intercommunicator),
 * STF_ERR_OPTION (a pool size out of range or differing between ranks),
 * STF_ERR_UNSUPPORTED where it cannot start: no NVSHMEM in this build, no
 * GPU, already started (by starforest or by the application), ranks of a
 * node sharing a GPU without CUDA MPS or with MPS active thread
 * percentages over 100 (where NVSHMEM would end the process), NVSHMEM
 * failing to start, or the pool failing to allocate; after the last two,
 * nvshmem cannot be used in this process. */
int stf_nvshmem_init(MPI_Comm comm);
/* Device memory of the active device (host memory on "host"). */
int stf_device_malloc(size_t bytes, void **ptr);
/* Waits for the device's work, then frees; by the device that allocated it,
 * also after stf_device_select. STF_ERR_ARG for a pointer that
 * stf_device_malloc did not return or that was freed already. NULL: nothing. */
int stf_device_free(void *ptr);
/* Blocking copy in any direction (host or device on either side). */
int stf_device_memcpy(void *dst, const void *src, size_t bytes);
/* Wait until all work on the library stream (kernels of ended operations) is done. */
int stf_device_synchronize(void);
/* Where ptr lives according to the active device. NULL is host memory. */
int stf_get_memtype(const void *ptr, stf_memtype *type);

/* ---- streams, events and kernels of the active device ---------------------- *
 * The same model as CUDA streams: work on one stream runs in order, streams
 * run concurrently, an event captures the current end of a stream's queue.
 * On "host" every call completes before it returns. NULL as a stream means
 * the library stream. Not collective.
 * Streams and events belong to the device active when they were made: using
 * one after stf_device_select made another device active, after its
 * destroy, or one these calls never made, is STF_ERR_ARG; destroying one
 * works under any device. */
typedef struct stf_stream_s *stf_stream;
typedef struct stf_event_s *stf_event;

int stf_stream_create(stf_stream *s);
/* Waits for the stream's work first. Destroying the stream set with
 * stf_device_set_stream makes the library use its own stream again. */
int stf_stream_destroy(stf_stream s);
int stf_stream_synchronize(stf_stream s);
int stf_event_create(stf_event *e);
int stf_event_destroy(stf_event e);
/* e completes when s has run everything enqueued on it before this call. */
int stf_event_record(stf_event e, stf_stream s);
/* Work enqueued on s after this call waits for e (the host does not wait). */
int stf_stream_wait_event(stf_stream s, stf_event e);
int stf_event_synchronize(stf_event e);
/* *done = 1 if e has completed (never blocks). */
int stf_event_query(stf_event e, int *done);
/* Copy in any direction, enqueued on s. */
int stf_device_memcpy_async(void *dst, const void *src, size_t bytes, stf_stream s);
/* Run fn(begin, end, ctx) over disjoint ranges covering [0, n), enqueued on
 * s, concurrently on the device's threads. Host-callable functions only:
 * "host" and "emu" run them, a GPU backend answers STF_ERR_UNSUPPORTED (its
 * kernels must be compiled for it). ctx must stay valid until the work ran. */
typedef void (*stf_kernel_fn)(int64_t begin, int64_t end, void *ctx);
int stf_device_launch(stf_stream s, int64_t n, stf_kernel_fn fn, void *ctx);
/* The library stream: where operations on device data pack, unpack and
 * copy, and (stream model B) where the user produces and consumes that data.
 * s = NULL gives the library its own stream back. Set it while no operation
 * on device data is in flight. */
int stf_device_set_stream(stf_stream s);
int stf_device_get_stream(stf_stream *s);

/* How an operation on device data synchronises with the user's streams
 * (MPI does not know streams, so someone must wait before MPI reads device
 * data; see Zhang et al., "The PetscSF Scalable Communication Layer", IEEE
 * TPDS 33(4), 2022). Three places for that wait:
 *  A: the data comes from streams the library does not know: begin waits
 *     for the whole device before packing (and for the library stream
 *     before MPI reads what it packed or copied), end waits for the library
 *     stream after unpacking, so results are ready on return;
 *  B (default): the data is produced and consumed on the library stream;
 *     begin waits for that stream once before MPI touches device memory or
 *     staging buffers, and end returns with the unpack still in flight on it;
 *  C: begin does not wait at all: it posts the receives (into library
 *     buffers, never straight into user device memory), records an event
 *     after packing, and end waits for that event, then posts the sends
 *     (the event-based MatMult: the host can launch more work between begin
 *     and end). Sends on one SF still leave in begin order: an end (or a
 *     begin in another model) first posts the deferred sends of operations
 *     begun before it. With the window transport in fence or pscw mode,
 *     whose epochs may not overlap, C runs as B (the view says so).
 * Per SF, also -stf_stream_model A|B|C. May be changed between operations. */
typedef enum { STF_STREAM_MODEL_A = 0, STF_STREAM_MODEL_B = 1, STF_STREAM_MODEL_C = 2 } stf_stream_model;
int stf_set_stream_model(stf_sf sf, stf_stream_model model);
int stf_get_stream_model(stf_sf sf, stf_stream_model *model);

/* bcast and reduce with the memory types of the root and leaf data given. */
int stf_bcast_begin_mem(stf_sf sf, MPI_Datatype unit, stf_memtype rootmtype, const void *rootdata,
                        stf_memtype leafmtype, void *leafdata, MPI_Op op, stf_request *req);
int stf_reduce_begin_mem(stf_sf sf, MPI_Datatype unit, stf_memtype leafmtype, const void *leafdata,
                         stf_memtype rootmtype, void *rootdata, MPI_Op op, stf_request *req);

/* ---- statistics ---------------------------------------------------------- *
 * What the operations on one SF cost this rank since it was created or the
 * counters were reset: kernel calls and bytes moved through pack buffers.
 * Contiguous messages go straight between user memory and MPI and count no
 * pack or unpack; gather/scatter count on the SF they were called on.
 *
 * ABI rule: the caller sets `size` to sizeof(stf_stats) before calling
 * stf_get_stats (stf_stats_init() does), and the library fills the fields that
 * lie within that many bytes. Later versions only append fields, so a
 * program compiled against an older header gets the fields it knows; on
 * return `size` is the number of bytes filled (less than the caller's when
 * the library is older: fields beyond it are left as they were). */
/* Operation kinds, indexing the timings of stf_stats. */
typedef enum {
  STF_OP_BCAST,
  STF_OP_REDUCE,
  STF_OP_FETCH_AND_OP,
  STF_OP_GATHER,
  STF_OP_SCATTER,
  STF_OP_KINDS
} stf_op_kind;

typedef struct {
  size_t size;                 /* set by the caller: sizeof(stf_stats) */
  long long pack_calls;        /* user data -> message buffer */
  long long unpack_calls;      /* message buffer -> user data, with the op (fetch-and-op included) */
  long long scatter_calls;     /* self part, root to leaf or back, memcpy included */
  long long bytes_packed;      /* bytes written by pack */
  long long bytes_unpacked;    /* bytes read by unpack */
  long long messages_sent;     /* messages to other ranks */
  long long messages_received; /* messages from other ranks */
  /* Device work done for operations on device data (see "devices"): */
  long long device_kernel_launches; /* pack/unpack/scatter kernels launched on the device */
  long long device_stream_syncs;    /* host waits for the library stream */
  long long device_syncs;           /* host waits for the whole device (stream model A) */
  long long device_copies_h2d;      /* async copies host -> device */
  long long device_copies_d2h;      /* async copies device -> host */
  long long device_event_syncs;     /* host waits for an event (model C's sends, reuse of a busy slot) */
  /* With STF_DEVICE_CHECK_MPI=1 (a debugging aid): buffers of operations on
   * device data handed to MPI, and how many of those lie in device memory
   * (on the staged path that is an error, STF_ERR_INTERNAL). */
  long long mpi_buffers_checked;
  long long device_buffers_to_mpi;
  /* Messages sent (as messages_sent) and their bytes, split by where the
   * receiving rank is: on this rank's node or on another node (the nodes of
   * stf_get_node_layout, so with -stf_ranks_per_node the emulated ones). */
  long long messages_sent_in_node, messages_sent_off_node;
  long long bytes_sent_in_node, bytes_sent_off_node;
  /* Wall time of this rank in the SF's calls, per operation kind (index
   * stf_op_kind): operations begun, seconds inside *_begin, inside *_end and
   * stf_test, and of the latter, waiting for messages to arrive (a
   * node-aware strategy's waits are those of its steps; on putsignal's
   * express path, until it last stopped waiting for a missing message).
   * Read from the processor's time-stamp counter: two or three reads per
   * call, and one per pause of a wait that polls. */
  long long operations[STF_OP_KINDS];
  double begin_seconds[STF_OP_KINDS];
  double end_seconds[STF_OP_KINDS];
  double wait_seconds[STF_OP_KINDS];
  /* Begins of a bcast or reduce that repeated an earlier begin's arguments
   * on this SF (unit, op, arrays) and so restarted its operation, as
   * stf_start restarts a prepared one, instead of setting up a new one
   * (see "Repeated begins" above). */
  long long repeated_begins;
  /* Prepared and repeated operations that went by the transport's express
   * path (putsignal: an operation on host memory alone in flight, whose
   * messages all fit their regions, those it sends in the node's heap):
   * begun and ended with none of the general path's routing. One that
   * another operation or stf_test found in flight finished as an ordinary
   * one and is not counted. A node-aware strategy's steps are not added. */
  long long express_operations;
} stf_stats;
/* Zeroed counters with size set: stf_stats s = stf_stats_init(); stf_get_stats(sf, &s); */
static inline stf_stats stf_stats_init(void) {
  stf_stats s;
  memset(&s, 0, sizeof s);
  s.size = sizeof s;
  return s;
}

/* Copy this rank's counters of sf into *stats (see the ABI rule above).
 * STF_ERR_ARG when stats->size is smaller than the first version's struct
 * (the size field and the 15 counters of version 0.1). Not collective. */
int stf_get_stats(stf_sf sf, stf_stats *stats);
/* Set this rank's counters of sf to zero. Not collective. */
int stf_reset_stats(stf_sf sf);

/* ---- graph algebra --------------------------------------------------------- *
 * New SFs built from old ones or from a description. All calls here are
 * collective over the (congruent) communicators of their SF arguments, or
 * over comm; the result is a new SF owned by the caller (stf_destroy), set
 * up or ready to be, with the options of the first SF argument (the
 * defaults for calls taking a comm). SF arguments need a graph and must not
 * be NULL; an input SF that is not set up yet is set up (collective). An
 * error found on one rank is reported on every rank (the others say another
 * rank failed), and no output is created. Errors: STF_ERR_ARG for SFs on
 * different communicators, a root of degree > 1 where at most one is
 * required (the message names the rank and root), spaces that do not fit,
 * and counts or indices out of range. Leaf buffers of an SF have
 * maxleaf + 1 slots (stf_get_leaf_range). */

/* C: A's roots to B's leaves, where A's leaf slots are B's roots (on every
 * rank A's maxleaf < B's nroots). bcast through C equals bcast through A
 * then B. Leaves of B whose root no leaf of A reaches get no edge in C; C's
 * leaves keep B's slots. */
int stf_compose(stf_sf a, stf_sf b, stf_sf *c);
/* C: A's roots to B's roots, where A and B have leaves in the same leaf
 * space and every root of B has at most one leaf. A root of B gets an edge
 * when its leaf slot is also a leaf of A, to that leaf's root; C's leaf slots
 * are B's root offsets. */
int stf_compose_inverse(stf_sf a, stf_sf b, stf_sf *c);
/* The inverse of an SF whose roots have at most one leaf each: its roots are
 * sf's leaf slots (maxleaf + 1 of them), its leaves are sf's roots that have
 * a leaf (slot = root offset). bcast on the inverse equals reduce with
 * MPI_REPLACE on sf. */
int stf_create_inverse(stf_sf sf, stf_sf *inv);

/* How stf_concatenate numbers the roots of its inputs. */
typedef enum {
  STF_CONCAT_ROOTS_LOCAL,  /* each rank stacks the root spaces of the inputs, in order */
  STF_CONCAT_ROOTS_SHARED, /* the inputs share one root space (same nroots on each rank) */
  STF_CONCAT_ROOTS_GLOBAL  /* the global root spaces are stacked in order, then split
                              again so each rank owns the sum of its inputs' nroots */
} stf_concat_roots;
/* n >= 1 SFs on one communicator become one whose leaf space stacks theirs:
 * leaf slot s of sfs[i] becomes leaf_offsets[i] + s (this rank's offsets,
 * n entries; NULL: each input after the previous one's maxleaf + 1).
 * Overlapping leaves give STF_ERR_DUPLICATE. Roots as in root_mode; with
 * GLOBAL, root k of rank p in sfs[i] is global index
 * (total roots of sfs[0..i)) + (roots of sfs[i] on ranks < p) + k. */
int stf_concatenate(int n, const stf_sf sfs[], const stf_int leaf_offsets[], stf_concat_roots root_mode,
                    stf_sf *out);
/* Union of two SFs on the same root space (same nroots on each rank); a leaf
 * slot present in both takes B's edge. */
int stf_merge(stf_sf a, stf_sf b, stf_sf *c);

/* Sub-SF keeping only the edges of the selected roots (this rank's root
 * offsets, any order, duplicates allowed; nselected = 0 allows NULL) or of
 * the selected leaf slots. Numbering is unchanged (same nroots, same leaf
 * slots), so buffers of the original SF still fit. The plan is derived from
 * the original's plan (sf is set up if needed): no new discovery. */
int stf_create_embedded_roots(stf_sf sf, stf_int nselected, const stf_int *selected, stf_sf *sub);
int stf_create_embedded_leaves(stf_sf sf, stf_int nselected, const stf_int *selected, stf_sf *sub);

/* bs >= 1 copies of sf for data stored as bs columns: copy c of root k is
 * root c * ldr + k, copy c of leaf slot s is slot c * ldl + s. ldr >= nroots
 * and ldl >= maxleaf + 1, each rank its own; a negative value means that
 * minimum. The result has bs * ldr roots. */
int stf_create_strided(stf_sf sf, stf_int bs, stf_int ldr, stf_int ldl, stf_sf *out);

/* Communication patterns, built without discovery. nroots: roots owned by
 * this rank (any >= 0, may differ between ranks), except for ALLTOALL. */
typedef enum {
  STF_PATTERN_ALLGATHER, /* every rank has all roots of all ranks as leaves, in rank order */
  STF_PATTERN_GATHER,    /* the same, on rank 0 only; other ranks have no leaves */
  STF_PATTERN_ALLTOALL   /* nroots = block size b, the same on every rank: each rank owns
                            size * b roots and size * b leaf slots; leaf block p of rank q
                            reads root block q of rank p (like MPI_Alltoall) */
} stf_pattern;
int stf_create_from_pattern(MPI_Comm comm, stf_pattern pattern, stf_int nroots, stf_sf *out);

/* Layouts: a global numbering in which each rank owns a contiguous range,
 * rank 0 first; nowned is this rank's count. Global indices are 64-bit
 * (stf_gint): the layout may hold more than INT_MAX entries in all, while
 * each rank's count and offsets stay stf_int. */
/* Owner (rank, local offset) of each of n global indices. Collective over
 * comm; STF_ERR_ARG for an index outside the layout. */
int stf_layout_find_owners(MPI_Comm comm, stf_int nowned, stf_int n, const stf_gint *global, stf_node *owners);
/* The SF that brings global entries to the ranks that need them: nowned
 * roots; leaf i (contiguous, 0..nneeded-1) reads global index global[i]. */
int stf_create_from_global_indices(MPI_Comm comm, stf_int nowned, stf_int nneeded, const stf_gint *global,
                                   stf_sf *out);

/* A directory of global ids: each rank owns nowned ids (owned[i] is root i
 * here; any values, any order, not a contiguous layout, but no id owned
 * twice) and needs nneeded ids (needed[i], repeats allowed). The result has
 * nowned roots and leaves 0..nneeded-1, leaf i reading the root that owns
 * needed[i]; bcast over it fetches owned values into a ghost array. Ids are
 * looked up in a directory spread over the ranks by a hash of the id, with
 * starforest's own migration SFs (discovery, no all-to-all of counts).
 * Errors, agreed: STF_ERR_ARG for an id needed but owned by no rank (every
 * rank's message names the smallest such id) or owned twice, negative
 * counts; STF_ERR_NULL for a NULL array with a positive count. Collective.
 * (PETSc: PetscSFCreateByMatchingIndices; AO and ISLocalToGlobalMapping
 * users build this SF from their numbering.) */
int stf_create_from_matching_indices(MPI_Comm comm, stf_int nowned, const stf_gint *owned, stf_int nneeded,
                                     const stf_gint *needed, stf_sf *out);

/* Sections: root point r owns root_count[r] >= 0 data entries stored at
 * root_offset[r] >= 0 .. + count - 1 in a root data array. The counts travel
 * over sf to the leaf points: leaf_count and leaf_offset (caller arrays of
 * maxleaf + 1 entries; may be NULL when this rank has no leaves) get each
 * leaf slot's count and an offset that packs the leaf entries in ascending
 * leaf slot order (slots without a leaf: 0, 0). *nleafdata: the number of
 * leaf entries (may be NULL). *datasf moves the entries: its roots are the
 * root data array (max(offset + count) entries), its leaves 0..nleafdata-1. */
int stf_distribute_section(stf_sf sf, const stf_int *root_count, const stf_int *root_offset, stf_int *leaf_count,
                           stf_int *leaf_offset, stf_int *nleafdata, stf_sf *datasf);

/* Migration: local point i (0..npoints-1) should move to rank target[i].
 * *out has npoints roots here and *nnew leaves (0..nnew-1) on each rank, the
 * points that arrive, numbered by (source rank, source index); bcast over it
 * moves point data to the new owners. nnew may be NULL. */
int stf_create_migration(MPI_Comm comm, stf_int npoints, const int *target, stf_sf *out, stf_int *nnew);

#ifdef __cplusplus
}
#endif

#endif /* STARFOREST_H */
