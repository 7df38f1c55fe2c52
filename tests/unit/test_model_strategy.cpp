// The node-aware strategies' cost model (src/model/strategy.h): each term
// as the models define it, and known cases ranked the right way.
#include <gtest/gtest.h>

#include "model/model.h"

namespace m = stf::model;

namespace {

m::Network network(double alpha_off, double gbps_off, double alpha_on, double gbps_on, double gap) {
  m::Network net;
  net.same_node.segments = {{0, alpha_on, 1 / (gbps_on * 1e9)}};
  net.same_node.gap = gap / 4;
  net.other_node.segments = {{0, alpha_off, 1 / (gbps_off * 1e9)}};
  net.other_node.gap = gap;
  net.off_node.alpha = alpha_off;
  net.off_node.pair_rate = gbps_off * 1e9;
  net.off_node.node_rate = 2 * gbps_off * 1e9;
  return net;
}

}  // namespace

// A rank's messages follow one another at the gap or at their own transfer
// time, whichever is longer (Postal::time_many): the step prices the same.
TEST(ModelStrategy, StepChargesTheGapOnlyBeyondEachMessagesTransfer) {
  const m::Network net = network(2e-6, 1, 0.5e-6, 5, 1e-6);  // off node: 1 ns per byte, gap 1 us
  m::CommStats st;
  st.ranks_per_node = 1;
  st.destination_nodes = 10;
  for (double s : {100.0, 4000.0}) {  // below and above the gap's worth of bytes
    st.messages_other_node = 10, st.bytes_other_node = 10 * s;
    st.bytes_leaving_node = st.unique_bytes_leaving_node = st.max_node_pair_bytes = 10 * s;
    const m::Cost c = m::cost_standard(net, st);
    EXPECT_NEAR(c.latency + c.injection + c.bandwidth + c.node_bandwidth, net.other_node.time_many(10, s), 1e-12);
  }
}

TEST(ModelStrategy, ManyNodePairsOnASlowNetworkFavourThreeStep) {
  const m::Network net = network(50e-6, 10, 0.3e-6, 5, 4e-6);
  m::CommStats st;
  st.ranks_per_node = 16;
  st.messages_other_node = 64;  // 1 KiB each to ranks on 16 other nodes
  st.bytes_other_node = 64 * 1024;
  st.destination_nodes = 16;
  st.bytes_leaving_node = 16 * 64 * 1024;
  st.unique_bytes_leaving_node = st.bytes_leaving_node / 2;
  st.max_node_pair_bytes = 64 * 1024;
  const auto ranked = m::rank_strategies(net, st, {4096});
  ASSERT_EQ(ranked.size(), 4u);
  EXPECT_EQ(ranked.front().strategy, m::Strategy::three_step);
  EXPECT_EQ(ranked.back().strategy, m::Strategy::standard);
  const m::Cost standard = m::cost_standard(net, st), three = m::cost_3step(net, st);
  EXPECT_GT(standard.seconds, 1.5 * three.seconds);
  EXPECT_STREQ(standard.dominant, "injection");  // 63 further messages at 4 us less 0.1 us of transfer
  // split without a limit is 3step; with a small one it sends more messages.
  EXPECT_DOUBLE_EQ(m::cost_split(net, st, 0).seconds, three.seconds);
  EXPECT_GT(m::cost_split(net, st, 4096).seconds, three.seconds);
}

// split cuts a node pair's 100 KiB at 16 KiB into at most one chunk per
// rank of a node, equal ones: 4 chunks of 25 KiB, which lie past a protocol
// boundary at 20 KiB, not 7 of 16 KiB below it.
TEST(ModelStrategy, SplitChunksAsTheStrategyCutsThem) {
  m::Network net = network(1e-6, 10, 0.5e-6, 5, 0.2e-6);
  net.other_node.segments = {{0, 1e-6, 1e-10}, {20480, 100e-6, 1e-10}};
  m::CommStats st;
  st.ranks_per_node = 4;
  st.messages_other_node = 1;
  st.bytes_other_node = st.bytes_leaving_node = st.unique_bytes_leaving_node = 100 * 1024;
  st.max_node_pair_bytes = 100 * 1024;
  st.destination_nodes = 1;
  const m::Cost split = m::cost_split(net, st, 16384);
  EXPECT_GE(split.latency, 100e-6);
  EXPECT_LT(m::cost_split(net, st, 32768).latency, 100e-6 + 3e-6);  // 4 chunks of 25 KiB again
  EXPECT_LT(m::cost_split(net, st, 102400).latency, 100e-6 + 3e-6);  // one chunk
  st.ranks_per_node = 8;  // 7 chunks of 14.6 KiB: below the boundary
  EXPECT_LT(m::cost_split(net, st, 16384).latency, 10e-6);
}

