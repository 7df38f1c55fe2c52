/* global_ids: ghosts by 64-bit global ids, with no contiguous numbering.
 *
 * Each rank owns `owned` ids, id(q, i) = ((q * owned + i) * K) mod 2^40 for
 * an odd K: multiplication by an odd number is a bijection on 40-bit
 * numbers, so no id is owned twice, and the ids are spread over [0, 2^40)
 * (nearly all above 2^31, where a 32-bit id would wrap). Each rank needs
 * `needed` ids owned by other ranks, drawn pseudo-randomly. The value of an
 * id is a function of the id, so every ghost can be checked.
 *
 * Two implementations, in the same run:
 *   starforest: stf_create_from_matching_indices and stf_setup, then
 *     stf_bcast of the owned values into the ghost array;
 *   hand-written MPI: a directory spread over the ranks by a hash of the id
 *     (MPI_Alltoall of counts and MPI_Alltoallv to register the owned ids,
 *     to ask for the needed ones and to send each owner the offsets it must
 *     send), then MPI_Irecv/MPI_Isend of packed values per exchange.
 * Both are checked; the set-up and the exchange are timed (the slowest
 * rank, best of the rounds) and their ratios printed.
 *
 * usage: mpiexec -n 4 global_ids [owned] [needed] [exchanges]
 *        (defaults 20000, 5000, 200)
 */
#include <starforest.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                  \
  do {                                                                               \
    int rc_ = (call);                                                                \
    if (rc_ != STF_SUCCESS) {                                                        \
      fprintf(stderr, "%s:%d: %s: %s: %s\n", __FILE__, __LINE__, #call,             \
              stf_error_name(rc_), stf_last_error_message());                        \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                  \
    }                                                                                \
  } while (0)

enum { ROUNDS = 5 };
static const int64_t SPREAD = (int64_t)1 << 40;
static const int64_t K = 0x9E3779B97LL; /* odd */

static int me, nranks;

static int64_t id_of(int64_t serial) { return (int64_t)(((uint64_t)serial * (uint64_t)K) % (uint64_t)SPREAD); }
static double value_of(int64_t id) { return (double)id + 0.25; } /* exact: ids stay below 2^53 */
static int dir_rank(int64_t id) { return (int)(((uint64_t)id * 0x9E3779B97F4A7C15ULL >> 33) % (uint64_t)nranks); }

static uint64_t rng_state;
static uint64_t rng(void) { /* xorshift64 */
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

static void *xmalloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) MPI_Abort(MPI_COMM_WORLD, 2);
  return p;
}

/* Displacements from counts; returns the total. */
static int displs(const int *counts, int *displ) {
  int total = 0;
  for (int p = 0; p < nranks; p++) {
    displ[p] = total;
    total += counts[p];
  }
  return total;
}

/* An MPI_Alltoallv of `width` int64 per item, items grouped by destination
 * (send_counts items to each rank); returns the received items (*nrecv) and
 * fills recv_counts. */
static int64_t *exchange_items(const int64_t *send, const int *send_counts, int width, int *recv_counts, int *nrecv) {
  int *sc = xmalloc(sizeof(int) * nranks), *rc = xmalloc(sizeof(int) * nranks);
  int *sd = xmalloc(sizeof(int) * nranks), *rd = xmalloc(sizeof(int) * nranks);
  MPI_Alltoall(send_counts, 1, MPI_INT, recv_counts, 1, MPI_INT, MPI_COMM_WORLD);
  for (int p = 0; p < nranks; p++) {
    sc[p] = send_counts[p] * width;
    rc[p] = recv_counts[p] * width;
  }
  displs(sc, sd);
  const int total = displs(rc, rd);
  int64_t *recv = xmalloc(sizeof(int64_t) * total);
  MPI_Alltoallv(send, sc, sd, MPI_INT64_T, recv, rc, rd, MPI_INT64_T, MPI_COMM_WORLD);
  *nrecv = total / width;
  free(sc), free(rc), free(sd), free(rd);
  return recv;
}

