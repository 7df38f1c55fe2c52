// The public stream, event and kernel calls on the emulated device, and the
// per-SF stream model setting.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "starforest.h"

namespace {

struct Fill {
  int *a;
  int value;
  bool slow;
};

void fill(int64_t b, int64_t e, void *ctx) {
  auto *f = static_cast<Fill *>(ctx);
  if (f->slow) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  for (int64_t i = b; i < e; ++i) f->a[i] = f->value;
}

struct Copy {
  const int *from;
  int *to;
};

void plus_one(int64_t b, int64_t e, void *ctx) {
  auto *c = static_cast<Copy *>(ctx);
  for (int64_t i = b; i < e; ++i) c->to[i] = c->from[i] + 1;
}

class StreamApi : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(stf_device_select("emu"), STF_SUCCESS); }
  void TearDown() override { EXPECT_EQ(stf_device_select("host"), STF_SUCCESS); }
};

// A slow kernel then a writer on s1, an event, and a reader on s2 that waits
// for it: the reader must see every write. Without the wait the reader runs
// while s1 is still in its slow kernel (emu kernels of all streams share one
// thread pool, so it is the kernel before the writer that makes room) and
// reads zeros.
TEST_F(StreamApi, EventOrdersTwoStreams) {
  const int n = 4096;
  int *a = nullptr, *b = nullptr;
  ASSERT_EQ(stf_device_malloc(n * sizeof(int), reinterpret_cast<void **>(&a)), STF_SUCCESS);
  ASSERT_EQ(stf_device_malloc(n * sizeof(int), reinterpret_cast<void **>(&b)), STF_SUCCESS);
  std::vector<int> zeros(n, 0);
  ASSERT_EQ(stf_device_memcpy(a, zeros.data(), n * sizeof(int)), STF_SUCCESS);
  stf_stream s1 = nullptr, s2 = nullptr;
  stf_event e = nullptr;
  ASSERT_EQ(stf_stream_create(&s1), STF_SUCCESS);
  ASSERT_EQ(stf_stream_create(&s2), STF_SUCCESS);
  ASSERT_EQ(stf_event_create(&e), STF_SUCCESS);
  int scratch = 0;
  Fill slow{&scratch, 0, true};
  Fill f{a, 41, false};
  Copy c{a, b};
  ASSERT_EQ(stf_device_launch(s1, 1, fill, &slow), STF_SUCCESS);
  ASSERT_EQ(stf_device_launch(s1, n, fill, &f), STF_SUCCESS);
  ASSERT_EQ(stf_event_record(e, s1), STF_SUCCESS);
  ASSERT_EQ(stf_stream_wait_event(s2, e), STF_SUCCESS);
  ASSERT_EQ(stf_device_launch(s2, n, plus_one, &c), STF_SUCCESS);
  ASSERT_EQ(stf_stream_synchronize(s2), STF_SUCCESS);
  int done = 0;
  ASSERT_EQ(stf_event_query(e, &done), STF_SUCCESS);
  EXPECT_EQ(done, 1);
  std::vector<int> got(n);
  ASSERT_EQ(stf_device_memcpy_async(got.data(), b, n * sizeof(int), s2), STF_SUCCESS);
  ASSERT_EQ(stf_stream_synchronize(s2), STF_SUCCESS);
  for (int i = 0; i < n; ++i) ASSERT_EQ(got[i], 42) << "at " << i;
  EXPECT_EQ(stf_event_destroy(e), STF_SUCCESS);
  EXPECT_EQ(stf_stream_destroy(s1), STF_SUCCESS);
  EXPECT_EQ(stf_stream_destroy(s2), STF_SUCCESS);
  EXPECT_EQ(stf_device_free(a), STF_SUCCESS);
  EXPECT_EQ(stf_device_free(b), STF_SUCCESS);
}

TEST_F(StreamApi, LibraryStreamCanBeSetAndComesBack) {
  stf_stream own = nullptr, mine = nullptr, now = nullptr;
  ASSERT_EQ(stf_device_get_stream(&own), STF_SUCCESS);
  ASSERT_EQ(stf_stream_create(&mine), STF_SUCCESS);
  ASSERT_EQ(stf_device_set_stream(mine), STF_SUCCESS);
  ASSERT_EQ(stf_device_get_stream(&now), STF_SUCCESS);
  EXPECT_EQ(now, mine);
  ASSERT_EQ(stf_stream_destroy(mine), STF_SUCCESS);  // the library takes its own back
  ASSERT_EQ(stf_device_get_stream(&now), STF_SUCCESS);
  EXPECT_EQ(now, own);
}

TEST_F(StreamApi, BadArguments) {
  int x = 0;
  Fill f{&x, 1, false};
  EXPECT_EQ(stf_device_launch(nullptr, -1, fill, &f), STF_ERR_ARG);
  EXPECT_EQ(stf_device_launch(nullptr, 1, nullptr, &f), STF_ERR_NULL);
  EXPECT_EQ(stf_event_record(nullptr, nullptr), STF_ERR_NULL);
  EXPECT_EQ(stf_stream_create(nullptr), STF_ERR_NULL);
  EXPECT_EQ(stf_device_launch(nullptr, 1, fill, &f), STF_SUCCESS);
  EXPECT_EQ(stf_stream_synchronize(nullptr), STF_SUCCESS);
  EXPECT_EQ(x, 1);
}