TEST(ModelStrategy, OneLargePeerOnAFastNetworkFavoursStandard) {
  const m::Network net = network(1e-6, 10, 0.5e-6, 5, 0.2e-6);
  m::CommStats st;
  st.ranks_per_node = 4;
  st.messages_other_node = 1;
  st.bytes_other_node = 1 << 20;
  st.destination_nodes = 1;
  st.bytes_leaving_node = 1 << 20;
  st.unique_bytes_leaving_node = 1 << 20;
  st.max_node_pair_bytes = 1 << 20;
  st.messages_leaving_node = st.rank_node_pairs = 1;  // the only message leaving the node
  const auto ranked = m::rank_strategies(net, st, {65536});
  EXPECT_EQ(ranked.front().strategy, m::Strategy::standard);
  const m::Cost c = ranked.front().cost;
  EXPECT_STREQ(c.dominant, "bandwidth");
  EXPECT_NEAR(c.seconds, 1e-6 + (1 << 20) / 10e9, 1e-12);
}

TEST(ModelStrategy, NodeInterfaceBoundNamesNodeBandwidth) {
  m::Network net = network(1e-6, 10, 0.5e-6, 5, 0.2e-6);
  net.off_node.node_rate = 10e9;  // the node's 8 ranks share one link
  m::CommStats st;
  st.ranks_per_node = 8;
  st.messages_other_node = 1;
  st.bytes_other_node = 1 << 20;
  st.destination_nodes = 1;
  st.bytes_leaving_node = 8 << 20;
  st.max_node_pair_bytes = 8 << 20;
  const m::Cost c = m::cost_standard(net, st);
  EXPECT_STREQ(c.dominant, "node bandwidth");
  EXPECT_NEAR(c.seconds, 1e-6 + (8 << 20) / 10e9, 1e-12);
  // With a node gap, the 8 ranks' messages also pass the node one after another.
  net.off_node.node_gap = 0.2e-6;
  EXPECT_NEAR(m::cost_standard(net, st).seconds, 1e-6 + 7 * 0.2e-6 + (8 << 20) / 10e9, 1e-12);
  // A node rate per size: 1 MiB messages take the rate of their segment.
  net.off_node.node_gap = 0;
  net.off_node.by_size = {{0, 10e9}, {65536, 20e9}, {4 << 20, 5e9}};
  EXPECT_NEAR(m::cost_standard(net, st).seconds, 1e-6 + (8 << 20) / 20e9, 1e-12);
}

// Two nodes of 4 ranks, every rank sending 10 small values to each of the 4
// ranks of the other node: the busiest rank sends one message off the node
// under both 2step and 3step, but under 2step each of the 4 ranks does, and
// 3step sends one per node pair. Which wins is the node's gap.
static m::CommStats two_nodes_all_to_all() {
  m::CommStats st;
  st.ranks_per_node = 4;
  st.messages_same_node = 3, st.bytes_same_node = 3 * 80;
  st.messages_other_node = 4, st.bytes_other_node = 4 * 80;
  st.destination_nodes = 1;
  st.bytes_leaving_node = 16 * 80;
  st.unique_bytes_leaving_node = 4 * 80;  // every value wanted by the 4 ranks there
  st.max_node_pair_bytes = 4 * 80;
  st.messages_leaving_node = 16;
  st.rank_node_pairs = 4;
  return st;
}

TEST(ModelStrategy, MessagesThroughTheNodeFavourThreeStepWhenTheNodeGapIsLarge) {
  m::Network net = network(10e-6, 1, 2e-6, 5, 8e-6);
  net.off_node.node_gap = 8e-6;  // a node sends one message after another
  const m::CommStats st = two_nodes_all_to_all();
  const auto ranked = m::rank_strategies(net, st, {16384});
  EXPECT_TRUE(ranked.front().strategy == m::Strategy::three_step || ranked.front().strategy == m::Strategy::split);
  const m::Cost two = m::cost_2step(net, st), three = m::cost_3step(net, st), standard = m::cost_standard(net, st);
  // 2step: 3 further messages through the node at 8 us; standard 15.
  // Less 3step's in-node steps: the 2 further messages of its
  // redistribution (320 / 3 B) pay the in-node gap (2 us) beyond their
  // transfer time (0.2 ns per byte).
  EXPECT_NEAR(two.injection - three.injection, 3 * 8e-6 - 2 * (2e-6 - 0.2e-9 * 320 / 3), 1e-12);
  EXPECT_GT(two.seconds, three.seconds);
  EXPECT_GT(standard.seconds, two.seconds);
  EXPECT_STREQ(standard.dominant, "injection");
  // Without the node's counts (0: unknown) every rank is taken as busy as
  // the busiest: here exactly the counts given.
  m::CommStats unknown = st;
  unknown.messages_leaving_node = unknown.rank_node_pairs = 0;
  EXPECT_DOUBLE_EQ(m::cost_2step(net, unknown).seconds, two.seconds);
  EXPECT_DOUBLE_EQ(m::cost_standard(net, unknown).seconds, standard.seconds);
}

