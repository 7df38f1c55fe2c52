// A putsignal operation whose sending fails once some of its messages have
// left (an MPI error: this program's MPI_Isend, which the library's calls
// reach before the MPI library's, through the MPI profiling interface,
// fails on demand). Its rank's SF must refuse the next operation
// (STF_ERR_STATE) rather than begin the same operation again, which would
// send a peer that has its message a second copy of it and pair the ranks'
// later operations wrongly.
//
// Ranks 1 and 2 have leaves on rank 0's roots; units of 24 B are larger than
// their regions (16 B per unit), so each message goes by MPI_Isend. Rank 0's
// second MPI_Isend fails: one peer gets its message, the other times out
// (-stf_putsignal_timeout 1). Through the node's heap the sends leave from
// the begin's queue, point-to-point (one rank per node) from the begin
// itself, and through the RMA window from the end.
#include <mpi.h>

#include <string>
#include <vector>

#include "check.h"

using namespace stft;

namespace {

int isends_left = -1;  // armed (>= 0): how many more MPI_Isend calls succeed

bool isend_fails() { return isends_left >= 0 && isends_left-- == 0; }

}  // namespace

extern "C" int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                         MPI_Request *req) {
  return isend_fails() ? MPI_ERR_OTHER : PMPI_Isend(buf, count, type, dest, tag, comm, req);
}
#if MPI_VERSION >= 4
extern "C" int MPI_Isend_c(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                           MPI_Request *req) {
  return isend_fails() ? MPI_ERR_OTHER : PMPI_Isend_c(buf, count, type, dest, tag, comm, req);
}
#endif

namespace {

void send_fails_after_one_left(Checker &ck, const std::string &options, MPI_Comm trio) {
  ck.context(options);
  int me = 0;
  MPI_Comm_rank(trio, &me);
  const stf_int n = 4;
  std::vector<stf_node> remote(me == 0 ? 0 : n);
  for (stf_int i = 0; i < static_cast<stf_int>(remote.size()); i++) remote[i] = {0, i};
  stf_sf sf = nullptr;
  ck.code(stf_create(trio, &sf), STF_SUCCESS, "stf_create");
  ck.code(stf_set_sf_options(sf, (options + " -stf_putsignal_timeout 1").c_str()), STF_SUCCESS, "options");
  ck.code(stf_set_graph(sf, me == 0 ? n : 0, static_cast<stf_int>(remote.size()), nullptr, STF_COPY_VALUES,
                        remote.data(), STF_COPY_VALUES),
          STF_SUCCESS, "graph");
  ck.code(stf_setup(sf), STF_SUCCESS, "stf_setup");
  MPI_Datatype unit;
  MPI_Type_contiguous(3, MPI_DOUBLE, &unit);
  MPI_Type_commit(&unit);
  std::vector<double> root(3 * n), leaf(3 * n, -1);
  for (stf_int j = 0; j < 3 * n; j++) root[j] = 0.5 + j;
  int received = 0;
  if (me == 0) {
    isends_left = 1;
    ck.code(stf_bcast(sf, unit, root.data(), leaf.data(), MPI_REPLACE), STF_ERR_MPI, "bcast, its second send failing");
    isends_left = -1;
    ck.code(stf_bcast(sf, unit, root.data(), leaf.data(), MPI_REPLACE), STF_ERR_STATE, "the bcast again");
    ck.has_message("destroy the SF");
  } else {
    const int rc = stf_bcast(sf, unit, root.data(), leaf.data(), MPI_REPLACE);
    ck.code_either(rc, STF_SUCCESS, STF_ERR_TIMEOUT, "bcast from a rank whose send fails");
    received = rc == STF_SUCCESS;
    long long wrong = 0;
    for (stf_int j = 0; j < 3 * n; j++) wrong += leaf[j] != (received ? 0.5 + j : -1);
    ck.check(wrong == 0, "%lld values wrong (message %s)", wrong, received ? "received" : "not received");
  }
  int total = 0;
  MPI_Allreduce(&received, &total, 1, MPI_INT, MPI_SUM, trio);
  ck.check(total == 1, "%d peers got their message, not 1", total);
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
  MPI_Type_free(&unit);
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  Checker ck("test_failed_send", argc, argv, 1);
  MPI_Comm trio;
  MPI_Comm_split(MPI_COMM_WORLD, me < 3 ? 0 : MPI_UNDEFINED, me, &trio);
  int size = 0;
  if (trio != MPI_COMM_NULL) MPI_Comm_size(trio, &size);
  if (size == 3) {
    std::vector<std::string> routes = {"-stf_type putsignal",
                                       "-stf_type putsignal -stf_ranks_per_node 1 -stf_putsignal_net p2p"};
#ifndef MPICH_VERSION  // MPICH's RMA between "nodes" stalls (transport.cpp)
    routes.push_back("-stf_type putsignal -stf_ranks_per_node 1 -stf_putsignal_net rma");
#endif
    for (const std::string &o : routes) send_fails_after_one_left(ck, o, trio);
  }
  if (trio != MPI_COMM_NULL) MPI_Comm_free(&trio);
  const int rc = ck.finish();
  MPI_Finalize();
  return rc;
}
