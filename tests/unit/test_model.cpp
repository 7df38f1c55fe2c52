// The performance-model layer (src/model): fits recover the parameters of
// synthetic measurements with noise, profiles survive a JSON round trip,
// and bad JSON is an error (the strategies' costs: test_model_strategy.cpp).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "model/json.h"
#include "model/model.h"

namespace m = stf::model;

namespace {

// Sizes 8 B .. 4 MiB, powers of 2, as bench/calibrate measures them.
std::vector<double> sizes() {
  std::vector<double> s;
  for (double n = 8; n <= 4194304; n *= 2) s.push_back(n);
  return s;
}

// Multiplicative noise of up to +-amount, the same every run.
struct Noise {
  std::mt19937 rng{2024};
  double amount;
  explicit Noise(double a) : amount(a) {}
  double operator()(double t) { return t * (1 + amount * std::uniform_real_distribution<double>(-1, 1)(rng)); }
};

// Eager up to 16 KiB, rendezvous with a higher start-up above, and a third
// range from 1 MiB where the per-byte cost grows (caches no longer hold it).
double three_protocols(double n) {
  if (n < 16384) return 0.5e-6 + n / 2e9;
  if (n < 1048576) return 10e-6 + n / 8e9;
  return n / 3e9;
}

}  // namespace

TEST(ModelPostal, FitFindsProtocolBreakpointsUnderNoise) {
  Noise noise(0.03);
  std::vector<double> t;
  for (double n : sizes()) t.push_back(noise(three_protocols(n)));
  const m::Postal p = m::fit_postal(sizes(), t);
  ASSERT_EQ(p.segments.size(), 3u);
  EXPECT_EQ(p.segments[0].from_bytes, 0);
  EXPECT_EQ(p.segments[1].from_bytes, 16384);
  EXPECT_EQ(p.segments[2].from_bytes, 1048576);
  EXPECT_NEAR(p.segments[0].alpha, 0.5e-6, 0.1e-6);
  EXPECT_NEAR(1 / p.segments[0].beta, 2e9, 0.2e9);
  EXPECT_NEAR(p.segments[1].alpha, 10e-6, 2e-6);
  EXPECT_NEAR(1 / p.segments[1].beta, 8e9, 0.8e9);
  EXPECT_NEAR(1 / p.segments[2].beta, 3e9, 0.3e9);
  // The model then predicts every measurement within the noise and a bit.
  for (double n : sizes()) EXPECT_NEAR(p.time(n), three_protocols(n), 0.08 * three_protocols(n)) << n;
}

TEST(ModelPostal, OneLineStaysOneSegmentDespiteNoiseAndAnOutlier) {
  Noise noise(0.05);
  std::vector<double> t;
  for (double n : sizes()) t.push_back(noise(1e-6 + n / 6e9));
  t[10] *= 2;  // one disturbed measurement must not start a protocol range
  const m::Postal p = m::fit_postal(sizes(), t);
  ASSERT_EQ(p.segments.size(), 1u);
  EXPECT_NEAR(p.segments[0].alpha, 1e-6, 0.15e-6);
  EXPECT_NEAR(1 / p.segments[0].beta, 6e9, 0.6e9);
}

TEST(ModelPostal, GapIsTheSlopeOverMessageCount) {
  Noise noise(0.02);
  std::vector<double> k, t;
  for (int n : {1, 2, 4, 8, 16, 32}) {
    k.push_back(n);
    t.push_back(noise(3e-6 + (n - 1) * 0.4e-6));
  }
  EXPECT_NEAR(m::fit_gap(k, t), 0.4e-6, 0.04e-6);
  m::Postal p;
  p.segments = {{0, 1e-6, 1e-9}};
  p.gap = 0.4e-6;
  // Small messages pay the gap, large ones their bandwidth (LogGP).
  EXPECT_NEAR(p.time_many(10, 8), 1e-6 + 8e-9 + 9 * 0.4e-6, 1e-12);
  EXPECT_NEAR(p.time_many(10, 1e6), 1e-6 + 1e-3 + 9 * 1e-3, 1e-12);
}

