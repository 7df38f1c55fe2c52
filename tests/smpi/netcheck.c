// The network a simulated platform gives, as the profile describes it:
// one-way time of a ping-pong per locality and size, the rate of 1..P
// concurrent pairs from node 0 to node 1, and the time of 1..P messages
// that rank 0 sends to node 1 at once (its gap). Run on 2 nodes of P ranks
// (ranks node by node); rank 0 prints, tests/smpi/validate.py compares.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { REPS = 10 };

// Half the round trip between ranks a and b, S bytes each way.
static double pingpong(int me, int a, int b, int bytes, char *buf) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = 0;
  // One round trip untimed: the two leave the barrier at different times.
  for (int i = -1; i < REPS; i++) {
    if (i == 0) t0 = MPI_Wtime();
    if (me == a) {
      MPI_Send(buf, bytes, MPI_BYTE, b, 0, MPI_COMM_WORLD);
      MPI_Recv(buf, bytes, MPI_BYTE, b, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (me == b) {
      MPI_Recv(buf, bytes, MPI_BYTE, a, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, bytes, MPI_BYTE, a, 0, MPI_COMM_WORLD);
    }
  }
  return (MPI_Wtime() - t0) / (2.0 * REPS);
}

// Bytes per second of `pairs` ranks of node 0 each sending `bytes` to its
// partner on node 1 at once.
static double pairs_rate(int me, int per_node, int pairs, int bytes, char *buf) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  if (me < pairs) MPI_Send(buf, bytes, MPI_BYTE, me + per_node, 1, MPI_COMM_WORLD);
  if (me >= per_node && me < per_node + pairs)
    MPI_Recv(buf, bytes, MPI_BYTE, me - per_node, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  double mine = MPI_Wtime() - t0, worst = 0;
  MPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  return (double)pairs * bytes / worst;
}

// Seconds until the last of `k` messages of 8 bytes, sent by rank 0 at once
// (MPI_Isend) to the first k ranks of node 1, has arrived.
static double fan(int me, int per_node, int k, char *buf) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  if (me == 0) {
    MPI_Request req[k];
    for (int i = 0; i < k; i++) MPI_Isend(buf, 8, MPI_BYTE, per_node + i, 2, MPI_COMM_WORLD, &req[i]);
    MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
  } else if (me >= per_node && me < per_node + k) {
    MPI_Recv(buf + 8, 8, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  double mine = me >= per_node && me < per_node + k ? MPI_Wtime() - t0 : 0, last = 0;
  MPI_Reduce(&mine, &last, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  return last;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n < 4 || n % 2) {
    if (me == 0) fprintf(stderr, "netcheck: run on 2 nodes of at least 2 ranks each\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int per_node = n / 2, big = 1 << 24;
  char *buf = calloc(big, 1);
  for (int bytes = 8; bytes <= big; bytes *= 4) {
    const double same = pingpong(me, 0, 1, bytes, buf);
    const double other = pingpong(me, 0, per_node, bytes, buf);
    if (me == 0) printf("pingpong %d %.9e %.9e\n", bytes, same, other);
  }
  const int pair_sizes[2] = {8192, big};  // an eager size and a large one
  for (int i = 0; i < 2; i++)
    for (int pairs = 1; pairs <= per_node; pairs++) {
      const double rate = pairs_rate(me, per_node, pairs, pair_sizes[i], buf);
      if (me == 0) printf("pairs %d %d %.9e\n", pairs, pair_sizes[i], rate);
    }
  for (int k = 1; k <= per_node; k++) {
    const double t = fan(me, per_node, k, buf);
    if (me == 0) printf("fan %d 8 %.9e\n", k, t);
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
