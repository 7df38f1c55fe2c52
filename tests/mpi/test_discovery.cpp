// Two-sided discovery: the same graphs set up with -stf_twosided nbx and
// with -stf_twosided allreduce (and with the process default, which the
// environment may set) give the same degrees and the same data movement,
// matching the oracle. Includes ranks without neighbours, self-only and
// all-to-one graphs, and reset + setup again with the other algorithm.
#include <cstring>
#include <string>

#include "check.h"
#include "graphs.h"
#include "oracle.h"
#include "runner.h"
#include "units.h"

using namespace stft;

namespace {

struct Result {
  std::vector<stf_int> degree;
  Buffer leaf, root;
};

// Degree, bcast (MPI_SUM) and reduce (MPI_SUM) on one SF, each checked
// against the oracle; the raw results are returned for cross-comparison.
Result run_all(Checker &ck, stf_sf sf, const GlobalGraph &g, int me, const UnitSpec &ui,
               std::uint64_t key) {
  run_degree(ck, sf, g, me, Form::Blocking);
  const stf_int *deg = nullptr;
  Result r{{}, Buffer(ui, 0, 0), Buffer(ui, 0, 0)};
  if (stf_compute_degree(sf, &deg) == STF_SUCCESS && deg)
    r.degree.assign(deg, deg + g.ranks[me].nroots);
  const DataGen db{&g, &ui, MPI_SUM, hash_key(key, 1)}, dr{&g, &ui, MPI_SUM, hash_key(key, 2)};
  run_bcast(ck, sf, db, me, Form::Split);
  run_reduce(ck, sf, dr, me, Form::Blocking);
  // The runners own their buffers; repeat once more to keep the results.
  r.leaf = db.leaf_buffer(me);
  Buffer root = db.root_buffer(me);
  stf_bcast(sf, ui.type, root.data(), r.leaf.data(), MPI_SUM);
  r.root = dr.root_buffer(me);
  Buffer leaf = dr.leaf_buffer(me);
  stf_reduce(sf, ui.type, leaf.data(), r.root.data(), MPI_SUM);
  return r;
}

bool same_bytes(const Buffer &a, const Buffer &b, std::size_t extent) {
  return a.size() == b.size() &&
         std::memcmp(a.unit(-Buffer::kGuard), b.unit(-Buffer::kGuard),
                     (a.size() + 2 * Buffer::kGuard) * extent) == 0;
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Checker ck("test_discovery", argc, argv, 20240614);
  const std::uint64_t seed = ck.seed();
  const int nrandom = static_cast<int>(parse_long(argc, argv, "--graphs", "STF_TEST_GRAPHS", 30));
  std::vector<UnitSpec> units = make_units();
  const UnitSpec &ui = units[0];  // MPI_INT

  const std::vector<NamedGraph> graphs = standard_graphs(seed, nrandom, MPI_COMM_WORLD);
  const char *variants[] = {"-stf_twosided nbx", "-stf_twosided allreduce", nullptr};
  const char *variant_names[] = {"nbx", "allreduce", "default"};
  for (std::size_t gi = 0; gi < graphs.size(); ++gi) {
    const NamedGraph &ng = graphs[gi];
    GlobalGraph g = gather_graph(ng.local, MPI_COMM_WORLD);
    const std::uint64_t key = hash_key(seed, gi);
    std::vector<Result> results;
    for (int v = 0; v < 3; ++v) {
      ck.context(ng.name + " " + variant_names[v]);
      stf_sf sf = make_sf(ck, ng.local, MPI_COMM_WORLD, variants[v], STF_COPY_VALUES);
      int ok = sf != nullptr, all_ok = 0;
      MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
      if (!all_ok) {
        if (sf) stf_destroy(&sf);
        continue;
      }
      results.push_back(run_all(ck, sf, g, me, ui, key));
      check_multi_sf(ck, sf, g, me, ui, hash_key(key, 3));
      stf_destroy(&sf);
    }
    ck.context(ng.name + " nbx vs allreduce vs default");
    for (std::size_t k = 1; k < results.size(); ++k) {
      ck.check(results[k].degree == results[0].degree, "degrees differ between variants");
      ck.check(same_bytes(results[k].leaf, results[0].leaf, ui.extent), "bcast results differ between variants");
      ck.check(same_bytes(results[k].root, results[0].root, ui.extent), "reduce results differ between variants");
    }
  }

  // Process-wide defaults, and one SF switched between algorithms by reset.
  for (int v = 0; v < 2; ++v) {
    ck.context(std::string("stf_set_options ") + variants[v]);
    ck.code(stf_set_options(variants[v]), STF_SUCCESS, "stf_set_options");
    for (std::size_t gi = 0; gi < graphs.size(); gi += 3) {
      GlobalGraph g = gather_graph(graphs[gi].local, MPI_COMM_WORLD);
      ck.context(graphs[gi].name + " default " + variants[v]);
      stf_sf sf = make_sf(ck, graphs[gi].local, MPI_COMM_WORLD, nullptr, STF_COPY_VALUES);
      if (!sf) continue;
      run_all(ck, sf, g, me, ui, hash_key(seed, gi, v));
      // reset keeps the options; switch the algorithm and set up again.
      ck.code(stf_reset(sf), STF_SUCCESS, "stf_reset");
      ck.code(stf_set_sf_options(sf, variants[1 - v]), STF_SUCCESS, "stf_set_sf_options after reset");
      const LocalGraph &lg = graphs[gi].local;
      ck.code(stf_set_graph(sf, lg.nroots, lg.nleaves(), lg.ilocal_ptr(), STF_COPY_VALUES, lg.iremote.data(), STF_COPY_VALUES),
              STF_SUCCESS, "stf_set_graph after reset");
      ck.code(stf_setup(sf), STF_SUCCESS, "stf_setup after reset");
      run_all(ck, sf, g, me, ui, hash_key(seed, gi, v, 1));
      stf_destroy(&sf);
    }
  }
  free_units(units);
  int rc = ck.finish();
  MPI_Finalize();
  return rc;
}
