#include "model/strategy.h"

#include <algorithm>
#include <cmath>

namespace stf::model {

const char *strategy_name(Strategy s) {
  switch (s) {
    case Strategy::standard: return "standard";
    case Strategy::two_step: return "2step";
    case Strategy::three_step: return "3step";
    case Strategy::split: return "split";
  }
  return "?";
}

namespace {

// Adds one step: m messages of b bytes in all to one locality class; off the
// node, node_bytes in node_messages messages leave the node at once (the
// max-rate bounds; node_messages 0: unknown, the rank's own count).
void step(Cost *c, const Postal &p, double m, double b, const MaxRate *rate = nullptr, double node_bytes = 0,
          double node_messages = 0) {
  if (m <= 0) return;
  const double s = b / m;
  const PostalSegment &seg = p.segment(s);
  c->latency += seg.alpha;
  const double node_gap = rate ? rate->node_gap : 0;  // 0: the node adds nothing to its ranks' own gaps
  // A rank's further messages each take max(gap, beta s) (Postal::time_many):
  // the bandwidth term below already holds beta s of each, so the gap
  // adds only what it exceeds that by.
  const double own_gap = std::max(0.0, p.gap - seg.beta * s);
  c->injection += std::max((m - 1) * own_gap, (std::max(m, node_messages) - 1) * node_gap);
  const double own = seg.beta * b;
  const double node_rate = rate ? rate->node_rate_for(s) : 0;
  const double node = node_rate > 0 ? node_bytes / node_rate : 0;
  if (node > own) {
    c->node_bandwidth += node;
  } else {
    c->bandwidth += own;
  }
}

double total(const Cost &c) { return c.latency + c.injection + c.bandwidth + c.node_bandwidth + c.busy; }

// Steps that run at once: a phase pays the busy step's excess over a small
// message's idle latency, the largest of the classes it sends to (those
// given a positive message count), once.
class Phase {
 public:
  explicit Phase(Cost *c) : c_(c) {}
  Phase &to(const Postal &p, double messages) {
    if (messages > 0 && p.busy_step > 0) excess_ = std::max(excess_, p.busy_step - p.time(8));
    return *this;
  }
  ~Phase() { c_->busy += excess_; }

