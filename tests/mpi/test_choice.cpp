// -stf_type auto and stf_explain: every rank makes the same choice although
// their traffic differs, the chosen SF moves data correctly (also after a
// timed trial, -stf_autotune), a bad profile is an error everywhere,
// stf_explain names every transport and strategy that applies, and a
// measured put-with-signal protocol makes auto take putsignal.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "check.h"
#include "graphs.h"

using namespace stft;

namespace {

// Rank r's leaves read r + 1 values from the following ranks: uneven traffic.
stf_sf uneven_sf(Checker &ck, const char *options, int rank, int size) {
  stf_sf sf = nullptr;
  ck.code(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS, "stf_create");
  ck.code(stf_set_sf_options(sf, options), STF_SUCCESS, "stf_set_sf_options");
  std::vector<stf_node> roots;
  for (int i = 0; i <= rank; i++) roots.push_back({(rank + 1 + i) % size, i % 3});
  ck.code(stf_set_graph(sf, 3, static_cast<stf_int>(roots.size()), nullptr, STF_COPY_VALUES, roots.data(),
                        STF_COPY_VALUES),
          STF_SUCCESS, "stf_set_graph");
  return sf;
}

void check_bcast(Checker &ck, stf_sf sf, int rank, int size) {
  double roots[3] = {100.0 * rank, 100.0 * rank + 1, 100.0 * rank + 2};
  std::vector<double> leaves(rank + 1, -1);
  ck.code(stf_bcast(sf, MPI_DOUBLE, roots, leaves.data(), MPI_REPLACE), STF_SUCCESS, "bcast");
  for (int i = 0; i <= rank; i++)
    ck.check(leaves[i] == 100.0 * ((rank + 1 + i) % size) + i % 3, "leaf %d = %g", i, leaves[i]);
}

void same_choice(Checker &ck, const char *options, int rank, int size) {
  ck.context(std::string("auto ") + options);
  stf_sf sf = uneven_sf(ck, options, rank, size);
  ck.code(stf_setup(sf), STF_SUCCESS, "stf_setup");
  const char *type = "";
  ck.code(stf_get_type(sf, &type), STF_SUCCESS, "stf_get_type");
  char mine[32] = {0}, first[32] = {0};
  std::snprintf(mine, sizeof mine, "%s", type);
  std::memcpy(first, mine, sizeof mine);
  MPI_Bcast(first, sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
  ck.check(std::strcmp(mine, first) == 0, "chose %s, rank 0 chose %s", mine, first);
  ck.check(std::strcmp(mine, "auto") != 0, "stf_get_type still says auto");
  check_bcast(ck, sf, rank, size);
  // A reset chooses again at the next set-up.
  ck.code(stf_reset(sf), STF_SUCCESS, "stf_reset");
  ck.code(stf_get_type(sf, &type), STF_SUCCESS, "stf_get_type");
  ck.check(std::strcmp(type, "auto") == 0, "after reset: %s", type);
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
}

std::string explain_text(Checker &ck, stf_sf sf) {
  return captured(ck, [&](std::FILE *f) { return stf_explain(sf, MPI_DOUBLE, f); }, "stf_explain");
}

void explain(Checker &ck, int rank, int size) {
  ck.context("explain");
  stf_sf sf = uneven_sf(ck, "-stf_ranks_per_node 2", rank, size);
  std::string before = explain_text(ck, sf);
  check_bcast(ck, sf, rank, size);
  std::string after = explain_text(ck, sf);
  if (rank == 0) {
    std::vector<const char *> want = {"basic", "neighbor", "window", "putsignal", "built-in values"};
    if (size > 2) want.insert(want.end(), {"2step", "3step", "split"});
    for (const char *w : want) ck.check(before.find(w) != std::string::npos, "no '%s' in:\n%s", w, before.c_str());
    ck.check(before.find("no bcast or reduce has run") != std::string::npos, "before any operation:\n%s",
             before.c_str());
    ck.check(after.find("measured (basic") != std::string::npos && after.find("<- in use") != std::string::npos,
             "after one bcast:\n%s", after.c_str());
  } else {
    ck.check(before.empty() && after.empty(), "rank %d wrote %zu bytes", rank, before.size());
  }
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
}

void bad_profile(Checker &ck, int rank, int size) {
  ck.context("bad profile");
  stf_sf sf = uneven_sf(ck, "-stf_type auto -stf_model_profile /nonexistent/profile.json", rank, size);
  ck.code(stf_setup(sf), STF_ERR_OPTION, "stf_setup with a missing profile");
  ck.has_message("missing profile");
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
}

// A profile whose put-with-signal protocol in a node (onesided.heap) is
// measured and far cheaper than MPI's messages: auto takes putsignal for
// traffic inside one node.
void measured_protocol_picks_putsignal(Checker &ck, int rank, int size) {
  if (size < 2) return;  // no message, nothing to choose
  ck.context("auto with the protocol measured");
  // One file, which rank 0 writes (the ranks' options must be alike).
  char path[64];
  std::snprintf(path, sizeof path, "/tmp/stf-test-choice-%ld.json", static_cast<long>(getpid()));
  MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (std::FILE *f = rank == 0 ? std::fopen(path, "w") : nullptr) {
    std::fputs(R"({"format": "starforest-profile", "version": 1, "defaults": false,
      "postal": {"same_node": {"measured": true, "segments": [{"from_bytes": 0, "alpha": 2e-6, "beta": 1e-10}]}},
      "onesided": {"heap": {"measured": true, "segments": [{"from_bytes": 0, "alpha": 1e-7, "beta": 1e-10}]}}})",
               f);
    std::fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const std::string options = std::string("-stf_type auto -stf_model_profile ") + path;
  stf_sf sf = uneven_sf(ck, options.c_str(), rank, size);
  ck.code(stf_setup(sf), STF_SUCCESS, "stf_setup");
  const char *type = "";
  ck.code(stf_get_type(sf, &type), STF_SUCCESS, "stf_get_type");
  ck.check(std::strcmp(type, "putsignal") == 0, "chose %s", type);
  check_bcast(ck, sf, rank, size);
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) std::remove(path);
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Checker ck("test_choice", argc, argv, 1);
  same_choice(ck, "-stf_type auto", rank, size);
  same_choice(ck, "-stf_type auto -stf_ranks_per_node 2", rank, size);
  same_choice(ck, "-stf_type auto -stf_ranks_per_node 1 -stf_autotune 3", rank, size);
  explain(ck, rank, size);
  bad_profile(ck, rank, size);
  measured_protocol_picks_putsignal(ck, rank, size);
  const int rc = ck.finish();
  MPI_Finalize();
  return rc;
}