TEST(ModelMaxRate, FitRecoversNodeAndPairRates) {
  Noise noise(0.02);
  const double alpha = 2e-6, rb = 5e9, rn = 12e9;
  std::vector<m::MaxRateSample> samples;
  for (int pairs = 1; pairs <= 8; ++pairs)
    for (double s : {262144.0, 1048576.0, 4194304.0})
      samples.push_back({pairs, s, noise(alpha + std::max(pairs * s / rn, s / rb))});
  const m::MaxRate f = m::fit_maxrate(samples, alpha);
  EXPECT_NEAR(f.pair_rate, rb, 0.05 * rb);
  EXPECT_NEAR(f.node_rate, rn, 0.05 * rn);
  EXPECT_EQ(f.pairs_measured, 8);
  // One pair is limited by its own rate, eight by the node's.
  EXPECT_NEAR(f.time(1, 1e6), alpha + 1e6 / f.pair_rate, 1e-12);
  EXPECT_NEAR(f.time(8, 1e6), alpha + 8e6 / f.node_rate, 1e-12);
}

TEST(ModelMaxRate, PairsSlowerTogetherThanAloneGiveALowNodeRate) {
  // Two pairs take 8x as long as one: the node carries a quarter of one
  // pair's rate in all (cores shared by more ranks than they can run).
  const double alpha = 1e-6, rb = 4e9;
  std::vector<m::MaxRateSample> samples;
  for (double s : {1048576.0, 4194304.0}) {
    samples.push_back({1, s, alpha + s / rb});
    samples.push_back({2, s, alpha + 8 * s / rb});
  }
  const m::MaxRate f = m::fit_maxrate(samples, alpha);
  EXPECT_NEAR(f.pair_rate, rb, 0.01 * rb);
  EXPECT_NEAR(f.node_rate, rb / 4, 0.01 * rb);
}

// Node-pongs across three protocols whose node rates differ (a fast middle
// protocol, as the simulated cluster's): one rate per postal segment, each
// fitted with its segment's alpha; sizes below the first entry take it.
TEST(ModelMaxRate, FitPerSegmentFollowsEachProtocol) {
  m::Postal off;
  off.segments = {{0, 8e-6, 1 / 4e9}, {131072, 60e-6, 1 / 4e9}, {1048576, 120e-6, 1 / 4e9}};
  const double rb = 4e9, rn[] = {2e9, 8e9, 3e9}, size[] = {65536, 262144, 4194304};
  std::vector<m::MaxRateSample> samples;
  for (int pairs = 1; pairs <= 4; ++pairs)
    for (int i = 0; i < 3; ++i) {
      const double s = size[i];
      samples.push_back({pairs, s, off.segments[i].alpha + std::max(pairs * s / rn[i], s / rb)});
    }
  const m::MaxRate f = m::fit_maxrate_by_size(samples, off);
  ASSERT_EQ(f.by_size.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(f.by_size[i].from_bytes, off.segments[i].from_bytes);
    EXPECT_NEAR(f.by_size[i].node_rate, rn[i], 0.01 * rn[i]) << i;
    EXPECT_NEAR(f.node_rate_for(size[i]), rn[i], 0.01 * rn[i]) << i;
  }
  EXPECT_EQ(f.node_rate_for(8), f.by_size[0].node_rate);
  EXPECT_EQ(f.alpha, 8e-6);
  // Samples in one segment only: one rate for every size.
  const std::vector<m::MaxRateSample> small = {samples[0], samples[3], samples[6], samples[9]};  // 64 KiB
  const m::MaxRate one = m::fit_maxrate_by_size(small, off);
  EXPECT_TRUE(one.by_size.empty());
  EXPECT_EQ(one.node_rate_for(262144), one.node_rate);
}

