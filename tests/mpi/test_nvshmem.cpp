// -stf_type nvshmem where it cannot run (no GPU here; or a build without
// NVSHMEM): set-up fails with STF_ERR_UNSUPPORTED on every rank, with a
// message, without a hang; a rank that alone cannot load the plug-in makes
// every rank fail alike; and the SF then works with another transport.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "check.h"

using namespace stft;

namespace {

// Leaf 0 reads root 0 of the next rank.
stf_sf ring(Checker &ck, int me, int size) {
  stf_sf sf = nullptr;
  ck.code(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS, "stf_create");
  stf_node remote[1] = {{(me + 1) % size, 0}};
  ck.code(stf_set_graph(sf, 1, 1, nullptr, STF_COPY_VALUES, remote, STF_COPY_VALUES), STF_SUCCESS, "graph");
  return sf;
}

// Set-up under nvshmem fails on every rank with a message holding `want`.
void refused(Checker &ck, int me, int size, const char *want) {
  stf_sf sf = ring(ck, me, size);
  ck.code(stf_set_type(sf, "nvshmem"), STF_SUCCESS, "stf_set_type nvshmem (a known name)");
  const int rc = stf_setup(sf);
  const std::string msg = stf_last_error_message();
  ck.code(rc, STF_ERR_UNSUPPORTED, "stf_setup under nvshmem");
  ck.check(msg.find(want) != std::string::npos, "message '%s' lacks '%s'", msg.c_str(), want);
  if (me == 0) std::printf("test_nvshmem: rank 0 got: %s\n", msg.c_str());
  int all = 0, mine = rc == STF_ERR_UNSUPPORTED;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  ck.check(all == 1, "some rank did not get STF_ERR_UNSUPPORTED");
  // The SF is still usable.
  ck.code(stf_set_type(sf, "basic"), STF_SUCCESS, "stf_set_type basic");
  double root = me, leaf = -1;
  stf_request r = nullptr;
  ck.code(stf_bcast_begin(sf, MPI_DOUBLE, &root, &leaf, MPI_REPLACE, &r), STF_SUCCESS, "bcast begin");
  ck.code(stf_bcast_end(sf, &r), STF_SUCCESS, "bcast end");
  ck.check(leaf == (me + 1) % size, "leaf %g", leaf);
  stf_destroy(&sf);
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  {
    Checker ck("test_nvshmem", argc, argv, 1);
#ifdef STF_TEST_HAVE_NVSHMEM
    // The last rank cannot find the plug-in: everyone hears of it.
    ck.context("plug-in missing on one rank");
    if (me == size - 1) setenv("STF_NVSHMEM_PLUGIN", "/nonexistent/libstarforest_nvshmem.so", 1);
    refused(ck, me, size, size > 1 ? "cannot load the NVSHMEM plug-in" : "cannot load");
    unsetenv("STF_NVSHMEM_PLUGIN");
    // Loaded, on a machine without a GPU (or without the cuda device active).
    ck.context("no GPU");
    refused(ck, me, size, "nvshmem");
#else
    ck.context("build without NVSHMEM");
    refused(ck, me, size, "this build has no NVSHMEM backend");
#endif
    const int rc = ck.finish();
    MPI_Finalize();
    return rc;
  }
}
