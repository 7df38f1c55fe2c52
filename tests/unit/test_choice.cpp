// Choosing a transport: the timed trial's pick (through an injected clock)
// and the model's ranking on synthetic profiles where the answer is known.
#include <algorithm>

#include <gtest/gtest.h>

#include "sf/choice.h"
#include "transport/registry.h"

namespace {

using stf::Prediction;

TEST(Autotune, PicksTheSmallestMedianDespiteOutliers) {
  // Candidate 1 is fastest but has one very slow round; 2 is steady.
  int calls[3] = {0, 0, 0};
  std::vector<std::vector<double>> samples(3);
  const int pick = stf::autotune_pick(7, [&](int c) {
    const int k = calls[c]++;
    if (c == 0) return 5.0 + 0.1 * k;
    if (c == 1) return k == 3 ? 100.0 : 3.0;
    return 4.0;
  }, &samples);
  EXPECT_EQ(pick, 1);
  EXPECT_EQ(calls[0], 7);
  EXPECT_EQ(calls[1], 7);
  EXPECT_EQ(calls[2], 7);
  // Each candidate's times, sorted: the median is the middle one.
  ASSERT_EQ(samples[1].size(), 7u);
  EXPECT_TRUE(std::is_sorted(samples[1].begin(), samples[1].end()));
  EXPECT_EQ(samples[1][3], 3.0);
  EXPECT_EQ(samples[1][6], 100.0);
}

stf::Traffic many_node_pairs() {
  // 8 nodes of 4 ranks; each rank sends to 28 ranks on 7 other nodes, and
  // every value it sends is wanted by all 4 ranks of a node.
  stf::Traffic t;
  t.ranks = 32, t.nodes = 8, t.ranks_per_node = 4;
  t.messages_in_node = 3, t.units_in_node = 30;
  t.messages_off_node = 28, t.units_off_node = 280;
  t.destination_nodes = 7, t.max_units_to_node = 40;
  t.node_pairs = 7, t.node_units_off = 4 * 280, t.node_distinct_off = 280, t.max_pair_distinct = 40;
  t.node_messages_off = 4 * 28;
  return t;
}

const Prediction &find(const std::vector<Prediction> &p, const char *type) {
  for (const Prediction &x : p)
    if (x.label() == type) return x;
  static Prediction none;
  ADD_FAILURE() << type << " not predicted";
  return none;
}

TEST(Predict, SlowNetworkFavoursNodeAware) {
  stf::model::Profile p = stf::model::default_profile();
  for (auto &s : p.network.other_node.segments) s.alpha = 50e-6;  // a slow network
  const auto preds = stf::predict_all(p, many_node_pairs(), 8, 16384, true, 16);
  ASSERT_FALSE(preds.empty());
  EXPECT_TRUE(preds.front().type == "3step" || preds.front().type == "split" || preds.front().type == "2step")
      << preds.front().type;
  EXPECT_LT(find(preds, "3step").seconds, find(preds, "basic").seconds);
  for (std::size_t i = 1; i < preds.size(); i++) EXPECT_LE(preds[i - 1].seconds, preds[i].seconds);
}

TEST(Predict, EveryRankSendingToTheOtherNodeFavoursOneMessagePerNodePair) {
  // 2 nodes of 4 ranks, each rank sending 10 units to each rank of the
  // other node over a network whose messages cost more than their bytes:
  // 2step puts 4 messages through the node, 3step and split one.
  stf::Traffic t;
  t.ranks = 8, t.nodes = 2, t.ranks_per_node = 4;
  t.messages_in_node = 3, t.units_in_node = 30;
  t.messages_off_node = 4, t.units_off_node = 40;
  t.destination_nodes = 1, t.max_units_to_node = 40;
  t.node_pairs = 1, t.node_units_off = 160, t.node_distinct_off = 40, t.max_pair_distinct = 40;
  t.node_messages_off = 16, t.node_rank_node_pairs = 4;
  stf::model::Profile p = stf::model::default_profile();
  p.network.other_node.gap = 8e-6;
  p.network.off_node.node_gap = 8e-6;  // the node's messages one after another
  const auto preds = stf::predict_all(p, t, 8, 16384, true, 16);
  EXPECT_TRUE(preds.front().type == "3step" || preds.front().type == "split") << preds.front().type;
  EXPECT_LT(find(preds, "3step").seconds, find(preds, "2step").seconds);
  EXPECT_LT(find(preds, "2step").seconds, find(preds, "basic").seconds);
}

TEST(Predict, OneSidedTransportsPayASignalPerSignalledMessage) {
  stf::model::Profile p = stf::model::default_profile();
  p.defaults = false;  // a measured profile: its heap priced only where measured
  p.onesided.sync = 1e-6;
  const stf::Traffic t = many_node_pairs();  // 3 messages in the node, 28 to other nodes
  for (bool rma : {true, false}) {
    const auto preds = stf::predict_all(p, t, 8, 16384, rma, 16);
    const double basic = find(preds, "basic").seconds;
    EXPECT_NEAR(find(preds, "window").seconds - basic, 2 * 31 * 1e-6, 1e-12);  // an address and a put each
    // -stf_putsignal_net p2p: messages to other nodes by point-to-point, unsignalled.
    EXPECT_NEAR(find(preds, "putsignal").seconds - basic, (rma ? 31 : 3) * 1e-6, 1e-12);
  }
}

// With the put-with-signal protocol measured, putsignal's messages in a
// node cost the protocol's time instead of MPI's plus a signal; units
// larger than its regions go by MPI and pay the signal again.
TEST(Predict, PutsignalInANodeCostsTheMeasuredProtocol) {
  stf::model::Profile p = stf::model::default_profile();
  p.defaults = false;  // a measured profile: its heap priced only where measured
  p.onesided.sync = 1e-6;
  p.network.same_node.segments = {{0, 1e-6, 1e-10}};
  p.onesided.heap.segments = {{0, 0.25e-6, 1e-10}};
  stf::Traffic t;
  t.ranks = 4, t.nodes = 1, t.ranks_per_node = 4;
  t.messages_in_node = 2, t.units_in_node = 8;
  const double unmeasured = find(stf::predict_all(p, t, 8, 16384, false, 16), "putsignal").seconds;
  EXPECT_NEAR(unmeasured - find(stf::predict_all(p, t, 8, 16384, false, 16), "basic").seconds, 2e-6, 1e-12);
  p.onesided.heap.measured = true;
  const auto preds = stf::predict_all(p, t, 8, 16384, false, 16);
  EXPECT_EQ(preds.front().type, "putsignal");
  EXPECT_NEAR(find(preds, "basic").seconds - preds.front().seconds, 0.75e-6, 0.05e-6);  // one alpha apart
  // 24-byte units in regions of 16 bytes per unit: by MPI, plus a signal.
  const auto large = stf::predict_all(p, t, 24, 16384, false, 16);
  EXPECT_NEAR(find(large, "putsignal").seconds - find(large, "basic").seconds, 2e-6, 1e-12);
}

// Across nodes, with the protocol measured, each node-aware strategy is
// also predicted with putsignal for its steps in a node: the same
// messages, in-node ones at the protocol's price; not where the units do
// not fit its regions or the protocol is not measured.
TEST(Predict, NodeAwareStepsWithPutsignalInANode) {
  stf::model::Profile p = stf::model::default_profile();
  p.defaults = false;  // a measured profile: its heap priced only where measured
  p.network.same_node.segments = {{0, 5e-6, 1e-10}};
  p.onesided.heap.segments = {{0, 0.25e-6, 1e-10}};
  const stf::Traffic t = many_node_pairs();
  for (const Prediction &x : stf::predict_all(p, t, 8, 16384, false, 16)) EXPECT_TRUE(x.node_transport.empty());
  p.onesided.heap.measured = true;
  const auto preds = stf::predict_all(p, t, 8, 16384, false, 16);
  for (const char *s : {"2step", "3step", "split"}) {
    const Prediction &with = find(preds, (std::string(s) + "/putsignal").c_str());
    EXPECT_EQ(with.type, s);
    EXPECT_EQ(with.node_transport, "putsignal");
    EXPECT_LT(with.seconds, find(preds, s).seconds) << s;  // its in-node steps cost 0.25 us, not 5
  }
  for (const Prediction &x : stf::predict_all(p, t, 24, 16384, false, 16)) EXPECT_TRUE(x.node_transport.empty());
}

// The built-in profile prices putsignal's in-node messages by its own
// protocol, below MPI's; a measured profile without the protocol measured
// prices them as MPI's plus a signal.
TEST(Predict, TheBuiltInProfilePricesThePutWithSignalProtocol) {
  stf::Traffic t;
  t.ranks = 4, t.nodes = 1, t.ranks_per_node = 4;
  t.messages_in_node = 2, t.units_in_node = 1024;
  stf::model::Profile p = stf::model::default_profile();
  const auto preds = stf::predict_all(p, t, 8, 16384, false, 16);
  EXPECT_EQ(preds.front().type, "putsignal");
  EXPECT_LT(preds.front().seconds, 0.8 * find(preds, "basic").seconds);
  // Units larger than its regions go by MPI, plus a signal.
  EXPECT_EQ(stf::predict_all(p, t, 24, 16384, false, 16).front().type, "basic");
  p.defaults = false;
  const auto measured = stf::predict_all(p, t, 8, 16384, false, 16);
  EXPECT_EQ(measured.front().type, "basic");
  EXPECT_NEAR(find(measured, "putsignal").seconds - find(measured, "basic").seconds, 2 * p.onesided.sync, 1e-12);
}

TEST(Predict, OneNodeHasNoNodeAwareCandidates) {
  stf::Traffic t;
  t.ranks = 2, t.nodes = 1, t.ranks_per_node = 2;
  t.messages_in_node = 1, t.units_in_node = 4;
  const auto preds = stf::predict_all(stf::model::default_profile(), t, 8, 16384, true, 16);
  EXPECT_EQ(preds.front().type, "putsignal");  // in a node, at the built-in protocol's price
  for (const Prediction &x : preds) EXPECT_FALSE(x.type == "2step" || x.type == "3step" || x.type == "split");
  EXPECT_TRUE(stf::auto_candidate("neighbor"));
  EXPECT_TRUE(stf::auto_candidate("putsignal"));
  EXPECT_FALSE(stf::auto_candidate("window"));
}

}  // namespace