TEST(ModelMaxRate, UnsaturatedNodeGivesTheRateTheDataShows) {
  const double alpha = 1e-6, rb = 4e9;
  std::vector<m::MaxRateSample> samples;
  for (int pairs = 1; pairs <= 3; ++pairs)
    for (double s : {1048576.0, 4194304.0}) samples.push_back({pairs, s, alpha + s / rb});
  const m::MaxRate f = m::fit_maxrate(samples, alpha);
  EXPECT_NEAR(f.pair_rate, rb, 0.01 * rb);
  EXPECT_NEAR(f.node_rate, 3 * rb, 0.01 * rb);
}

TEST(ModelRoofline, BoundIsPeakOrLatencyDiagonal) {
  m::Postal p;
  p.segments = {{0, 2e-6, 1 / 10e9}};
  const m::Roofline r = m::roofline_of(p);
  EXPECT_DOUBLE_EQ(r.peak, 10e9);
  EXPECT_DOUBLE_EQ(r.latency, 2e-6);
  const m::RooflinePoint small = m::roofline_point(r, 1, 8, 4e-6);
  EXPECT_STREQ(small.regime, "latency");
  EXPECT_DOUBLE_EQ(small.bound, 8 / 2e-6);
  EXPECT_DOUBLE_EQ(small.fraction, 0.5);  // took twice the latency
  // More messages per synchronisation lift the diagonal up to the peak.
  EXPECT_DOUBLE_EQ(m::roofline_point(r, 100, 8).bound, 100 * 8 / 2e-6);
  const m::RooflinePoint big = m::roofline_point(r, 64, 1 << 20, 64.0 * (1 << 20) / 5e9);
  EXPECT_STREQ(big.regime, "bandwidth");
  EXPECT_DOUBLE_EQ(big.bound, 10e9);
  EXPECT_NEAR(big.fraction, 0.5, 1e-12);
}

TEST(ModelTransfer, DeviceExchangeIsPackSyncTransferUnpack) {
  m::Device d;
  d.sync = 4e-6;
  d.rates.launch = 3e-6;
  d.rates.pack[0] = 400e9;
  d.rates.pack[2] = 100e9;
  d.rates.unpack[1] = 200e9;
  m::Postal p;
  p.segments = {{0, 2e-6, 1 / 10e9}};
  m::Exchange x;
  x.pack_pattern = m::Pattern::indexed;
  x.unpack_pattern = m::Pattern::strided;
  x.send_messages = 2;
  x.send_bytes = 2e6;
  x.recv_messages = 1;
  x.recv_bytes = 4e6;
  const m::DeviceTime t = m::device_exchange_time(d, p, x);
  EXPECT_NEAR(t.pack, 3e-6 + 2e6 / 100e9, 1e-12);
  EXPECT_DOUBLE_EQ(t.sync, 4e-6);
  EXPECT_NEAR(t.transfer, 2e-6 + 4e6 / 10e9, 1e-12);  // the receive is the longer side
  EXPECT_NEAR(t.unpack, 3e-6 + 4e6 / 200e9, 1e-12);
  EXPECT_DOUBLE_EQ(t.total(), t.pack + t.sync + t.transfer + t.unpack);
  x.pack_pattern = m::Pattern::contiguous;
  EXPECT_LT(m::device_exchange_time(d, p, x).pack, t.pack);
}

TEST(ModelTransfer, PutSignalAndCollectiveAddTheirSynchronisation) {
  m::Postal p;
  p.segments = {{0, 1e-6, 1e-9}};
  p.gap = 0.5e-6;
  EXPECT_NEAR(m::put_signal_time(p, m::OneSided{0.2e-6, true}, 4, 400), p.time_many(4, 100) + 4 * 0.2e-6, 1e-15);
  EXPECT_NEAR(m::collective_time(p, m::Collective{3e-6, true}, 4, 400), 3e-6 + p.time_many(4, 100), 1e-15);
  EXPECT_DOUBLE_EQ(m::collective_time(p, m::Collective{3e-6, true}, 0, 0), 3e-6);
  EXPECT_DOUBLE_EQ(m::put_signal_time(p, m::OneSided{0.2e-6, true}, 0, 0), 0);
}

