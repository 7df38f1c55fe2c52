#include "plan/discovery.h"

#include <algorithm>

#include "core/error.h"

namespace stf {
namespace {

struct Received {
  int rank;
  std::vector<stf_int> idx;
};

int receive_one(MPI_Comm comm, int tag, const MPI_Status &probe, std::vector<Received> *got) {
  int n = 0;
  STF_MPI(MPI_Get_count(&probe, MPI_INT, &n));
  got->push_back({probe.MPI_SOURCE, std::vector<stf_int>(n)});
  STF_MPI(MPI_Recv(got->back().idx.data(), n, MPI_INT, probe.MPI_SOURCE, tag, comm,
                   MPI_STATUS_IGNORE));
  return STF_SUCCESS;
}

// Hoefler, Siebert, Lumsdaine, "Scalable communication protocols for dynamic
// sparse data exchange" (2010): synchronous sends complete only once matched,
// so when all of mine are done and everybody reached the barrier, no message
// is left in flight.
int nbx(MPI_Comm comm, int tag, const Messages &wanted, std::vector<Received> *got) {
  std::vector<MPI_Request> sends(wanted.count());
  for (int k = 0; k < wanted.count(); k++)
    STF_MPI(MPI_Issend(wanted.idx.data() + wanted.offset[k], wanted.size(k), MPI_INT, wanted.ranks[k],
                       tag, comm, &sends[k]));
  MPI_Request barrier = MPI_REQUEST_NULL;
  for (;;) {
    int flag = 0;
    MPI_Status st;
    STF_MPI(MPI_Iprobe(MPI_ANY_SOURCE, tag, comm, &flag, &st));
    if (flag) {
      STF_CHECK(receive_one(comm, tag, st, got));
      continue;
    }
    if (barrier == MPI_REQUEST_NULL) {
      int sent = 0;
      STF_MPI(MPI_Testall(static_cast<int>(sends.size()), sends.data(), &sent, MPI_STATUSES_IGNORE));
      if (sent) STF_MPI(MPI_Ibarrier(comm, &barrier));
    } else {
      int done = 0;
      STF_MPI(MPI_Test(&barrier, &done, MPI_STATUS_IGNORE));
      if (done) return STF_SUCCESS;
    }
  }
}

// Everybody learns how many messages it will receive from a sum over a
// communicator-sized array of flags.
int allreduce_counts(MPI_Comm comm, int tag, const Messages &wanted, std::vector<Received> *got) {
  int size = 0, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  std::vector<int> flags(size, 0);
  for (int r : wanted.ranks) flags[r] = 1;
  STF_MPI(MPI_Allreduce(MPI_IN_PLACE, flags.data(), size, MPI_INT, MPI_SUM, comm));
  std::vector<MPI_Request> sends(wanted.count());
  for (int k = 0; k < wanted.count(); k++)
    STF_MPI(MPI_Isend(wanted.idx.data() + wanted.offset[k], wanted.size(k), MPI_INT, wanted.ranks[k],
                      tag, comm, &sends[k]));
  for (int i = 0; i < flags[rank]; i++) {
    MPI_Status st;
    STF_MPI(MPI_Probe(MPI_ANY_SOURCE, tag, comm, &st));
    STF_CHECK(receive_one(comm, tag, st, got));
  }
  STF_MPI(MPI_Waitall(static_cast<int>(sends.size()), sends.data(), MPI_STATUSES_IGNORE));
  return STF_SUCCESS;
}

}  // namespace

int discover(const Comm &c, TwoSided algo, const Messages &wanted, Messages *asked, Tag which) {
  const MPI_Comm comm = c.comm;
  const int tag = c.tag(which);
  std::vector<Received> got;
  STF_CHECK(algo == TwoSided::nbx ? nbx(comm, tag, wanted, &got) : allreduce_counts(comm, tag, wanted, &got));
  std::sort(got.begin(), got.end(), [](const Received &a, const Received &b) { return a.rank < b.rank; });
  *asked = Messages();
  for (const Received &r : got) {
    asked->ranks.push_back(r.rank);
    asked->idx.insert(asked->idx.end(), r.idx.begin(), r.idx.end());
    asked->offset.push_back(static_cast<stf_int>(asked->idx.size()));
  }
  return STF_SUCCESS;
}

}  // namespace stf
