// Set-up: the plan (discovery and index analysis), then the transport for
// it, then the operations pointed at both.
#include "core/error.h"
#include "sf/sf.h"
#include "transport/registry.h"

namespace stf {

int install_plan(stf_sf sf, std::unique_ptr<Plan> plan) {
  std::unique_ptr<Transport> transport;
  STF_CHECK(create_transport(TransportContext{*sf, *sf, *plan, sf->opts}, &transport));
  sf->plan = std::move(plan);
  sf->transport = std::move(transport);
  engine_set_plan(&sf->engine, sf->plan.get(), sf->transport.get());
  return STF_SUCCESS;
}

int ensure_setup(stf_sf sf) {
  STF_CHECK(check_graph(sf));
  if (sf->plan) return STF_SUCCESS;
  auto plan = std::make_unique<Plan>();
  STF_CHECK(build_plan(*sf, *sf, sf->opts, plan.get()));
  return install_plan(sf, std::move(plan));
}

}  // namespace stf

extern "C" int stf_setup(stf_sf sf) { return stf::ensure_setup(sf); }