TEST(ModelStrategy, NoNodeGapKeepsTwoStepAheadOfThreeStep) {
  m::Network net = network(10e-6, 1, 2e-6, 5, 8e-6);
  net.off_node.node_gap = 0.01e-6;  // a network interface that takes messages from every core at once
  EXPECT_LT(m::cost_2step(net, two_nodes_all_to_all()).seconds, m::cost_3step(net, two_nodes_all_to_all()).seconds);
  net.off_node.node_gap = 0;  // the default: no node bound
  const m::CommStats st = two_nodes_all_to_all();
  // 2step saves 3step's gather inside the node; only the ranks' own gaps count.
  EXPECT_LT(m::cost_2step(net, st).seconds, m::cost_3step(net, st).seconds);
}

// A machine where an exchange step with every rank busy takes 1 ms between
// nodes and 0.1 ms in a node (ranks sharing cores, TCP), against 50 us and
// 0.3 us for a ping-pong of idle ranks: each phase pays the excess once,
// so 2step (two phases) overtakes 3step (three), which the idle-rank terms
// favour.
TEST(ModelStrategy, BusyStepsChargeEachPhaseOnce) {
  m::Network net = network(50e-6, 10, 0.3e-6, 5, 4e-6);
  m::CommStats st;
  st.ranks_per_node = 16;
  st.messages_same_node = 2, st.bytes_same_node = 2 * 1024;
  st.messages_other_node = 64;
  st.bytes_other_node = 64 * 1024;
  st.destination_nodes = 16;
  st.bytes_leaving_node = 16 * 64 * 1024;
  st.unique_bytes_leaving_node = st.bytes_leaving_node / 2;
  st.max_node_pair_bytes = 64 * 1024;
  const m::Cost idle_standard = m::cost_standard(net, st), idle_two = m::cost_2step(net, st),
                idle_three = m::cost_3step(net, st);
  ASSERT_LT(idle_three.seconds, idle_standard.seconds);
  EXPECT_EQ(idle_standard.busy, 0);
  net.same_node.busy_step = 0.1e-3;
  net.other_node.busy_step = 1e-3;
  const double off = 1e-3 - net.other_node.time(8), in = 0.1e-3 - net.same_node.time(8);
  const m::Cost standard = m::cost_standard(net, st), two = m::cost_2step(net, st), three = m::cost_3step(net, st);
  // One phase, charged the larger excess of the classes it sends to.
  EXPECT_NEAR(standard.seconds, idle_standard.seconds + off, 1e-12);
  // 2step: L with the off-node step, then the redistribution in the node.
  EXPECT_NEAR(two.seconds, idle_two.seconds + off + in, 1e-12);
  // 3step: L with the gather, the off-node step, the redistribution.
  EXPECT_NEAR(three.seconds, idle_three.seconds + in + off + in, 1e-12);
  EXPECT_NEAR(three.busy, off + 2 * in, 1e-12);
  EXPECT_STREQ(three.dominant, "busy step");
  ASSERT_LT(idle_three.seconds, idle_two.seconds);
  EXPECT_EQ(m::rank_strategies(net, st, {4096}).front().strategy, m::Strategy::two_step);
  // Without messages off the node only the in-node excess is paid.
  m::CommStats local;
  local.ranks_per_node = 4;
  local.messages_same_node = 1, local.bytes_same_node = 8;
  EXPECT_NEAR(m::cost_standard(net, local).seconds, 0.1e-3, 1e-12);
  EXPECT_NEAR(m::cost_3step(net, local).seconds, 0.1e-3, 1e-12);
  // A busy step below the idle latency (a noisy calibration) charges nothing.
  net.other_node.busy_step = 1e-9;
  net.same_node.busy_step = 1e-9;
  EXPECT_DOUBLE_EQ(m::cost_standard(net, st).seconds, idle_standard.seconds);
}