// Code written for streams and events runs unchanged on "host", where every
// call completes at once (its events used to be NULL, which the calls refuse).
TEST(HostStreams, EventsAndStreamsWork) {
  ASSERT_EQ(stf_device_select("host"), STF_SUCCESS);
  stf_stream s = nullptr;
  stf_event e = nullptr;
  ASSERT_EQ(stf_stream_create(&s), STF_SUCCESS);
  ASSERT_EQ(stf_event_create(&e), STF_SUCCESS);
  int x = 0;
  Fill f{&x, 5, false};
  EXPECT_EQ(stf_device_launch(s, 1, fill, &f), STF_SUCCESS);
  EXPECT_EQ(x, 5);
  EXPECT_EQ(stf_event_record(e, s), STF_SUCCESS);
  EXPECT_EQ(stf_stream_wait_event(nullptr, e), STF_SUCCESS);
  int done = 0;
  EXPECT_EQ(stf_event_query(e, &done), STF_SUCCESS);
  EXPECT_EQ(done, 1);
  EXPECT_EQ(stf_event_synchronize(e), STF_SUCCESS);
  EXPECT_EQ(stf_event_destroy(e), STF_SUCCESS);
  EXPECT_EQ(stf_stream_destroy(s), STF_SUCCESS);
}

// Handles used twice or across a device switch are errors, not undefined
// behaviour (these were a double free and a read past a host event).
TEST(DeviceHandles, FreedTwiceOrAcrossDevicesIsAnError) {
  ASSERT_EQ(stf_device_select("host"), STF_SUCCESS);
  void *p = nullptr;
  ASSERT_EQ(stf_device_malloc(64, &p), STF_SUCCESS);
  EXPECT_EQ(stf_device_free(p), STF_SUCCESS);
  EXPECT_EQ(stf_device_free(p), STF_ERR_ARG);  // twice
  int on_stack = 0;
  EXPECT_EQ(stf_device_free(&on_stack), STF_ERR_ARG);  // never allocated here
  EXPECT_EQ(stf_device_free(nullptr), STF_SUCCESS);

  // Host memory and a host event, then the emulated device.
  ASSERT_EQ(stf_device_malloc(64, &p), STF_SUCCESS);
  stf_event host_event = nullptr, host_event2 = nullptr;
  ASSERT_EQ(stf_event_create(&host_event), STF_SUCCESS);
  ASSERT_EQ(stf_event_create(&host_event2), STF_SUCCESS);
  EXPECT_NE(host_event, host_event2);
  ASSERT_EQ(stf_device_select("emu"), STF_SUCCESS);
  EXPECT_EQ(stf_event_record(host_event, nullptr), STF_ERR_ARG);
  EXPECT_EQ(stf_stream_wait_event(nullptr, host_event), STF_ERR_ARG);
  EXPECT_EQ(stf_event_synchronize(host_event), STF_ERR_ARG);
  int done = 0;
  EXPECT_EQ(stf_event_query(host_event, &done), STF_ERR_ARG);
  // Released by the device that made them, after the switch too.
  EXPECT_EQ(stf_event_destroy(host_event), STF_SUCCESS);
  EXPECT_EQ(stf_event_destroy(host_event), STF_ERR_ARG);
  EXPECT_EQ(stf_event_destroy(host_event2), STF_SUCCESS);
  EXPECT_EQ(stf_device_free(p), STF_SUCCESS);

  // An emulated stream and event are refused once "host" is back.
  stf_stream s = nullptr;
  stf_event e = nullptr;
  ASSERT_EQ(stf_stream_create(&s), STF_SUCCESS);
  ASSERT_EQ(stf_event_create(&e), STF_SUCCESS);
  ASSERT_EQ(stf_device_select("host"), STF_SUCCESS);
  int x = 0;
  Fill f{&x, 1, false};
  EXPECT_EQ(stf_device_launch(s, 1, fill, &f), STF_ERR_ARG);
  EXPECT_EQ(stf_event_record(e, nullptr), STF_ERR_ARG);
  EXPECT_EQ(stf_device_set_stream(s), STF_ERR_ARG);
  EXPECT_EQ(x, 0);
  EXPECT_EQ(stf_stream_destroy(s), STF_SUCCESS);
  EXPECT_EQ(stf_stream_destroy(s), STF_ERR_ARG);
  EXPECT_EQ(stf_event_destroy(e), STF_SUCCESS);
  stf_event never = reinterpret_cast<stf_event>(&on_stack);
  EXPECT_EQ(stf_event_record(never, nullptr), STF_ERR_ARG);
}

TEST(StreamModel, SetGetAndOptions) {
  stf_sf sf = nullptr;
  ASSERT_EQ(stf_create(MPI_COMM_SELF, &sf), STF_SUCCESS);
  stf_stream_model m = STF_STREAM_MODEL_A;
  ASSERT_EQ(stf_get_stream_model(sf, &m), STF_SUCCESS);
  EXPECT_EQ(m, STF_STREAM_MODEL_B);  // the default
  ASSERT_EQ(stf_set_stream_model(sf, STF_STREAM_MODEL_C), STF_SUCCESS);
  ASSERT_EQ(stf_get_stream_model(sf, &m), STF_SUCCESS);
  EXPECT_EQ(m, STF_STREAM_MODEL_C);
  EXPECT_EQ(stf_set_stream_model(sf, static_cast<stf_stream_model>(7)), STF_ERR_ARG);
  EXPECT_EQ(stf_set_options("-stf_stream_model D"), STF_ERR_OPTION);
  EXPECT_EQ(stf_set_options("-stf_device_aware maybe"), STF_ERR_OPTION);
  EXPECT_EQ(stf_destroy(&sf), STF_SUCCESS);
}

}  // namespace
