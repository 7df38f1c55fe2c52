// -stf_type nvshmem where it cannot run (no GPU here; or a build without
// NVSHMEM): set-up fails with STF_ERR_UNSUPPORTED on every rank, with a
// message, without a hang; a rank that alone cannot load the plug-in makes
// every rank fail alike; and the SF then works with another transport.
// Where a GPU is (STF_DEVICE=cuda), how NVSHMEM starts: an SF on a
// sub-communicator before it has started is refused; the first SF over
// MPI_COMM_WORLD starts it, unless ranks share the GPU without CUDA MPS
// (refused before NVSHMEM is called; STF_TEST_NVSHMEM_MPS=0 says the run
// expects that); then SFs on sub-communicators and MPI_COMM_SELF move
// device data, are destroyed in rank-dependent order, and their blocks of
// the pool are reused; an SF larger than the pool is refused, naming the
// option.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

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

// Leaf i of every rank of comm reads root i of the next rank of comm, on
// the GPU; checks the values; returns the set-up's code.
int device_ring(Checker &ck, MPI_Comm comm, const char *what, int want_setup, stf_sf *keep = nullptr,
                const char *options = nullptr) {
  int me = 0, size = 1;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &size);
  const int n = 16;
  ck.context(what);
  stf_sf sf = nullptr;
  ck.code(stf_create(comm, &sf), STF_SUCCESS, "stf_create");
  std::vector<stf_node> remote(n);
  for (int i = 0; i < n; i++) remote[i] = {(me + 1) % size, i};
  ck.code(stf_set_graph(sf, n, n, nullptr, STF_COPY_VALUES, remote.data(), STF_COPY_VALUES), STF_SUCCESS, "graph");
  ck.code(stf_set_type(sf, "nvshmem"), STF_SUCCESS, "stf_set_type nvshmem");
  if (options) ck.code(stf_set_sf_options(sf, options), STF_SUCCESS, "stf_set_sf_options");
  const int rc = stf_setup(sf);
  ck.code(rc, want_setup, "stf_setup under nvshmem");
  if (rc == STF_SUCCESS) {
    std::vector<double> host(n), got(n, -1);
    for (int i = 0; i < n; i++) host[i] = 1000 * me + i;
    void *root = nullptr, *leaf = nullptr;
    stf_device_malloc(n * sizeof(double), &root);
    stf_device_malloc(n * sizeof(double), &leaf);
    stf_device_memcpy(root, host.data(), n * sizeof(double));
    for (int round = 0; round < 6; round++)  // more than the default 4 slots
      ck.code(stf_bcast(sf, MPI_DOUBLE, root, leaf, MPI_REPLACE), STF_SUCCESS, "bcast");
    stf_device_synchronize();
    stf_device_memcpy(got.data(), leaf, n * sizeof(double));
    for (int i = 0; i < n; i++)
      if (!ck.check(got[i] == 1000 * ((me + 1) % size) + i, "leaf %d = %g", i, got[i])) break;
    stf_device_free(root);
    stf_device_free(leaf);
  }
  if (keep && rc == STF_SUCCESS) *keep = sf;
  else stf_destroy(&sf);
  return rc;
}

void on_gpu(Checker &ck, int me, int size) {
  const char *mps = std::getenv("STF_TEST_NVSHMEM_MPS");
  const bool refuse = size > 1 && mps && std::string(mps) == "0";
  MPI_Comm half = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
  if (size > 1) {
    device_ring(ck, half, "a sub-communicator before NVSHMEM has started", STF_ERR_UNSUPPORTED);
    ck.check(std::string(stf_last_error_message()).find("not an NVSHMEM PE") != std::string::npos,
             "message: %s", stf_last_error_message());
  }
  if (refuse) {
    device_ring(ck, MPI_COMM_WORLD, "MPI_COMM_WORLD, ranks sharing the GPU without MPS", STF_ERR_UNSUPPORTED);
    ck.check(std::string(stf_last_error_message()).find("CUDA MPS is not active") != std::string::npos,
             "message: %s", stf_last_error_message());
    MPI_Comm_free(&half);
    return;
  }
  stf_sf first = nullptr, second = nullptr;
  device_ring(ck, MPI_COMM_WORLD, "MPI_COMM_WORLD: starts NVSHMEM", STF_SUCCESS, &first);
  ck.code(stf_nvshmem_init(MPI_COMM_WORLD), STF_ERR_UNSUPPORTED, "stf_nvshmem_init after the start");
  device_ring(ck, half, "a sub-communicator after the start", STF_SUCCESS, &second);
  device_ring(ck, MPI_COMM_SELF, "MPI_COMM_SELF after the start", STF_SUCCESS);
  // Destroyed in rank-dependent order; the pool's blocks come back.
  if (me % 2) std::swap(first, second);
  stf_destroy(&first);
  stf_destroy(&second);
  for (int k = 0; k < 3; k++) device_ring(ck, MPI_COMM_WORLD, "MPI_COMM_WORLD again, blocks reused", STF_SUCCESS);
  // Regions of 16 units x 64 KiB x 64 slots, 4 rings: over the default pool.
  if (size > 1) {
    device_ring(ck, MPI_COMM_WORLD, "more than the pool holds", STF_ERR_UNSUPPORTED, nullptr,
                "-stf_nvshmem_unit_bytes 65536 -stf_nvshmem_slots 64");
    ck.check(std::string(stf_last_error_message()).find("-stf_nvshmem_pool_mib") != std::string::npos,
             "message: %s", stf_last_error_message());
    device_ring(ck, MPI_COMM_WORLD, "after a refusal for the pool", STF_SUCCESS);
  }
  MPI_Comm_free(&half);
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
    const char *dev = std::getenv("STF_DEVICE");
    if (dev && std::string(dev) == "cuda" && stf_device_select("cuda") == STF_SUCCESS) {
      on_gpu(ck, me, size);
    } else {
      // Loaded, on a machine without a GPU (or without the cuda device active).
      ck.context("no GPU");
      refused(ck, me, size, "nvshmem");
      ck.context("stf_nvshmem_init without a GPU");
      ck.code(stf_nvshmem_init(MPI_COMM_WORLD), STF_ERR_UNSUPPORTED, "stf_nvshmem_init");
    }
#else
    ck.context("build without NVSHMEM");
    refused(ck, me, size, "this build has no NVSHMEM backend");
    ck.code(stf_nvshmem_init(MPI_COMM_WORLD), STF_ERR_UNSUPPORTED, "stf_nvshmem_init");
#endif
    const int rc = ck.finish();
    MPI_Finalize();
    return rc;
  }
}