static int by_id(const void *a, const void *b) {
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* The hand-written exchange: per owner, the offsets it sends me, in the
 * order of my ghost slots `slot`; per requester, the offsets I send. */
typedef struct {
  int *send_counts, *send_displs, *recv_counts, *recv_displs;
  int *send_offsets; /* owned offsets to pack, grouped by requester */
  int *recv_slots;   /* ghost slot of each received value, grouped by owner */
  double *send_buf, *recv_buf;
  MPI_Request *reqs;
} manual;

/* Sorts items (width int64 each) into per-destination groups by dest[i]. */
static int64_t *group_by(const int64_t *items, const int *dest, int n, int width, int *counts, int **order_out) {
  int *start = xmalloc(sizeof(int) * nranks);
  for (int p = 0; p < nranks; p++) counts[p] = 0;
  for (int i = 0; i < n; i++) counts[dest[i]]++;
  displs(counts, start);
  int64_t *out = xmalloc(sizeof(int64_t) * (size_t)n * width);
  int *order = xmalloc(sizeof(int) * n);
  for (int i = 0; i < n; i++) {
    const int at = start[dest[i]]++;
    order[at] = i;
    for (int w = 0; w < width; w++) out[(size_t)at * width + w] = items[(size_t)i * width + w];
  }
  free(start);
  if (order_out)
    *order_out = order;
  else
    free(order);
  return out;
}

static manual manual_setup(int nowned, const int64_t *owned, int nneeded, const int64_t *needed) {
  int *counts = xmalloc(sizeof(int) * nranks), *rcounts = xmalloc(sizeof(int) * nranks);
  int *dest = xmalloc(sizeof(int) * (nowned > nneeded ? nowned : nneeded));
  /* Register (id, rank, offset) with the ids' directory ranks. */
  int64_t *reg = xmalloc(sizeof(int64_t) * 3 * nowned);
  for (int i = 0; i < nowned; i++) {
    reg[3 * i] = owned[i], reg[3 * i + 1] = me, reg[3 * i + 2] = i;
    dest[i] = dir_rank(owned[i]);
  }
  int64_t *grouped = group_by(reg, dest, nowned, 3, counts, NULL);
  int ndir = 0;
  int64_t *dir = exchange_items(grouped, counts, 3, rcounts, &ndir);
  qsort(dir, ndir, 3 * sizeof(int64_t), by_id);
  free(reg), free(grouped);
  /* Ask the directory for the needed ids; it answers (rank, offset). */
  for (int i = 0; i < nneeded; i++) dest[i] = dir_rank(needed[i]);
  int *order = NULL;
  int64_t *asks = group_by(needed, dest, nneeded, 1, counts, &order);
  int nasked = 0;
  int64_t *asked = exchange_items(asks, counts, 1, rcounts, &nasked);
  int64_t *answers = xmalloc(sizeof(int64_t) * 2 * nasked);
  for (int i = 0; i < nasked; i++) {
    const int64_t *hit = bsearch(&asked[i], dir, ndir, 3 * sizeof(int64_t), by_id);
    if (!hit) MPI_Abort(MPI_COMM_WORLD, 3);
    answers[2 * i] = hit[1], answers[2 * i + 1] = hit[2];
  }
  int nanswers = 0, *back = xmalloc(sizeof(int) * nranks);
  int64_t *owners = exchange_items(answers, rcounts, 2, back, &nanswers); /* in the order of asks */
  /* Ask each owner for its offsets; remember which ghost slot each fills. */
  int64_t *req = xmalloc(sizeof(int64_t) * 2 * nneeded);
  for (int i = 0; i < nneeded; i++) {
    req[2 * i] = owners[2 * i + 1], req[2 * i + 1] = order[i]; /* offset at the owner, my ghost slot */
    dest[i] = (int)owners[2 * i];
  }
  manual m;
  m.recv_counts = xmalloc(sizeof(int) * nranks), m.recv_displs = xmalloc(sizeof(int) * nranks);
  m.send_counts = xmalloc(sizeof(int) * nranks), m.send_displs = xmalloc(sizeof(int) * nranks);
  int64_t *by_owner = group_by(req, dest, nneeded, 2, m.recv_counts, NULL);
  m.recv_slots = xmalloc(sizeof(int) * nneeded);
  int64_t *offsets = xmalloc(sizeof(int64_t) * nneeded);
  for (int i = 0; i < nneeded; i++) offsets[i] = by_owner[2 * i], m.recv_slots[i] = (int)by_owner[2 * i + 1];
  int nsend = 0;
  int64_t *to_send = exchange_items(offsets, m.recv_counts, 1, m.send_counts, &nsend);
  m.send_offsets = xmalloc(sizeof(int) * nsend);
  for (int i = 0; i < nsend; i++) m.send_offsets[i] = (int)to_send[i];
  displs(m.send_counts, m.send_displs);
  displs(m.recv_counts, m.recv_displs);
  m.send_buf = xmalloc(sizeof(double) * nsend);
  m.recv_buf = xmalloc(sizeof(double) * nneeded);
  m.reqs = xmalloc(sizeof(MPI_Request) * 2 * nranks);
  free(counts), free(rcounts), free(dest), free(dir), free(order), free(asks), free(asked), free(answers);
  free(back), free(owners), free(req), free(by_owner), free(offsets), free(to_send);
  return m;
}

static void manual_exchange(manual *m, const double *values, double *ghosts) {
  int n = 0;
  for (int p = 0; p < nranks; p++)
    if (m->recv_counts[p])
      MPI_Irecv(m->recv_buf + m->recv_displs[p], m->recv_counts[p], MPI_DOUBLE, p, 7, MPI_COMM_WORLD, &m->reqs[n++]);
  for (int p = 0; p < nranks; p++) {
    if (!m->send_counts[p]) continue;
    double *buf = m->send_buf + m->send_displs[p];
    const int *off = m->send_offsets + m->send_displs[p];
    for (int i = 0; i < m->send_counts[p]; i++) buf[i] = values[off[i]];
    MPI_Isend(buf, m->send_counts[p], MPI_DOUBLE, p, 7, MPI_COMM_WORLD, &m->reqs[n++]);
  }
  MPI_Waitall(n, m->reqs, MPI_STATUSES_IGNORE);
  const int total = m->recv_displs[nranks - 1] + m->recv_counts[nranks - 1];
  for (int i = 0; i < total; i++) ghosts[m->recv_slots[i]] = m->recv_buf[i];
}

static void manual_free(manual *m) {
  free(m->send_counts), free(m->send_displs), free(m->recv_counts), free(m->recv_displs);
  free(m->send_offsets), free(m->recv_slots), free(m->send_buf), free(m->recv_buf), free(m->reqs);
}

/* The slowest rank's time. */
static double slowest(double t) {
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return t;
}

static long wrong_ghosts(int n, const int64_t *needed, const double *ghosts) {
  long wrong = 0;
  for (int i = 0; i < n; i++) wrong += ghosts[i] != value_of(needed[i]);
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  return wrong;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  const int nowned = argc > 1 ? atoi(argv[1]) : 20000;
  const int nneeded = nranks > 1 ? (argc > 2 ? atoi(argv[2]) : 5000) : 0;
  const int exchanges = argc > 3 ? atoi(argv[3]) : 200;
  if (nowned < 1 || nneeded < 0 || exchanges < 1) {
    if (me == 0) fprintf(stderr, "usage: global_ids [owned >= 1] [needed >= 0] [exchanges >= 1]\n");
    MPI_Finalize();
    return 2;
  }
  int64_t *owned = xmalloc(sizeof(int64_t) * nowned), *needed = xmalloc(sizeof(int64_t) * (nneeded + 1));
  double *values = xmalloc(sizeof(double) * nowned), *ghosts = xmalloc(sizeof(double) * (nneeded + 1));
  long above = 0;
  for (int i = 0; i < nowned; i++) {
    owned[i] = id_of((int64_t)me * nowned + i);
    values[i] = value_of(owned[i]);
    above += owned[i] > INT32_MAX;
  }
  rng_state = 0x2545F4914F6CDD1DULL + (uint64_t)me;
  for (int i = 0; i < nneeded; i++) {
    const int q = (me + 1 + (int)(rng() % (uint64_t)(nranks - 1))) % nranks;
    needed[i] = id_of((int64_t)q * nowned + (int64_t)(rng() % (uint64_t)nowned));
  }
  MPI_Allreduce(MPI_IN_PLACE, &above, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);

  double best[2][2] = {{1e30, 1e30}, {1e30, 1e30}}; /* [stf, mpi][setup, exchange] */
  long wrong = 0;
  for (int round = 0; round < ROUNDS; round++) {
    /* starforest */
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    stf_sf sf = NULL;
    CHECK(stf_create_from_matching_indices(MPI_COMM_WORLD, nowned, owned, nneeded, needed, &sf));
    CHECK(stf_setup(sf));
    t = slowest(MPI_Wtime() - t);
    if (t < best[0][0]) best[0][0] = t;
    for (int i = 0; i < nneeded; i++) ghosts[i] = -1.0;
    CHECK(stf_bcast(sf, MPI_DOUBLE, values, ghosts, MPI_REPLACE));
    wrong += wrong_ghosts(nneeded, needed, ghosts);
    MPI_Barrier(MPI_COMM_WORLD);
    t = MPI_Wtime();
    for (int e = 0; e < exchanges; e++) CHECK(stf_bcast(sf, MPI_DOUBLE, values, ghosts, MPI_REPLACE));
    t = slowest(MPI_Wtime() - t) / exchanges;
    if (t < best[0][1]) best[0][1] = t;
    CHECK(stf_destroy(&sf));
    /* hand-written MPI */
    MPI_Barrier(MPI_COMM_WORLD);
    t = MPI_Wtime();
    manual m = manual_setup(nowned, owned, nneeded, needed);
    t = slowest(MPI_Wtime() - t);
    if (t < best[1][0]) best[1][0] = t;
    for (int i = 0; i < nneeded; i++) ghosts[i] = -1.0;
    manual_exchange(&m, values, ghosts);
    wrong += wrong_ghosts(nneeded, needed, ghosts);
    MPI_Barrier(MPI_COMM_WORLD);
    t = MPI_Wtime();
    for (int e = 0; e < exchanges; e++) manual_exchange(&m, values, ghosts);
    t = slowest(MPI_Wtime() - t) / exchanges;
    if (t < best[1][1]) best[1][1] = t;
    manual_free(&m);
  }
  if (me == 0) {
    printf("%d ranks, %d ids owned and %d needed per rank, spread over [0, 2^40): %ld of %ld owned ids above 2^31\n",
           nranks, nowned, nneeded, above, (long)nowned * nranks);
    printf("ghost values wrong: %ld (both implementations, every round)\n", wrong);
    printf("%-34s %12s %12s %8s\n", "", "starforest", "MPI by hand", "ratio");
    printf("%-34s %10.3f ms %10.3f ms %8.2f\n", "set-up (directory, plan)", 1e3 * best[0][0], 1e3 * best[1][0],
           best[0][0] / best[1][0]);
    printf("%-34s %10.1f us %10.1f us %8.2f\n", "ghost exchange (8 B per id)", 1e6 * best[0][1], 1e6 * best[1][1],
           best[0][1] / best[1][1]);
    printf("(slowest rank, best of %d rounds; ratio < 1: starforest faster)\n", ROUNDS);
  }
  free(owned), free(needed), free(values), free(ghosts);
  MPI_Finalize();
  return wrong != 0;
}