 private:
  Cost *c_;
  double excess_ = 0;
};

Cost finish(Cost c) {
  c.seconds = total(c);
  const std::pair<double, const char *> terms[] = {{c.latency, "latency"},
                                                   {c.injection, "injection"},
                                                   {c.bandwidth, "bandwidth"},
                                                   {c.node_bandwidth, "node bandwidth"},
                                                   {c.busy, "busy step"}};
  double best = -1;
  for (const auto &t : terms)
    if (t.first > best) {
      best = t.first;
      c.dominant = t.second;
    }
  return c;
}

// Deduplication ratio of the bytes leaving a node (1 when unknown).
double dedup(const CommStats &st) {
  if (st.bytes_leaving_node <= 0 || st.unique_bytes_leaving_node <= 0) return 1;
  return std::min(1.0, st.unique_bytes_leaving_node / st.bytes_leaving_node);
}

// A node's messages leaving it: the count measured, else every rank as
// busy as the busiest (P times its count).
double node_count(double measured, const CommStats &st, double rank_count) {
  return measured > 0 ? measured : std::max(1.0, st.ranks_per_node) * rank_count;
}

double local_peers(const CommStats &st) { return std::max(0.0, st.ranks_per_node - 1); }

// The node-aware strategies through the aggregating ranks: 3step (chunk 0:
// one message per node pair) and split.
Cost aggregated(const Network &net, const CommStats &st, double chunk) {
  Cost c;
  const double P = std::max(1.0, st.ranks_per_node), r = dedup(st);
  const double unique = r * st.bytes_leaving_node, D = st.destination_nodes;
  const double gathered = st.messages_other_node > 0 ? std::min(local_peers(st), st.messages_other_node) : 0;
  {
    Phase local(&c);
    local.to(net.same_node, st.messages_same_node + gathered);
    step(&c, net.same_node, st.messages_same_node, st.bytes_same_node);
    step(&c, net.same_node, gathered, r * st.bytes_other_node);
  }
  if (st.messages_other_node <= 0) return finish(c);
  double chunks = D, largest = st.max_node_pair_bytes;
  if (chunk > 0) {
    // split's rule (nodeaware pair_chunks): a node pair's bytes in
    // ceil(bytes / chunk) equal chunks, at most one per rank of a node;
    // the mean pair for the count, the busiest for the size.
    const double mean_pair = D > 0 ? unique / D : unique;
    chunks = std::max(D, D * std::min(std::ceil(mean_pair / chunk), P));
    largest /= std::min(std::max(1.0, std::ceil(largest / chunk)), P);
  }
  const double g = std::max(largest, unique / P);
  {
    Phase across(&c);
    across.to(net.other_node, chunks);
    step(&c, net.other_node, std::ceil(chunks / P), g, &net.off_node, unique, chunks);
  }
  {
    Phase redistribution(&c);
    redistribution.to(net.same_node, gathered);
    step(&c, net.same_node, gathered, g);
  }
  return finish(c);
}

}  // namespace

Cost cost_standard(const Network &net, const CommStats &st) {
  Cost c;
  {
    Phase all(&c);
    all.to(net.same_node, st.messages_same_node).to(net.other_node, st.messages_other_node);
    step(&c, net.same_node, st.messages_same_node, st.bytes_same_node);
    step(&c, net.other_node, st.messages_other_node, st.bytes_other_node, &net.off_node, st.bytes_leaving_node,
         node_count(st.messages_leaving_node, st, st.messages_other_node));
  }
  return finish(c);
}

Cost cost_2step(const Network &net, const CommStats &st) {
  Cost c;
  const double r = dedup(st);
  const double m = std::min(st.messages_other_node, std::max(1.0, st.destination_nodes));
  {
    Phase first(&c);
    first.to(net.same_node, st.messages_same_node).to(net.other_node, st.messages_other_node);
    step(&c, net.same_node, st.messages_same_node, st.bytes_same_node);
    if (st.messages_other_node > 0)
      step(&c, net.other_node, m, r * st.bytes_other_node, &net.off_node, r * st.bytes_leaving_node,
           node_count(st.rank_node_pairs, st, m));
  }
  if (st.messages_other_node > 0) {
    const double forwarded = std::min(local_peers(st), st.messages_other_node);
    Phase redistribution(&c);
    redistribution.to(net.same_node, forwarded);
    step(&c, net.same_node, forwarded, r * st.bytes_other_node);
  }
  return finish(c);
}

Cost cost_3step(const Network &net, const CommStats &st) { return aggregated(net, st, 0); }

Cost cost_split(const Network &net, const CommStats &st, double chunk_bytes) {
  return aggregated(net, st, chunk_bytes > 0 ? chunk_bytes : 0);
}

Cost cost_of(Strategy s, const Network &net, const CommStats &st, double chunk_bytes) {
  switch (s) {
    case Strategy::standard: return cost_standard(net, st);
    case Strategy::two_step: return cost_2step(net, st);
    case Strategy::three_step: return cost_3step(net, st);
    case Strategy::split: return cost_split(net, st, chunk_bytes);
  }
  return Cost{};
}

std::vector<Ranked> rank_strategies(const Network &net, const CommStats &st,
                                    const std::vector<double> &split_chunk_bytes) {
  std::vector<Ranked> out;
  for (Strategy s : {Strategy::standard, Strategy::two_step, Strategy::three_step})
    out.push_back(Ranked{s, 0, cost_of(s, net, st)});
  for (double chunk : split_chunk_bytes) out.push_back(Ranked{Strategy::split, chunk, cost_split(net, st, chunk)});
  std::stable_sort(out.begin(), out.end(),
                   [](const Ranked &a, const Ranked &b) { return a.cost.seconds < b.cost.seconds; });
  return out;
}

}  // namespace stf::model
