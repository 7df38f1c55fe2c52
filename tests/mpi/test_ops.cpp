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
      const Form f = form_of(++combo);
      const std::string what = gname + " " + u.name + " " + op_name(op) + " ";
      ck.context(what + "bcast " + form_name(f));
      run_bcast(ck, sf, d, me, f);
      ck.context(what + "reduce " + form_name(f));
      run_reduce(ck, sf, d, me, f);
      bool fetch = false;
      for (MPI_Op fo : u.fetch) fetch |= fo == op;
      if (fetch) {
        const Form ff = form_of(combo + 1);
        ck.context(what + "fetch_and_op " + form_name(ff));
        run_fetch(ck, sf, d, me, ff);
      }
    }
    if (!full) continue;
    const DataGen d{&g, &u, MPI_REPLACE, hash_key(key, ui, 99)};
    const Form f = form_of(++combo);
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

// Structured graphs come first in standard_graphs; count the random ones.
int nrandom_of(const std::vector<NamedGraph> &graphs) {
  int n = 0;
  for (const auto &g : graphs) n += g.name.rfind("random#", 0) == 0;
  return n;
}

// Every graph of the list on comm: setup (explicit or implicit), leaf range,
// degree, multi-SF, then the operation matrix.
void run_graphs(Checker &ck, MPI_Comm comm, const std::string &label,
                const std::vector<NamedGraph> &graphs, int nfull, const std::vector<UnitSpec> &units,
                std::uint64_t seed) {
  int me;
  MPI_Comm_rank(comm, &me);
  const int nrandom_full_end = static_cast<int>(graphs.size()) - nrandom_of(graphs) + nfull;
  const stf_copy_mode modes[] = {STF_COPY_VALUES, STF_USE_POINTER, STF_OWN_POINTER};
  for (std::size_t gi = 0; gi < graphs.size(); ++gi) {
    const NamedGraph &ng = graphs[gi];
    const std::string name = label + ng.name;
    const bool full = static_cast<int>(gi) < nrandom_full_end;
    const bool explicit_setup = gi % 4 != 3;  // else the first operation sets up
    ck.context(name + " setup");
    GlobalGraph g = gather_graph(ng.local, comm);
    stf_sf sf = make_sf(ck, ng.local, comm, nullptr, modes[gi % 3], explicit_setup);
    int ok = sf != nullptr, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, comm);
    if (!all_ok) {  // skip collectively rather than hang
      if (sf) stf_destroy(&sf);
      continue;
    }
    check_leaf_range(ck, sf, g, me);
    const std::uint64_t key = hash_key(seed, gi, label.size());
    if (gi % 2) {  // multi-SF before any degree was asked for
      ck.context(name + " multi-SF first");
      check_multi_sf(ck, sf, g, me, units[0], hash_key(key, 1));
    }
    ck.context(name + " degree");
    run_degree(ck, sf, g, me, form_of(gi));
    run_degree(ck, sf, g, me, form_of(gi + 1));  // cached second time
    if (gi % 2 == 0) {
      ck.context(name + " multi-SF");
      check_multi_sf(ck, sf, g, me, units[0], hash_key(key, 1));
    }
    run_matrix(ck, sf, g, me, name, units, full, key);
    ck.context(name + " destroy");
    ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
  }
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Checker ck("test_ops", argc, argv, 20240611);
  const std::uint64_t seed = ck.seed();
  const int nrandom = static_cast<int>(parse_long(argc, argv, "--graphs", "STF_TEST_GRAPHS", 100));
  const int nfull = static_cast<int>(parse_long(argc, argv, "--full", "STF_TEST_FULL", 30));
  std::vector<UnitSpec> units = make_units();

  run_graphs(ck, MPI_COMM_WORLD, "", standard_graphs(seed, nrandom, MPI_COMM_WORLD), nfull, units, seed);

  // On sub-communicators whose ranks differ from the world ranks (odd and
  // even world ranks, numbered backwards): the SF must use its own ranks.
  MPI_Comm sub;
  MPI_Comm_split(MPI_COMM_WORLD, me % 2, size - me, &sub);
  run_graphs(ck, sub, "subcomm ", standard_graphs(hash_key(seed, 2), nrandom / 4, sub), nfull / 4,
             units, seed);
  MPI_Comm_free(&sub);

  free_units(units);
  int rc = ck.finish();
  MPI_Finalize();
  return rc;
}