TEST(ModelProfile, JsonRoundTripKeepsEveryValue) {
  m::Profile p = m::default_profile();
  p.machine = "node7, \"quoted\" CPU\\name";
  p.date = "2026-11-23T19:00:00Z";
  p.mpi = "Open MPI v4.1.4\tline";
  p.defaults = false;
  p.ranks = 4;
  p.nodes = 2;
  p.ranks_per_node = 2;
  p.network.same_node.segments = {{0, 1.0 / 3 * 1e-6, 1 / 7e9}, {8192, 2.5e-6, 1 / 9e9}};
  p.network.same_node.measured = true;
  p.network.other_node.busy_step = 1.0 / 7 * 1e-3;
  p.network.off_node.node_rate = 1e10 / 3;
  p.network.off_node.pairs_measured = 2;
  p.network.off_node.by_size = {{0, 1e9 / 3}, {131072, 7e9}};
  p.host_pack.pack[2] = 1.234567890123e9;
  p.device_name = "emu";
  p.device.sync = 7e-7;
  p.onesided.heap.segments = {{0, 0.21e-6, 1 / 11e9}};
  p.onesided.heap.measured = true;
  const std::string text = m::profile_to_json(p);
  m::Profile q;
  std::string error;
  ASSERT_TRUE(m::profile_from_json(text, &q, &error)) << error;
  EXPECT_EQ(q.machine, p.machine);
  EXPECT_EQ(q.mpi, p.mpi);
  EXPECT_FALSE(q.defaults);
  EXPECT_EQ(q.ranks_per_node, 2);
  ASSERT_EQ(q.network.same_node.segments.size(), 2u);
  EXPECT_EQ(q.network.same_node.segments[0].alpha, p.network.same_node.segments[0].alpha);  // exact
  EXPECT_EQ(q.network.same_node.segments[1].from_bytes, 8192);
  EXPECT_EQ(q.network.off_node.node_rate, p.network.off_node.node_rate);
  ASSERT_EQ(q.network.off_node.by_size.size(), 2u);
  EXPECT_EQ(q.network.off_node.by_size[0].node_rate, 1e9 / 3);
  EXPECT_EQ(q.network.off_node.by_size[1].from_bytes, 131072);
  EXPECT_EQ(q.network.other_node.busy_step, p.network.other_node.busy_step);
  EXPECT_EQ(q.host_pack.pack[2], p.host_pack.pack[2]);
  EXPECT_EQ(q.device_name, "emu");
  ASSERT_EQ(q.onesided.heap.segments.size(), 1u);
  EXPECT_EQ(q.onesided.heap.segments[0].alpha, 0.21e-6);
  EXPECT_TRUE(q.onesided.heap.measured);
  EXPECT_EQ(m::profile_to_json(q), text);  // and everything else
}

TEST(ModelProfile, DefaultsAreMarkedAndAbsentMembersKeepThem) {
  const m::Profile d = m::default_profile();
  EXPECT_TRUE(d.defaults);
  EXPECT_FALSE(d.network.other_node.measured);
  EXPECT_GT(d.network.other_node.time(8), d.network.same_node.time(8));
  m::Profile p;
  std::string error;
  ASSERT_TRUE(m::profile_from_json(
      R"({"format": "starforest-profile", "version": 1, "defaults": false, "onesided": {"sync": 2e-6}})", &p, &error))
      << error;
  EXPECT_FALSE(p.defaults);
  EXPECT_DOUBLE_EQ(p.onesided.sync, 2e-6);
  EXPECT_EQ(m::profile_to_json(p).size(), m::profile_to_json(d).size() + 1);  // "false" for "true", 2e-6 same length
}

