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
  GraphComms *cache = nullptr;
  STF_CHECK(cached_on(comm, &cache));
  const long long mine = candidate(*cache, sources, destinations);
  long long range[2] = {mine, -mine};  // min and -max of every rank's candidate
  STF_MPI(MPI_Allreduce(MPI_IN_PLACE, range, 2, MPI_LONG_LONG, MPI_MIN, comm));
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
  cache->list.push_back({cache->created++, sources, destinations, graph, 1});
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
