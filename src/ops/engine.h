// What the operations of one SF share at run time: the plan and transport
// they move data with, the pool of request slots, counters, and the device
// copies of the plan's index lists. The SF layer owns one per SF and points
// it at the SF's plan and transport at set-up.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/options.h"
#include "core/topology.h"
#include "graph/graph.h"
#include "ops/deferred_sends.h"
#include "plan/plan.h"
#include "transport/transport.h"

namespace stf {

class DeviceIndexCache;  // device/device_indices.h

struct Engine {
  Engine();
  ~Engine();  // memory.cpp, where the device's index cache is known

  // Set by the SF layer: always graph, opts and deferred; plan and
  // transport while set up.
  const Graph *graph = nullptr;
  const Options *opts = nullptr;
  const Plan *plan = nullptr;
  Transport *transport = nullptr;
  DeferredSends *deferred = nullptr;  // the communicator's queue (cached on it)

  std::vector<stf_request> pool;      // request slots, reused (request.h)
  std::vector<stf_request> idle;      // the slots of pool not in use, last released last
  // Slots kept for begins that repeat an earlier begin's arguments, most
  // recently begun first (operation.cpp, request_pool.cpp); NULL where none.
  static constexpr int kKept = 8;
  stf_request kept[kKept] = {};
  // Summaries of the arguments of the last kKept begins that found no kept
  // slot, in a ring (operation.cpp): a begin keeps its slot only when its
  // arguments come back among them, so begins that never repeat keep none.
  std::uint64_t seen[kKept] = {};
  int seen_next = 0;                  // the ring's oldest entry, written next
  int pending = 0;                    // requests begun and not ended
  // Why new operations are refused (deferred_sends.cpp: a deferred post
  // failed, and the peers' operations no longer pair with this rank's).
  std::string broken;
  unsigned long long fetch_sequence = 0;  // numbers fetch-and-ops in begin order
  stf_stats stats{};                  // counted by the operations
  // Timings per public operation kind (stf_op_kind), in clock ticks
  // (core/clock.h), made seconds when read; and the tick at which the
  // current end or stf_test call began, so that the wait is measured with
  // one more read.
  struct Timing {
    unsigned long long begin = 0, end = 0, wait = 0;
  } timing[STF_OP_KINDS];
  unsigned long long call_start = 0;

  // Where messages go, per direction ([0] root to leaf, sent by the root side;
  // [1] leaf to root): peers on this rank's node and the units sent to them,
  // and units sent in all (for the locality counters).
  struct SentByLocality {
    int peers_in_node = 0;
    long long units_in_node = 0, units = 0;
  } sent[2];

  // For device data: the plan's index lists copied to the device (made by
  // the first operation on device data), and whether all messages of a side
  // together name a slot twice (-1: not known yet; [0] root side, [1] leaf
  // side).
  std::unique_ptr<DeviceIndexCache> device_indices;
  signed char device_dups[2] = {-1, -1};
};

// Point e at a new plan, its nodes and transport (all null: not set up).
// Request slots and device copies of the old plan are freed (no request may
// be in flight).
void engine_set_plan(Engine *e, const Plan *plan, const Topology *topology, Transport *transport);

}  // namespace stf
