// The option parser on arbitrary strings, through an SF's options
// (stf_set_sf_options) and the process-wide ones (stf_set_options), which
// must agree on what they accept. An SF whose options were accepted is
// then set up on a small graph and must bcast and reduce correctly: every
// accepted combination has to work on one rank.
#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "starforest.h"

namespace {

// stf_set_options appends what it accepts to one process-wide string that
// nothing resets; past this many bytes accepted strings go to SFs only, so
// that a long run does not grow it (and every stf_create's parse of it)
// without bound.
constexpr std::size_t process_budget = 4096;
std::size_t process_used = 0;

// One rank, 3 roots, 5 leaves in scattered slots, two of them on root 0.
constexpr int nroots = 3, nleaves = 5, nslots = 7;
const stf_int ilocal[nleaves] = {4, 0, 2, 6, 5};
const stf_node iremote[nleaves] = {{0, 2}, {0, 0}, {0, 0}, {0, 1}, {0, 2}};

// Set-up may refuse what this build or machine lacks (the nvshmem plug-in, a
// GPU); anything else that fails, or a wrong result, is a finding.
void run_graph(stf_sf sf) {
  if (stf_set_graph(sf, nroots, nleaves, ilocal, STF_USE_POINTER, iremote, STF_USE_POINTER)) std::abort();
  const int rc = stf_setup(sf);
  if (rc == STF_ERR_UNSUPPORTED) return;
  if (rc != STF_SUCCESS) std::abort();
  int root[nroots] = {10, 20, 30}, leaf[nslots] = {-1, -1, -1, -1, -1, -1, -1};
  if (stf_bcast(sf, MPI_INT, root, leaf, MPI_REPLACE)) std::abort();
  for (int i = 0; i < nleaves; i++)
    if (leaf[ilocal[i]] != root[iremote[i].index]) std::abort();
  if (leaf[1] != -1 || leaf[3] != -1) std::abort();  // slots of no leaf are left alone
  if (stf_reduce(sf, MPI_INT, leaf, root, MPI_SUM)) std::abort();
  if (root[0] != 30 || root[1] != 40 || root[2] != 90) std::abort();
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
  const std::string text(reinterpret_cast<const char *>(data), size);  // a NUL ends the C string early
  stf_sf sf = nullptr;
  if (stf_create(MPI_COMM_SELF, &sf)) std::abort();
  const int rc = stf_set_sf_options(sf, text.c_str());
  if (rc != STF_SUCCESS && (rc != STF_ERR_OPTION || !*stf_last_error_message())) std::abort();

  if (rc != STF_SUCCESS || process_used + size <= process_budget) {
    if (stf_set_options(text.c_str()) != rc) std::abort();
    if (rc == STF_SUCCESS) process_used += size + 1;
  }
  if (rc == STF_SUCCESS) run_graph(sf);
  if (stf_destroy(&sf)) std::abort();
  return 0;
}
