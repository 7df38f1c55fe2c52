#include "plan/discovery.h"

#include <algorithm>

#include "core/error.h"

namespace stf {
namespace {

struct Received {
  int rank;
  std::vector<stf_int> idx;
};

// Receives the message probed. Where this rank cannot hold it (out of
// memory), the message is still taken (into no buffer: a truncation), so
// that its sender's send completes, and *failed says why.
int receive_one(MPI_Comm comm, int tag, const MPI_Status &probe, std::vector<Received> *got, int *failed) {
  int n = 0;
  STF_MPI(MPI_Get_count(&probe, MPI_INT, &n));
  if (!*failed) try {
      got->push_back({probe.MPI_SOURCE, std::vector<stf_int>(n)});
      STF_MPI(MPI_Recv(got->back().idx.data(), n, MPI_INT, probe.MPI_SOURCE, tag, comm, MPI_STATUS_IGNORE));
      return STF_SUCCESS;
    } catch (...) {
      *failed = exception_error();
    }
  MPI_Recv(nullptr, 0, MPI_INT, probe.MPI_SOURCE, tag, comm, MPI_STATUS_IGNORE);  // fails: truncated
  return STF_SUCCESS;
}

// Hoefler, Siebert, Lumsdaine, "Scalable communication protocols for dynamic
// sparse data exchange" (2010): synchronous sends complete only once matched,
// so when all of mine are done and everybody reached the barrier, no message
// is left in flight.
// A rank that runs out of memory takes part to the end (its requests may be
// missing), then fails.
int nbx(MPI_Comm comm, int tag, const Messages &wanted, std::vector<Received> *got) {
  int failed = STF_SUCCESS;
  std::vector<MPI_Request> sends;
  try {
    sends.resize(wanted.count());
  } catch (...) {
    failed = exception_error();
  }
  for (int k = 0; k < static_cast<int>(sends.size()); k++)
    STF_MPI(MPI_Issend(wanted.idx.data() + wanted.offset[k], wanted.size(k), MPI_INT, wanted.ranks[k],
                       tag, comm, &sends[k]));
  MPI_Request barrier = MPI_REQUEST_NULL;
  for (;;) {
    int flag = 0;
    MPI_Status st;
    STF_MPI(MPI_Iprobe(MPI_ANY_SOURCE, tag, comm, &flag, &st));
    if (flag) {
      STF_CHECK(receive_one(comm, tag, st, got, &failed));
      continue;
    }
    if (barrier == MPI_REQUEST_NULL) {
      int sent = 0;
      STF_MPI(MPI_Testall(static_cast<int>(sends.size()), sends.data(), &sent, MPI_STATUSES_IGNORE));
      if (sent) STF_MPI(MPI_Ibarrier(comm, &barrier));
    } else {
      int done = 0;
      STF_MPI(MPI_Test(&barrier, &done, MPI_STATUS_IGNORE));
      if (done) return failed;
    }
  }
}

// Sends each message of `wanted` (a request each in sends) and receives
// `expected` of them.
int send_and_receive(MPI_Comm comm, int tag, const Messages &wanted, int expected, MPI_Request *sends,
                     std::vector<Received> *got) {
  int failed = STF_SUCCESS;
  for (int k = 0; k < wanted.count(); k++)
    STF_MPI(MPI_Isend(wanted.idx.data() + wanted.offset[k], wanted.size(k), MPI_INT, wanted.ranks[k], tag, comm,
                      &sends[k]));
  for (int i = 0; i < expected; i++) {
    MPI_Status st;
    STF_MPI(MPI_Probe(MPI_ANY_SOURCE, tag, comm, &st));
    STF_CHECK(receive_one(comm, tag, st, got, &failed));
  }
  STF_MPI(MPI_Waitall(wanted.count(), sends, MPI_STATUSES_IGNORE));
  return failed;
}

// Everybody learns how many messages it will receive from a sum over a
// communicator-sized array of flags, scattered as it is summed (the
// personalized census of the paper above): each rank receives its own entry
// only, about half the bytes of an allreduce of the array, and O(P) per rank
// where the recursive doubling MPIs pick for small arrays moves O(P log P).
// A rank that cannot allocate that array (out of memory) cannot take part in
// the sum: one small allreduce before it makes every rank fail instead of
// leaving the others in it.
int census(MPI_Comm comm, int tag, const Messages &wanted, std::vector<Received> *got) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  int failed = STF_SUCCESS;
  std::vector<int> flags;
  std::vector<MPI_Request> sends;
  try {
    flags.assign(size, 0);
    sends.resize(wanted.count());
  } catch (...) {
    failed = exception_error();
  }
  STF_CHECK(agree(comm, failed));
  for (int r : wanted.ranks) flags[r] = 1;
  int expected = 0;
  STF_MPI(MPI_Reduce_scatter_block(flags.data(), &expected, 1, MPI_INT, MPI_SUM, comm));
  return send_and_receive(comm, tag, wanted, expected, sends.data(), got);
}

// The messages received, by sending rank.
void collect(std::vector<Received> *got, Messages *asked) {
  std::sort(got->begin(), got->end(), [](const Received &a, const Received &b) { return a.rank < b.rank; });
  *asked = Messages();
  for (const Received &r : *got) asked->add(r.rank, r.idx.begin(), r.idx.end());
}

}  // namespace

int discover(const Comm &c, TwoSided algo, const Messages &wanted, Messages *asked, Tag which) {
  const MPI_Comm comm = c.comm;
  const int tag = c.tag(which);
  std::vector<Received> got;
  STF_CHECK(algo == TwoSided::nbx ? nbx(comm, tag, wanted, &got) : census(comm, tag, wanted, &got));
  collect(&got, asked);
  return STF_SUCCESS;
}

int exchange_known(const Comm &c, int expected, const Messages &wanted, MPI_Request *sends, Messages *asked,
                   Tag which) {
  std::vector<Received> got;
  STF_CHECK(send_and_receive(c.comm, c.tag(which), wanted, expected, sends, &got));
  collect(&got, asked);
  return STF_SUCCESS;
}

}  // namespace stf
