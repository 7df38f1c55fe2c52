#include "transport/graph_comms.h"

#include <climits>
#include <list>

#include "core/comm.h"
#include "core/error.h"

namespace stf {
namespace {

struct GraphComm {
  long long id;  // creation number: the same on every rank
  std::vector<int> sources, destinations;
  MPI_Comm graph;
  int users;
};

// Cached on the SF's communicator (core/comm.h).
struct GraphComms {
  std::list<GraphComm> list;
  long long created = 0;
};

// The oldest communicator whose neighbours are these, or -1.
long long candidate(const GraphComms &cache, const std::vector<int> &sources, const std::vector<int> &destinations) {
  for (const GraphComm &g : cache.list)
    if (g.sources == sources && g.destinations == destinations) return g.id;
  return -1;
}

}  // namespace

int acquire_graph_comm(MPI_Comm comm, const std::vector<int> &sources, const std::vector<int> &destinations,
                       MPI_Comm *out) {
  // Everything is allocated before the allreduce (the cache, the entry a
  // new communicator would get), and a rank where that fails (out of
  // memory) still takes part in it: every rank fails, none is left in a
  // collective.
  GraphComms *cache = nullptr;
  std::list<GraphComm> entry;
  int rc = STF_SUCCESS;
  try {
    rc = cached_on(comm, &cache);
    entry.push_back({-1, sources, destinations, MPI_COMM_NULL, 1});
  } catch (...) {
    rc = exception_error();
  }
  const long long mine = rc ? -1 : candidate(*cache, sources, destinations);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // min and -max of every rank's candidate; the lowest rank that failed
  long long range[3] = {mine, -mine, rc ? rank : LLONG_MAX};
  STF_MPI(MPI_Allreduce(MPI_IN_PLACE, range, 3, MPI_LONG_LONG, MPI_MIN, comm));
  if (rc) return rc;
  if (range[2] != LLONG_MAX)
    return set_error(STF_ERR_MEMORY,
                     "neighbor transport: rank %lld failed before making the graph communicator (its message says "
                     "why)",
                     range[2]);
  if (mine >= 0 && range[0] == -range[1]) {
    for (GraphComm &g : cache->list)
      if (g.id == mine) {
        g.users++;
        *out = g.graph;
        return STF_SUCCESS;
      }
  }
  MPI_Comm graph = MPI_COMM_NULL;
  STF_MPI(MPI_Dist_graph_create_adjacent(comm, static_cast<int>(sources.size()), sources.data(), MPI_UNWEIGHTED,
                                         static_cast<int>(destinations.size()), destinations.data(), MPI_UNWEIGHTED,
                                         MPI_INFO_NULL, 0, &graph));
  MPI_Comm_set_errhandler(graph, MPI_ERRORS_RETURN);
  entry.front().id = cache->created++;
  entry.front().graph = graph;
  cache->list.splice(cache->list.end(), entry);
  *out = graph;
  return STF_SUCCESS;
}

void release_graph_comm(MPI_Comm comm, MPI_Comm graph) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  GraphComms *cache = nullptr;
  if (finalized || cached_on(comm, &cache) != STF_SUCCESS) return;
  for (auto it = cache->list.begin(); it != cache->list.end(); ++it)
    if (it->graph == graph) {
      if (--it->users == 0) {
        MPI_Comm_free(&it->graph);
        cache->list.erase(it);
      }
      return;
    }
}

}  // namespace stf
