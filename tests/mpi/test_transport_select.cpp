// Choosing the transport: stf_set_type, the options string and STF_TYPE all
// select it; unknown names are STF_ERR_OPTION; after set-up it is fixed; the
// view names the transport and, for neighbor, its fetch-and-op fallback. A
// ring graph with every operation checks that data moves under each type
// (the oracle suite runs again under STF_TYPE=neighbor for the rest).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "check.h"

using namespace stft;

namespace {

// What stf_view prints on rank 0 ("" elsewhere).
std::string view_text(Checker &ck, stf_sf sf) {
  std::FILE *f = std::tmpfile();
  ck.code(stf_view(sf, f), STF_SUCCESS, "stf_view");
  std::string text;
  if (f) {
    std::rewind(f);
    char buf[512];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
    std::fclose(f);
  }
  return text;
}

// Ring: my leaf 0 reads root 0 of the next rank, leaf 1 my own root 0.
void ring(Checker &ck, stf_sf sf, int me, int size) {
  stf_node remote[2] = {{(me + 1) % size, 0}, {me, 0}};
  ck.code(stf_set_graph(sf, 1, 2, nullptr, STF_COPY_VALUES, remote, STF_COPY_VALUES), STF_SUCCESS, "stf_set_graph");
}

// crossing: also the fetch-and-op end / bcast begin swap below, which the
// window transport does not allow (its begins wait for their peers' begins).
void move_data(Checker &ck, stf_sf sf, int me, int size, bool crossing) {
  const int next = (me + 1) % size;
  double root = 10.0 + me, leaves[2] = {0, 0};
  ck.code(stf_bcast(sf, MPI_DOUBLE, &root, leaves, MPI_REPLACE), STF_SUCCESS, "stf_bcast");
  ck.check(leaves[0] == 10.0 + next && leaves[1] == 10.0 + me, "bcast gave %g %g", leaves[0], leaves[1]);
  // My root has two leaves, the previous rank's leaf 0 and my leaf 1, both
  // holding my root's value after the bcast.
  double sum = 0;
  ck.code(stf_reduce(sf, MPI_DOUBLE, leaves, &sum, MPI_SUM), STF_SUCCESS, "stf_reduce");
  ck.check(sum == 2 * (10.0 + me), "reduce gave %g, want %g", sum, 2 * (10.0 + me));
  int counter = 0, ones[2] = {1, 1}, old[2] = {-1, -1};
  ck.code(stf_fetch_and_op(sf, MPI_INT, &counter, ones, old, MPI_SUM), STF_SUCCESS, "stf_fetch_and_op");
  ck.check(counter == 2, "fetch-and-op counter %d, want 2", counter);
  ck.check(old[0] >= 0 && old[0] <= 1 && old[1] >= 0 && old[1] <= 1, "fetch-and-op old values %d %d", old[0],
           old[1]);

  // A fetch-and-op, then a bcast begun before or after its end depending on
  // the rank: the return leg is posted from end, so its place among other
  // operations' starts differs between ranks, and a transport that needs a
  // common order (neighbor) must not use it for that leg.
  if (!crossing) return;
  int c1 = 100, o1[2] = {-1, -1};
  double fresh[2] = {0, 0};
  stf_request q1 = nullptr, qb = nullptr;
  ck.code(stf_fetch_and_op_begin(sf, MPI_INT, &c1, ones, o1, MPI_SUM, &q1), STF_SUCCESS, "fetch_and_op_begin");
  if (me % 2) {
    ck.code(stf_bcast_begin(sf, MPI_DOUBLE, &root, fresh, MPI_REPLACE, &qb), STF_SUCCESS, "bcast_begin");
    ck.code(stf_fetch_and_op_end(sf, &q1), STF_SUCCESS, "fetch_and_op_end");
  } else {
    ck.code(stf_fetch_and_op_end(sf, &q1), STF_SUCCESS, "fetch_and_op_end");
    ck.code(stf_bcast_begin(sf, MPI_DOUBLE, &root, fresh, MPI_REPLACE, &qb), STF_SUCCESS, "bcast_begin");
  }
  ck.code(stf_bcast_end(sf, &qb), STF_SUCCESS, "bcast_end");
  // Contributions apply in (leaf rank, leaf slot) order: my leaf 0 on the
  // next rank's root competes with that rank's leaf 1, my leaf 1 on my root
  // with the previous rank's leaf 0.
  const int prev = (me + size - 1) % size;
  const int want0 = size == 1 ? 0 : me > next, want1 = size == 1 ? 1 : me > prev;
  ck.check(c1 == 102 && o1[0] == 100 + want0 && o1[1] == 100 + want1,
           "fetch-and-op gave %d, old values %d %d, want 102, %d %d", c1, o1[0], o1[1], 100 + want0, 100 + want1);
  ck.check(fresh[0] == 10.0 + next && fresh[1] == 10.0 + me, "bcast in flight gave %g %g", fresh[0], fresh[1]);
}

// Pattern SFs under each collective transport against the same pattern
// under basic (checked by the oracle suite): bcast and reduce with REPLACE
// and SUM, fetch-and-op; the view names the collective or the fallback.
// Types are chosen through the global options string, since pattern SFs are
// set up as they are created.
void patterns(Checker &ck, int me, int size) {
  const stf_int mine = (me + 1) % 3;  // roots per rank (allgather, gather); some own none
  const stf_int b = 2;          // alltoall block
  struct Case {
    stf_pattern kind;
    const char *type, *view;  // the view says this
  };
  const bool equal = size == 1;  // all ranks own the same number of roots
  const Case cases[] = {
      {STF_PATTERN_ALLGATHER, "collective", equal ? "MPI_Iallgather " : "MPI_Iallgatherv"},
      {STF_PATTERN_ALLGATHER, "allgatherv", "MPI_Iallgatherv"},
      {STF_PATTERN_ALLGATHER, "allgather", equal ? "MPI_Iallgather " : "basic fallback for everything"},
      {STF_PATTERN_GATHER, "collective", size == 1 ? "MPI_Iallgather" : equal ? "MPI_Igather " : "MPI_Igatherv"},
      {STF_PATTERN_GATHER, "gatherv", "MPI_Igatherv"},
      {STF_PATTERN_GATHER, "alltoall", size == 1 ? "MPI_Ialltoall" : "basic fallback for everything"},
      {STF_PATTERN_ALLTOALL, "collective", size == 1 ? "MPI_Iallgather" : "MPI_Ialltoall"},
      {STF_PATTERN_ALLTOALL, "alltoall", "MPI_Ialltoall"},
      {STF_PATTERN_ALLTOALL, "allgatherv", size == 1 ? "MPI_Iallgatherv" : "basic fallback for everything"},
  };
  for (const Case &c : cases) {
    ck.context(std::string("pattern ") + std::to_string(static_cast<int>(c.kind)) + " under " + c.type);
    const stf_int n = c.kind == STF_PATTERN_ALLTOALL ? b : mine;
    stf_sf sf = nullptr, ref = nullptr;
    ck.code(stf_set_options((std::string("-stf_type ") + c.type).c_str()), STF_SUCCESS, "stf_set_options");
    ck.code(stf_create_from_pattern(MPI_COMM_WORLD, c.kind, n, &sf), STF_SUCCESS, "pattern SF");
    ck.code(stf_set_options("-stf_type basic"), STF_SUCCESS, "stf_set_options basic");
    ck.code(stf_create_from_pattern(MPI_COMM_WORLD, c.kind, n, &ref), STF_SUCCESS, "reference SF");
    if (!sf || !ref) return;
    std::string text = view_text(ck, sf);
    if (me == 0) ck.check(text.find(c.view) != std::string::npos, "view lacks '%s':\n%s", c.view, text.c_str());
    stf_int nroots = 0, nleaves = 0;
    const stf_int *ilocal = nullptr;
    const stf_node *iremote = nullptr;
    ck.code(stf_get_graph(sf, &nroots, &nleaves, &ilocal, &iremote), STF_SUCCESS, "stf_get_graph");
    const stf_int nslots = nleaves;  // patterns use slots 0..nleaves-1
    for (MPI_Op op : {MPI_REPLACE, MPI_SUM}) {
      std::vector<long> roots(nroots), leaves(nslots, 5), rroots, rleaves(nslots, 5);
      for (stf_int k = 0; k < nroots; ++k) roots[k] = 1000L * me + k;
      rroots = roots;
      ck.code(stf_bcast(sf, MPI_LONG, roots.data(), leaves.data(), op), STF_SUCCESS, "bcast");
      ck.code(stf_bcast(ref, MPI_LONG, rroots.data(), rleaves.data(), op), STF_SUCCESS, "reference bcast");
      ck.check(leaves == rleaves, "bcast %s differs from basic", op == MPI_SUM ? "SUM" : "REPLACE");
      for (stf_int i = 0; i < nleaves && op == MPI_REPLACE; ++i)
        ck.check(leaves[i] == 1000L * iremote[i].rank + iremote[i].index, "leaf %d = %ld", i, leaves[i]);
      for (stf_int i = 0; i < nslots; ++i) leaves[i] = rleaves[i] = 7L * me + i;
      ck.code(stf_reduce(sf, MPI_LONG, leaves.data(), roots.data(), op), STF_SUCCESS, "reduce");
      ck.code(stf_reduce(ref, MPI_LONG, rleaves.data(), rroots.data(), op), STF_SUCCESS, "reference reduce");
      ck.check(roots == rroots, "reduce %s differs from basic", op == MPI_SUM ? "SUM" : "REPLACE");
    }
    std::vector<int> counter(nroots, 1), ones(nslots, 1), old(nslots, -1), rcounter = counter, rold = old;
    ck.code(stf_fetch_and_op(sf, MPI_INT, counter.data(), ones.data(), old.data(), MPI_SUM), STF_SUCCESS, "fetch");
    ck.code(stf_fetch_and_op(ref, MPI_INT, rcounter.data(), ones.data(), rold.data(), MPI_SUM), STF_SUCCESS,
            "reference fetch");
    ck.check(counter == rcounter && old == rold, "fetch-and-op differs from basic");
    stf_destroy(&sf);
    stf_destroy(&ref);
  }
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Checker ck("test_transport_select", parse_seed(argc, argv, 1));

  // The process default: STF_TYPE if set (the test is registered with it too).
  const char *env = std::getenv("STF_TYPE");
  const std::string dflt = env && *env ? env : "basic";
  stf_sf sf = nullptr;
  ck.code(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS, "stf_create");
  const char *type = nullptr;
  ck.code(stf_get_type(sf, &type), STF_SUCCESS, "stf_get_type");
  ck.check(type && dflt == type, "default type '%s', want '%s'", type ? type : "(null)", dflt.c_str());

  for (const char *t : {"basic", "neighbor", "window", "collective"}) {
    ck.context(std::string("stf_set_type ") + t);
    ck.code(stf_set_type(sf, t), STF_SUCCESS, "stf_set_type");
    ck.code(stf_get_type(sf, &type), STF_SUCCESS, "stf_get_type");
    ck.check(type && std::strcmp(type, t) == 0, "type '%s'", type ? type : "(null)");
    ck.code(stf_set_type(sf, "window-of-opportunity"), STF_ERR_OPTION, "unknown type");
    ck.has_message("unknown type");
    ck.code(stf_get_type(sf, &type), STF_SUCCESS, "stf_get_type");
    ck.check(type && std::strcmp(type, t) == 0, "unknown type changed the type to '%s'", type ? type : "(null)");
    ck.code(stf_set_type(sf, nullptr), STF_ERR_NULL, "NULL type");

    ring(ck, sf, me, size);
    ck.code(stf_setup(sf), STF_SUCCESS, "stf_setup");
    ck.code(stf_set_type(sf, "basic"), STF_ERR_STATE, "stf_set_type after set-up");
    std::string text = view_text(ck, sf);
    if (me == 0) {
      ck.check(text.find(std::string("transport ") + t) != std::string::npos, "view does not name %s:\n%s", t,
               text.c_str());
      // Every transport but basic names its fallbacks.
      const char *note = std::strcmp(t, "neighbor") == 0   ? "fetch-and-op return: basic fallback"
                         : std::strcmp(t, "window") == 0   ? "basic fallback: fetch-and-op"
                         : std::strcmp(t, "collective") == 0 ? "basic fallback for everything"  // no pattern
                                                             : nullptr;
      ck.check(note ? text.find(note) != std::string::npos : text.find("fallback") == std::string::npos,
               "view and fallback disagree:\n%s", text.c_str());
    }
    move_data(ck, sf, me, size, std::strcmp(t, "window") != 0);
    ck.code(stf_reset(sf), STF_SUCCESS, "stf_reset");
  }

  ck.context("options");
  ck.code(stf_set_sf_options(sf, "-stf_window_sync pscw"), STF_SUCCESS, "-stf_window_sync pscw");
  ck.code(stf_set_sf_options(sf, "-stf_window_sync later"), STF_ERR_OPTION, "unknown window sync");
  ck.check(std::strstr(stf_options_help(), "stf_window_sync") != nullptr, "help lacks -stf_window_sync");
  ck.code(stf_set_sf_options(sf, "-stf_type neighbor"), STF_SUCCESS, "stf_set_sf_options");
  ck.code(stf_get_type(sf, &type), STF_SUCCESS, "stf_get_type");
  ck.check(type && std::strcmp(type, "neighbor") == 0, "options string gave '%s'", type ? type : "(null)");
  ck.code(stf_set_sf_options(sf, "-stf_type bogus"), STF_ERR_OPTION, "unknown type in options");
  ck.code(stf_set_options("-stf_type bogus"), STF_ERR_OPTION, "unknown type in global options");
  ck.check(std::strstr(stf_options_help(), "neighbor") != nullptr, "stf_options_help does not list neighbor");

  // Duplicates keep the type.
  stf_sf dup = nullptr;
  ck.code(stf_duplicate(sf, STF_DUPLICATE_CONFIG, &dup), STF_SUCCESS, "stf_duplicate");
  ck.code(stf_get_type(dup, &type), STF_SUCCESS, "stf_get_type");
  ck.check(type && std::strcmp(type, "neighbor") == 0, "duplicate has type '%s'", type ? type : "(null)");
  ck.code(stf_destroy(&dup), STF_SUCCESS, "stf_destroy");
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");

  patterns(ck, me, size);

  int rc = ck.finish();
  MPI_Finalize();
  return rc;
}