TEST(ModelProfile, MalformedTextIsAnErrorNotACrash) {
  const std::string head = R"({"format": "starforest-profile", "version": 1, )";
  const char *bad[] = {
      "",
      "{",
      "[1, 2",
      "nan",
      "{\"format\": \"starforest-profile\", \"version\": 1} trailing",
      "\"unterminated",
      "{\"format\": \"something else\", \"version\": 1}",
      "{\"format\": \"starforest-profile\", \"version\": 2}",
      "[]",
      "{\"format\": \"starforest-profile\" \"version\": 1}",
      "{\"a\": 01}",
      "{\"a\": 1.}",
      "{\"a\": \"\\x\"}",
  };
  const std::string bad_members[] = {
      R"("postal": 3})",
      R"("postal": {"same_node": {"gap": -1}}})",
      R"("postal": {"same_node": {"gap": "fast"}}})",
      R"("postal": {"other_node": {"segments": []}}})",
      R"("postal": {"other_node": {"segments": [{"from_bytes": 4}]}}})",
      R"("postal": {"other_node": {"segments": [{"from_bytes": 0}, {"from_bytes": 0}]}}})",
      R"("postal": {"other_node": {"segments": [7]}}})",
      R"("ranks": 2.5})",
      R"("defaults": 1})",
      R"("maxrate": {"node_rate": 1e999}})",
      R"("maxrate": {"node_rate_by_size": 3}})",
      R"("maxrate": {"node_rate_by_size": [{"from_bytes": 0, "node_rate": 0}]}})",
      R"("maxrate": {"node_rate_by_size": [{"from_bytes": 8, "node_rate": 1}, {"from_bytes": 8, "node_rate": 2}]}})",
  };
  std::vector<std::string> texts(std::begin(bad), std::end(bad));
  for (const std::string &b : bad_members) texts.push_back(head + b);
  texts.push_back(std::string(100000, '[') + std::string(100000, ']'));  // deeper than any profile
  m::Profile p = m::default_profile();
  p.machine = "untouched";
  for (const std::string &t : texts) {
    std::string error;
    EXPECT_FALSE(m::profile_from_json(t, &p, &error)) << t.substr(0, 80);
    EXPECT_FALSE(error.empty()) << t.substr(0, 80);
    EXPECT_EQ(p.machine, "untouched");
  }
  // Every cut of a valid profile is invalid, and the reader says so.
  const std::string full = m::profile_to_json(m::default_profile());
  const size_t end = full.find_last_not_of(" \n");
  for (size_t cut = 0; cut < end; ++cut) {
    std::string error;
    EXPECT_FALSE(m::profile_from_json(full.substr(0, cut), &p, &error)) << cut;
  }
}

// Hostile files: a device that never ends, a FIFO nobody writes, a file
// above the size cap are refused before they are read (they used to fill
// memory, block set-up, or be read whole); an object of 200,000 members
// parses in linear time (a linear scan per key took 100 s for 80,000).
TEST(ModelProfile, HostileFilesAreRefusedAndLargeObjectsParseFast) {
  m::Profile p = m::default_profile();
  std::string error;
  EXPECT_FALSE(m::read_profile("/dev/zero", &p, &error));
  EXPECT_NE(error.find("not a regular file"), std::string::npos) << error;
  char dir[] = "/tmp/stf_profile_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string fifo = std::string(dir) + "/fifo", big = std::string(dir) + "/big.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_FALSE(m::read_profile(fifo, &p, &error));
  EXPECT_NE(error.find("not a regular file"), std::string::npos) << error;
  {
    std::ofstream f(big);
    f << std::string(static_cast<std::size_t>(m::kMaxProfileBytes) + 1, ' ');
  }
  EXPECT_FALSE(m::read_profile(big, &p, &error));
  EXPECT_NE(error.find("more than a profile's"), std::string::npos) << error;
  std::remove(fifo.c_str());
  std::remove(big.c_str());
  rmdir(dir);
  EXPECT_EQ(p.machine, m::default_profile().machine);

  std::string text = R"({"format": "starforest-profile", "version": 1, "machine": "many keys")";
  for (int k = 0; k < 200000; k++) text += ", \"k" + std::to_string(k) + "\": " + std::to_string(k);
  text += ", \"k7\": -1}";  // a repeated key replaces the earlier one
  const auto t0 = std::chrono::steady_clock::now();
  m::Json j;
  ASSERT_TRUE(m::parse_json(text, &j, &error)) << error;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(seconds, 20.0) << "quadratic parsing is back";
  ASSERT_EQ(j.members().size(), 200003u);
  ASSERT_NE(j.find("k7"), nullptr);
  EXPECT_EQ(j.find("k7")->as_number(), -1.0);
  EXPECT_TRUE(m::profile_from_json(text, &p, &error)) << error;  // unknown members are ignored
  EXPECT_EQ(p.machine, "many keys");
}

