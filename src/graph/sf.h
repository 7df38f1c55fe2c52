// The SF object: graph as the user gave it, options, and the lazily built
// plan and transport.
#pragma once

#include <deque>
#include <memory>
#include <vector>

#include "core/options.h"
#include "starforest.h"

namespace stf {
struct Plan;
class Transport;
}  // namespace stf

struct stf_sf_s {
  MPI_Comm comm = MPI_COMM_NULL;  // private duplicate of the user's communicator
  int rank = 0, size = 1;
  stf::Options opts;

  bool has_graph = false;
  stf_int nroots = 0, nleaves = 0;
  const stf_int *ilocal = nullptr;  // nullptr: leaves 0..nleaves-1
  const stf_node *iremote = nullptr;
  bool free_ilocal = false, free_iremote = false;
  stf_int minleaf = 0, maxleaf = -1;

  std::unique_ptr<stf::Plan> plan;           // built by stf_setup
  std::unique_ptr<stf::Transport> transport;
  std::vector<stf_int> degree;               // valid once degree_known
  bool degree_known = false;
  stf_sf multi = nullptr;                    // multi-SF, built on demand
  std::vector<stf_request> pool;             // request slots, reused (see ops/request.h)
  int pending = 0;                           // requests begun and not ended
  unsigned long long fetch_sequence = 0;     // numbers fetch-and-op returns (see basic.cpp)
  std::deque<stf_request> deferred_sends;    // stream model C: begun, sends not posted yet, in begin order
  stf_stats stats{};                         // counted by the ops layer (ops/exchange.cpp)

  stf_int leaf_at(stf_int i) const { return ilocal ? ilocal[i] : i; }
};

namespace stf {
// STF_ERR_NULL unless sf is non-NULL; STF_ERR_STATE without a graph.
int check_sf(stf_sf sf);
int check_graph(stf_sf sf);
// Build plan and transport if not done yet. Collective.
int ensure_setup(stf_sf sf);
// Free the request pool (no request may be in flight).
void free_requests(stf_sf sf);
}  // namespace stf
