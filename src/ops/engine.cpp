// An SF's run-time state (engine.h): made with its device index cache, and
// pointed at each new plan.
#include "ops/engine.h"

#include "device/device_indices.h"
#include "ops/request.h"

namespace stf {

Engine::Engine() : device_indices(std::make_unique<DeviceIndexCache>()) {}
Engine::~Engine() = default;

void engine_set_plan(Engine *e, const Plan *plan, const Topology *topology, Transport *transport) {
  free_requests(*e);
  e->device_indices->clear();  // a failure leaves nothing to free
  e->device_dups[0] = e->device_dups[1] = -1;
  e->plan = plan;
  e->transport = transport;
  for (int d = 0; d < 2; d++) {
    e->sent[d] = Engine::SentByLocality();
    if (!plan) continue;
    const Messages &m = d == 0 ? plan->root : plan->leaf;
    for (int k = 0; k < m.count(); k++) {
      e->sent[d].units += m.size(k);
      if (!topology->same_node(m.ranks[k])) continue;
      e->sent[d].peers_in_node++;
      e->sent[d].units_in_node += m.size(k);
    }
  }
}

}  // namespace stf
