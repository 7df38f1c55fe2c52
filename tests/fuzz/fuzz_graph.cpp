// Graph validation, set-up and one bcast and reduce on a single rank
// (MPI_COMM_SELF), from a graph decoded out of the input: a transport,
// counts, leaf slots (or none) and roots whose ranks and offsets may be out
// of range. Errors are fine; a crash, a sanitizer report or a wrong result
// is a finding. graph_seeds.py writes the seed corpus in this encoding.
#include <fuzzer/FuzzedDataProvider.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "starforest.h"

namespace {

// Inputs stay small so that each runs in about a millisecond.
constexpr int max_leaves = 4096;
constexpr stf_int max_buffer = 1 << 20;  // root or leaf slots the operations may need

const char *const transports[] = {"basic",    "neighbor",  "window", "collective", "allgatherv", "gatherv",
                                  "alltoall", "putsignal", "2step",  "3step",      "split"};

// leaf = root + leaf at every leaf (bcast with MPI_SUM), then
// root = root + every leaf of the root (reduce with MPI_SUM), computed
// without the library.
void expect(const std::vector<stf_int> &slot, const std::vector<stf_node> &remote, std::vector<int> *root,
            std::vector<int> *leaf) {
  for (std::size_t i = 0; i < slot.size(); i++) (*leaf)[slot[i]] += (*root)[remote[i].index];
  for (std::size_t i = 0; i < slot.size(); i++) (*root)[remote[i].index] += (*leaf)[slot[i]];
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) {
  // Never finalized: libFuzzer ends with exit(), and what Open MPI's
  // MPI_Finalize does not free would read as leaks; unfinalized, it is
  // still reachable.
  MPI_Init(argc, argv);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const char *transport = in.PickValueInArray(transports);
  const bool validate = in.ConsumeBool();
  const bool contiguous = in.ConsumeBool();  // ilocal NULL
  const stf_copy_mode mode = in.ConsumeBool() ? STF_COPY_VALUES : STF_USE_POINTER;
  // Mostly small counts, slots and offsets, now and then negative ones;
  // "wide" graphs take any int for them (only their set-up runs when they
  // would need large buffers).
  const bool wide = in.ConsumeBool();
  auto value = [&](stf_int lo, stf_int hi) {
    return wide ? in.ConsumeIntegral<stf_int>() : in.ConsumeIntegralInRange(lo, hi);
  };
  const stf_int nroots = value(-2, 1000);
  const stf_int nleaves = in.ConsumeIntegralInRange<stf_int>(-2, max_leaves);
  const std::size_t n = nleaves > 0 ? nleaves : 0;
  std::vector<stf_int> ilocal(n);
  std::vector<stf_node> iremote(n);
  for (std::size_t i = 0; i < n; i++) {
    ilocal[i] = contiguous ? stf_int(i) : value(-1, 2 * max_leaves);
    // Rank 0 is the only valid one; a set high bit gives any other.
    const uint8_t r = in.ConsumeIntegral<uint8_t>();
    iremote[i].rank = r & 0x80 ? int8_t(r) : 0;
    iremote[i].index = value(-1, 1100);
  }

  stf_sf sf = nullptr;
  if (stf_create(MPI_COMM_SELF, &sf) != STF_SUCCESS) std::abort();
  const std::string options = std::string("-stf_type ") + transport + " -stf_validate " + (validate ? "1" : "0");
  if (stf_set_sf_options(sf, options.c_str()) != STF_SUCCESS) std::abort();
  int rc = stf_set_graph(sf, nroots, nleaves, contiguous ? nullptr : ilocal.data(), mode,
                         n ? iremote.data() : nullptr, mode);
  if (rc == STF_SUCCESS) rc = stf_setup(sf);
  stf_int maxleaf = -1;
  for (std::size_t i = 0; i < n; i++) maxleaf = std::max(maxleaf, ilocal[i]);
  if (rc == STF_SUCCESS && nroots <= max_buffer && maxleaf < max_buffer) {
    // The graph passed every check, so its offsets and slots are in range.
    std::vector<int> root(nroots > 0 ? nroots : 1), leaf(maxleaf + 1 > 0 ? maxleaf + 1 : 1);
    for (std::size_t k = 0; k < root.size(); k++) root[k] = int(k % 97) + 1;
    for (std::size_t k = 0; k < leaf.size(); k++) leaf[k] = int(k % 89) * 3;
    std::vector<int> want_root = root, want_leaf = leaf;
    expect(ilocal, iremote, &want_root, &want_leaf);
    if (stf_bcast(sf, MPI_INT, root.data(), leaf.data(), MPI_SUM) != STF_SUCCESS) std::abort();
    if (stf_reduce(sf, MPI_INT, leaf.data(), root.data(), MPI_SUM) != STF_SUCCESS) std::abort();
    if (root != want_root || leaf != want_leaf) std::abort();
  }
  if (stf_destroy(&sf) != STF_SUCCESS) std::abort();
  return 0;
}
