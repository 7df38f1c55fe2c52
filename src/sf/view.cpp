// stf_view: every rank describes its graph and plan; rank 0 prints them all.
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "sf/sf.h"

namespace stf {
namespace {

// What the index analysis made of one list, i.e. how it is packed.
std::string pattern(const IndexList &l) {
  std::ostringstream s;
  switch (l.kind) {
    case IndexKind::contiguous: s << "contiguous from " << l.start; break;
    case IndexKind::strided:
      s << "strided(dx=" << l.dx << ",dy=" << l.dy << ",dz=" << l.dz << ",X=" << l.X << ",Y=" << l.Y << ") from "
        << l.start;
      break;
    case IndexKind::indexed: s << "indexed" << (l.has_duplicates ? " with duplicates" : ""); break;
  }
  return s.str();
}

void describe_messages(std::ostringstream &s, const char *title, const Messages &m,
                       const std::vector<IndexList> &lists, const char *contiguous_note) {
  stf_int total = m.offset.back();
  s << "  " << title << ": " << m.count() << " peer(s), " << total << " unit(s)\n";
  for (int k = 0; k < m.count(); k++)
    s << "    rank " << m.ranks[k] << ": " << m.size(k) << " unit(s), " << pattern(lists[k])
      << (lists[k].kind == IndexKind::contiguous ? contiguous_note : "") << "\n";
}

// The node layout, for the title: how nodes were found and their sizes.
std::string node_layout(const Topology &t) {
  std::ostringstream s;
  s << t.nnodes << " node(s) ";
  if (t.ranks_per_node > 0) s << "emulated, " << t.ranks_per_node << " consecutive ranks each";
  else s << "of ranks that share memory";
  s << " (ranks per node:";
  for (int n = 0; n < t.nnodes && n < 16; n++) s << " " << t.node_size(n);
  if (t.nnodes > 16) s << " ...";
  s << ")";
  return s.str();
}

// How a bcast moves the self part (a reduce goes the other way, likewise).
std::string self_method(const Plan &p) {
  if (p.self_in_place) return "nothing for REPLACE on one array (root i is leaf i), else scatter";
  if (p.self_root.kind == IndexKind::contiguous && p.self_leaf.kind == IndexKind::contiguous)
    return "memcpy for REPLACE, else scatter";
  if (p.self_runs.empty()) return "scatter";
  return "on the host " + std::to_string(p.self_runs.size()) + " run(s) of consecutive roots and leaves, a memcpy "
         "each for REPLACE, and a scatter of the other " + std::to_string(p.self_rest_root.n) + " unit(s)";
}

std::string describe(stf_sf sf) {
  std::ostringstream s;
  s << "[rank " << sf->rank << "] ";
  if (!sf->has_graph) {
    s << "no graph\n";
    return s.str();
  }
  s << sf->nroots << " root(s), " << sf->nleaves << " leaf(ves) in slots [" << sf->minleaf << ", " << sf->maxleaf
    << "]" << (sf->ilocal ? "" : " (contiguous)") << "\n";
  if (!sf->plan) {
    s << "  not set up\n";
    return s.str();
  }
  const Plan &p = *sf->plan;
  const Topology &t = *sf->topology;
  s << "  node " << t.node << " of " << t.nnodes << ", local rank " << t.local_rank << " of " << t.local_size
    << "\n";
  const std::string transport = sf->transport->describe_rank();
  if (!transport.empty()) s << "  " << transport << "\n";
  if (sf->strategy) s << sf->strategy->describe_rank();
  describe_messages(s, "roots -> leaves, sent to (bcast)", p.root, p.root_lists, ", no pack");
  describe_messages(s, "roots -> leaves, received from (bcast)", p.leaf, p.leaf_lists, ", no unpack for REPLACE");
  s << "  self: " << p.self_leaf.n << " edge(s)";
  if (p.self_leaf.n > 0)
    s << ", roots " << pattern(p.self_root) << ", leaves " << pattern(p.self_leaf) << ": " << self_method(p);
  s << "\n";
  return s.str();
}

}  // namespace
}  // namespace stf

extern "C" int stf_view(stf_sf sf, FILE *out) try {
  STF_CHECK(stf::check_sf(sf));
  if (!out) out = stdout;
  std::string mine = stf::describe(sf);
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(sf->rank == 0 ? sf->size : 0), displs;
  STF_MPI(MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, sf->comm));
  std::string all;
  if (sf->rank == 0) {
    displs.assign(sf->size, 0);
    for (int r = 1; r < sf->size; r++) displs[r] = displs[r - 1] + lens[r - 1];
    all.resize(displs.back() + lens.back());
  }
  STF_MPI(MPI_Gatherv(mine.data(), len, MPI_CHAR, &all[0], lens.data(), displs.data(), MPI_CHAR, 0, sf->comm));
  if (sf->rank == 0) {
    // Every rank has the same transport; set up, it describes itself.
    std::string transport = sf->strategy    ? sf->strategy->describe()
                            : sf->transport ? sf->transport->describe()
                                            : sf->opts.type;
    if (!sf->choice.empty()) transport += ", chosen by " + sf->choice;
    std::string nodes = sf->topology ? ", " + stf::node_layout(*sf->topology) : "";
    std::fprintf(out,
                 "star forest on %d rank(s)%s\n  transport %s\n  two-sided discovery %s; device data: stream model %s, "
                 "device-aware %s\n%s",
                 sf->size, nodes.c_str(), transport.c_str(), stf::twosided_name(sf->opts.twosided),
                 stf::stream_model_name(sf->opts.stream_model), stf::device_aware_name(sf->opts.device_aware),
                 all.c_str());
    std::fflush(out);
  }
  return STF_SUCCESS;
} STF_API_CATCH
