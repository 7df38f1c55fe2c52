// SimGrid plug-in (LD_PRELOAD into smpirun's process): per-locality
// latency and bandwidth factors, which SMPI's configuration cannot give
// (its factors are the same for every route). A message between ranks of
// one host takes the profile's same_node segment for its size, others the
// other_node one: the factors turn the route's latency and bottleneck
// bandwidth into that segment's alpha + delay * size and 1/beta.
//
// STF_SMPI_FACTORS names a file of lines
// "same_node|other_node FROM ALPHA BETA [DELAY]" (scripts/platform writes
// it), segments in increasing FROM; DELAY (seconds per byte, default 0) is
// a part of a message's cost per byte that no link shares.
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Segment {
  double from, alpha, beta, delay;
};
std::vector<Segment> same_node, other_node;

const Segment &segment_for(double size, const simgrid::s4u::Host *src, const simgrid::s4u::Host *dst) {
  const std::vector<Segment> &segs = src == dst ? same_node : other_node;
  std::size_t k = 0;
  while (k + 1 < segs.size() && segs[k + 1].from <= size) k++;
  return segs[k];
}

double route_latency(const std::vector<simgrid::s4u::Link *> &links) {
  double lat = 0;
  for (const simgrid::s4u::Link *l : links) lat += l->get_latency();
  return lat;
}

double route_bandwidth(const std::vector<simgrid::s4u::Link *> &links) {
  double bw = 1e300;
  for (const simgrid::s4u::Link *l : links) bw = std::min(bw, l->get_bandwidth());
  return bw;
}

void load(const char *path) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream cols(line);
    std::string where;
    Segment s{0, 0, 0, 0};
    if (!(cols >> where >> s.from >> s.alpha >> s.beta)) continue;
    cols >> s.delay;
    (where == "same_node" ? same_node : other_node).push_back(s);
  }
  if (same_node.empty() || other_node.empty()) {
    std::fprintf(stderr, "locality_factors: no same_node and other_node segments in %s\n", path);
    std::exit(2);
  }
}

void install() {
  auto *model = simgrid::s4u::Engine::get_instance()->get_netzone_root()->get_network_model();
  model->set_lat_factor_cb([](double size, const simgrid::s4u::Host *src, const simgrid::s4u::Host *dst,
                              const std::vector<simgrid::s4u::Link *> &links, const auto &) {
    const double lat = route_latency(links);
    const Segment &seg = segment_for(size, src, dst);
    return lat > 0 ? (seg.alpha + seg.delay * size) / lat : 1.0;
  });
  model->set_bw_factor_cb([](double size, const simgrid::s4u::Host *src, const simgrid::s4u::Host *dst,
                             const std::vector<simgrid::s4u::Link *> &links, const auto &) {
    return 1.0 / (segment_for(size, src, dst).beta * route_bandwidth(links));
  });
}

struct Register {
  Register() {
    const char *path = std::getenv("STF_SMPI_FACTORS");
    if (!path) return;
    load(path);
    simgrid::s4u::Engine::on_platform_created_cb(install);
  }
} registered;

}  // namespace
