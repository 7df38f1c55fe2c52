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

// The line of stf_explain's predictions marked in use ("" if none).
std::string line_in_use(const std::string &text) {
  const size_t mark = text.find("<- in use");
  if (mark == std::string::npos) return "";
  const size_t start = text.rfind('\n', mark);
  return text.substr(start == std::string::npos ? 0 : start + 1, mark - (start == std::string::npos ? 0 : start + 1));
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

// A profile in one file, which rank 0 writes (the ranks' options must be
// alike), named by what and this job; its path.
std::string profile_file(const char *what, int rank, const char *json) {
  char path[80];
  std::snprintf(path, sizeof path, "/tmp/stf-test-choice-%s-%ld.json", what, static_cast<long>(getpid()));
  MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (std::FILE *f = rank == 0 ? std::fopen(path, "w") : nullptr) {
    std::fputs(json, f);
    std::fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return path;
}

// A profile whose put-with-signal protocol in a node (onesided.heap) is
// measured and far cheaper than MPI's messages: auto takes putsignal for
// traffic inside one node.
void measured_protocol_picks_putsignal(Checker &ck, int rank, int size) {
  if (size < 2) return;  // no message, nothing to choose
  ck.context("auto with the protocol measured");
  const std::string path = profile_file("protocol", rank, R"({"format": "starforest-profile", "version": 1,
      "defaults": false,
      "postal": {"same_node": {"measured": true, "segments": [{"from_bytes": 0, "alpha": 2e-6, "beta": 1e-10}]}},
      "onesided": {"heap": {"measured": true, "segments": [{"from_bytes": 0, "alpha": 1e-7, "beta": 1e-10}]}}})");
  const std::string options = "-stf_type auto -stf_model_profile " + path;
  stf_sf sf = uneven_sf(ck, options.c_str(), rank, size);
  ck.code(stf_setup(sf), STF_SUCCESS, "stf_setup");
  const char *type = "";
  ck.code(stf_get_type(sf, &type), STF_SUCCESS, "stf_get_type");
  ck.check(std::strcmp(type, "putsignal") == 0, "chose %s", type);
  check_bcast(ck, sf, rank, size);
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
  // For 64-byte units, which do not fit putsignal's 16-byte regions, the
  // same profile gives the protocol no advantage: the choice follows the
  // unit it is told, and says so.
  ck.context("auto with the protocol measured, for 64-byte units");
  sf = uneven_sf(ck, (options + " -stf_auto_unit_bytes 64").c_str(), rank, size);
  ck.code(stf_setup(sf), STF_SUCCESS, "stf_setup");
  ck.code(stf_get_type(sf, &type), STF_SUCCESS, "stf_get_type");
  ck.check(std::strcmp(type, "putsignal") != 0, "chose putsignal for units it cannot hold");
  const std::string view = captured(ck, [&](std::FILE *f) { return stf_view(sf, f); }, "stf_view");
  if (rank == 0) ck.check(view.find("predicted for 64-byte units") != std::string::npos, "view:\n%s", view.c_str());
  check_bcast(ck, sf, rank, size);
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) std::remove(path.c_str());
}

// A profile whose put-with-signal protocol in a node is far cheaper than
// MPI's messages there, and whose messages between nodes are dear: auto
// takes a node-aware strategy with putsignal for its steps in a node, the
// SF runs it (stf_explain marks "strategy/putsignal" in use), a reset takes
// the step transport back, and a step transport the user names is kept.
void putsignal_in_node_steps(Checker &ck, int rank, int size) {
  if (size < 4) return;  // two emulated nodes of two ranks at least
  ck.context("auto with putsignal steps in a node");
  const std::string path = profile_file("steps", rank, R"({"format": "starforest-profile", "version": 1,
      "defaults": false,
      "postal": {"same_node": {"measured": true, "segments": [{"from_bytes": 0, "alpha": 5e-5, "beta": 1e-10}]},
                 "other_node": {"measured": true, "gap": 1e-4,
                                "segments": [{"from_bytes": 0, "alpha": 1e-4, "beta": 1e-9}]}},
      "onesided": {"heap": {"measured": true, "segments": [{"from_bytes": 0, "alpha": 1e-7, "beta": 1e-10}]}}})");
  const std::string base = "-stf_type auto -stf_ranks_per_node 2 -stf_model_profile " + path;
  for (const char *extra : {"", " -stf_autotune 2"}) {
    ck.context(std::string("auto with putsignal steps in a node") + extra);
    stf_sf sf = uneven_sf(ck, (base + extra).c_str(), rank, size);
    ck.code(stf_setup(sf), STF_SUCCESS, "stf_setup");
    const char *type = "";
    ck.code(stf_get_type(sf, &type), STF_SUCCESS, "stf_get_type");
    const std::string chosen = type;
    check_bcast(ck, sf, rank, size);
    const std::string text = explain_text(ck, sf);
    const std::string view = captured(ck, [&](std::FILE *f) { return stf_view(sf, f); }, "stf_view");
    if (rank == 0 && !*extra) {  // the model's pick
      ck.check(chosen == "2step" || chosen == "3step" || chosen == "split", "chose %s", type);
      ck.check(line_in_use(text).find(chosen + "/putsignal ") != std::string::npos, "not %s/putsignal in use:\n%s",
               type, text.c_str());
    } else if (rank == 0) {  // a timed pick may be any of those timed, which include a putsignal step
      const size_t timed = view.find("timed over");
      ck.check(timed != std::string::npos && view.find("/putsignal", timed) != std::string::npos,
               "no putsignal step timed:\n%s", view.c_str());
    }
    ck.code(stf_reset(sf), STF_SUCCESS, "stf_reset");
    ck.code(stf_get_type(sf, &type), STF_SUCCESS, "stf_get_type");
    ck.check(std::strcmp(type, "auto") == 0, "after reset: %s", type);
    ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
  }
  ck.context("auto with the step transport named by the user");
  stf_sf sf = uneven_sf(ck, (base + " -stf_node_transport basic").c_str(), rank, size);
  ck.code(stf_setup(sf), STF_SUCCESS, "stf_setup");
  const std::string text = explain_text(ck, sf);
  if (rank == 0) {
    const std::string line = line_in_use(text);
    ck.check(!line.empty() && line.find("/putsignal") == std::string::npos, "a putsignal step in use:\n%s",
             text.c_str());
  }
  check_bcast(ck, sf, rank, size);
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) std::remove(path.c_str());
}

// -stf_autotune's trial in the unit it is told: whole doubles (SUM) and
// bytes (REPLACE); a unit out of range is refused.
void autotune_unit(Checker &ck, int rank, int size) {
  for (const char *bytes : {"24", "12"}) {
    const std::string options =
        std::string("-stf_type auto -stf_ranks_per_node 1 -stf_autotune 2 -stf_auto_unit_bytes ") + bytes;
    same_choice(ck, options.c_str(), rank, size);
  }
  ck.context("auto unit out of range");
  stf_sf sf = nullptr;
  ck.code(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS, "stf_create");
  ck.code(stf_set_sf_options(sf, "-stf_auto_unit_bytes 0"), STF_ERR_OPTION, "-stf_auto_unit_bytes 0");
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
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
  autotune_unit(ck, rank, size);
  putsignal_in_node_steps(ck, rank, size);
  const int rc = ck.finish();
  MPI_Finalize();
  return rc;
}