TEST(ModelJson, ParsesWhatProfilesUse) {
  m::Json v;
  std::string error;
  ASSERT_TRUE(
      m::parse_json(R"( {"a": [1, -0.5e3, true, null], "s": "x\"\\\n\u00e9\ud83d\ude00", "o": {}} )", &v, &error))
      << error;
  ASSERT_TRUE(v.is(m::Json::Kind::object));
  const m::Json *a = v.find("a");
  ASSERT_TRUE(a && a->items().size() == 4);
  EXPECT_EQ(a->items()[1].as_number(), -500);
  EXPECT_TRUE(a->items()[2].as_bool());
  EXPECT_TRUE(a->items()[3].is(m::Json::Kind::null));
  EXPECT_EQ(v.find("s")->as_string(), "x\"\\\n\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_EQ(v.find("missing"), nullptr);
  m::Json back;
  ASSERT_TRUE(m::parse_json(v.dump(), &back, &error)) << error;
  EXPECT_EQ(back.dump(), v.dump());
  // Numbers: as short as reads back exactly.
  EXPECT_EQ(m::Json::number(5e-7).dump(), "5e-07\n");
  EXPECT_EQ(m::Json::number(0.1 + 0.2).dump(), "0.30000000000000004\n");
  EXPECT_FALSE(m::parse_json("{\"a\": 1,}", &back, &error));
  EXPECT_NE(error.find("line 1, column 9"), std::string::npos) << error;
}

#ifdef STF_PROFILE_DIR
// The example profiles that bench/calibrate wrote read back as measured ones,
// and on the namespace cluster's (TCP between hosts) the node-aware routing
// of many small messages to many nodes beats sending each one.
TEST(ModelProfile, SharedExamplesRead) {
  int seen = 0;
  for (const auto &entry : std::filesystem::directory_iterator(STF_PROFILE_DIR)) {
    if (entry.path().extension() != ".json") continue;
    m::Profile p;
    std::string error;
    ASSERT_TRUE(m::read_profile(entry.path().string(), &p, &error)) << error;
    EXPECT_FALSE(p.defaults) << entry.path();
    EXPECT_TRUE(p.network.same_node.measured && p.network.other_node.measured) << entry.path();
    EXPECT_GT(p.network.other_node.time(8), 0) << entry.path();
    ++seen;
    if (p.ranks_per_node != 0) continue;  // emulated nodes: no network
    m::CommStats st;
    st.ranks_per_node = 16;
    st.messages_other_node = 64;
    st.bytes_other_node = 64 * 64;
    st.destination_nodes = 16;
    st.bytes_leaving_node = 16 * st.bytes_other_node;
    st.unique_bytes_leaving_node = st.bytes_leaving_node;
    st.max_node_pair_bytes = st.bytes_leaving_node / 16;
    EXPECT_LT(m::cost_3step(p.network, st).seconds, m::cost_standard(p.network, st).seconds) << entry.path();
  }
  EXPECT_GE(seen, 1);
}
#endif
