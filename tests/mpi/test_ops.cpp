// Every operation x unit x op against the serial oracle, on structured and
// random graphs.
//
// Structured graphs and the first --full random graphs run the whole matrix
// (all units, all their ops, fetch_and_op, gather/scatter, undefined ops);
// the remaining random graphs run the core units (MPI_INT with every op,
// MPI_DOUBLE) to cover many graph shapes cheaply. Blocking and begin/end
// forms alternate over the combinations, so both are exercised everywhere.
//
// Options: --seed N (STF_TEST_SEED), --graphs N random graphs
// (STF_TEST_GRAPHS), --full N of them with the full matrix (STF_TEST_FULL).
#include <cstdio>
#include <string>

#include "check.h"
#include "graphs.h"
#include "oracle.h"
#include "runner.h"
#include "units.h"

using namespace stft;

namespace {

void run_matrix(Checker &ck, stf_sf sf, const GlobalGraph &g, int me, const std::string &gname,
                const std::vector<UnitSpec> &units, bool full, std::uint64_t key) {
  unsigned combo = static_cast<unsigned>(key);  // alternates the form
  for (std::size_t ui = 0; ui < units.size(); ++ui) {
    const UnitSpec &u = units[ui];
    if (!full && !u.core) continue;
    for (std::size_t oi = 0; oi < u.ops.size(); ++oi) {
      const MPI_Op op = u.ops[oi];
      const DataGen d{&g, &u, op, hash_key(key, ui, oi)};
      const Form f = ++combo % 2 ? Form::Split : Form::Blocking;
      const std::string what = gname + " " + u.name + " " + op_name(op) + " ";
      ck.context(what + "bcast " + form_name(f));
      run_bcast(ck, sf, d, me, f);
      ck.context(what + "reduce " + form_name(f));
      run_reduce(ck, sf, d, me, f);
      bool fetch = false;
      for (MPI_Op fo : u.fetch) fetch |= fo == op;
      if (fetch) {
        const Form ff = combo % 3 ? Form::Split : Form::Blocking;
        ck.context(what + "fetch_and_op " + form_name(ff));
        run_fetch(ck, sf, d, me, ff);
      }
    }
    if (!full) continue;
    const DataGen d{&g, &u, MPI_REPLACE, hash_key(key, ui, 99)};
    const Form f = ++combo % 2 ? Form::Split : Form::Blocking;
    ck.context(gname + " " + u.name + " gather " + form_name(f));
    run_gather(ck, sf, d, me, f);
    ck.context(gname + " " + u.name + " scatter " + form_name(f));
    run_scatter(ck, sf, d, me, f);
    for (const auto &bad : u.bad) {
      ck.context(gname + " " + u.name + " undefined op " + op_name(bad.first));
      run_bad_op(ck, sf, DataGen{&g, &u, bad.first, hash_key(key, ui, 98)}, me, bad.second);
    }
  }
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::uint64_t seed = parse_seed(argc, argv, 20240611);
  Checker ck("test_ops", seed);
  start_watchdog("test_ops", seed, 280);
  const int nrandom = static_cast<int>(parse_long(argc, argv, "--graphs", "STF_TEST_GRAPHS", size >= 8 ? 10 : 16));
  const int nfull = static_cast<int>(parse_long(argc, argv, "--full", "STF_TEST_FULL", size >= 8 ? 2 : 3));

  std::vector<UnitSpec> units = make_units();
  const std::vector<NamedGraph> graphs = standard_graphs(seed, nrandom, MPI_COMM_WORLD);
  const int nstructured = static_cast<int>(graphs.size()) - nrandom;
  const stf_copy_mode modes[] = {STF_COPY_VALUES, STF_USE_POINTER, STF_OWN_POINTER};

  for (std::size_t gi = 0; gi < graphs.size(); ++gi) {
    const NamedGraph &ng = graphs[gi];
    const bool full = static_cast<int>(gi) < nstructured + nfull;
    ck.context(ng.name + " setup");
    GlobalGraph g = gather_graph(ng.local, MPI_COMM_WORLD);
    stf_sf sf = make_sf(ck, ng.local, MPI_COMM_WORLD, nullptr, modes[gi % 3]);
    int ok = sf != nullptr, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all_ok) {  // skip collectively rather than hang
      if (sf) stf_destroy(&sf);
      continue;
    }
    check_leaf_range(ck, sf, g, me);
    ck.context(ng.name + " degree");
    run_degree(ck, sf, g, me, gi % 2 ? Form::Split : Form::Blocking);
    run_degree(ck, sf, g, me, gi % 2 ? Form::Blocking : Form::Split);  // cached second time
    ck.context(ng.name + " multi-SF");
    check_multi_sf(ck, sf, g, me, units[0], hash_key(seed, gi, 1));
    run_matrix(ck, sf, g, me, ng.name, units, full, hash_key(seed, gi));
    ck.context(ng.name + " destroy");
    ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
  }
  free_units(units);
  int rc = ck.finish();
  MPI_Finalize();
  return rc;
}
