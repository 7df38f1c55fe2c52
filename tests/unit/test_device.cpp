// The emulated device on its own: streams run in order, events order work
// across streams, kernels really run concurrently (a non-atomic unpack onto
// one slot loses updates; the atomic functor does not), memory detection.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

#include "device/device.h"
#include "device/device_kernels.h"
#include "kernels/functors.h"
#include "kernels/ops.h"

namespace stf {
namespace {

TEST(EmuDevice, MemoryTypes) {
  auto dev = make_emu_device();
  void *p = nullptr;
  ASSERT_EQ(dev->alloc(256, &p), STF_SUCCESS);
  int local = 0;
  EXPECT_EQ(dev->memtype(p), STF_MEMTYPE_DEVICE);
  EXPECT_EQ(dev->memtype(static_cast<char *>(p) + 255), STF_MEMTYPE_DEVICE);
  EXPECT_EQ(dev->memtype(&local), STF_MEMTYPE_HOST);
  EXPECT_EQ(dev->memtype(nullptr), STF_MEMTYPE_HOST);
  const long long asked = dev->counters.memtype_queries;
  EXPECT_EQ(dev->memtype(p), STF_MEMTYPE_DEVICE);  // answered by the cache
  EXPECT_EQ(dev->counters.memtype_queries, asked);
  EXPECT_EQ(dev->live_allocations(), 1);
  dev->free(p);
  EXPECT_EQ(dev->live_allocations(), 0);
}

// Work on one stream runs in enqueue order; a host task sleeping first
// would be overtaken if it did not.
TEST(EmuDevice, StreamOrder) {
  auto dev = make_emu_device();
  Stream s = nullptr;
  ASSERT_EQ(dev->stream_create(&s), STF_SUCCESS);
  std::vector<int> v(1000, 0), w(1000, 0);
  dev->launch(s, 1000, [p = v.data()](stf_int i) {
    std::this_thread::sleep_for(std::chrono::microseconds(i % 7 == 0 ? 50 : 0));
    p[i] = i;
  });
  dev->memcpy_async(w.data(), v.data(), v.size() * sizeof(int), CopyKind::d2d, s);
  dev->stream_synchronize(s);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(w[i], i);
  dev->stream_destroy(s);
}

// Stream b waits for an event recorded on a after a slow kernel: the copy
// on b must see the kernel's result. Without the wait it could run first.
TEST(EmuDevice, EventOrdersStreams) {
  auto dev = make_emu_device();
  Stream a = nullptr, b = nullptr;
  Event e = nullptr;
  ASSERT_EQ(dev->stream_create(&a), STF_SUCCESS);
  ASSERT_EQ(dev->stream_create(&b), STF_SUCCESS);
  ASSERT_EQ(dev->event_create(&e), STF_SUCCESS);
  EXPECT_TRUE(dev->event_query(e));  // never recorded: complete, as in CUDA
  int x = 0, y = 0;
  dev->launch(a, 1, [px = &x](stf_int) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    *px = 42;
  });
  dev->event_record(e, a);
  dev->stream_wait_event(b, e);
  dev->memcpy_async(&y, &x, sizeof x, CopyKind::d2d, b);
  dev->stream_synchronize(b);
  EXPECT_EQ(y, 42);
  EXPECT_TRUE(dev->event_query(e));
  dev->event_synchronize(e);
  dev->event_destroy(e);
  dev->stream_destroy(a);
  dev->stream_destroy(b);
  EXPECT_GE(dev->counters.kernel_launches, 1);
  EXPECT_EQ(dev->counters.copies_d2d, 1);
}

// n contributions of 1 onto one slot with the unpack functor on the emu
// pool. Returns the final value (n if nothing was lost). Doubles: their add
// is a load, an add and a store, which an interrupt can cut in two (an
// integer add to memory is one instruction).
template <bool Atomic>
double unpack_onto_one_slot(Device &dev, stf_int n) {
  std::vector<stf_int> idx(n, 0);
  std::vector<double> buf(n, 1), data(1, 0);
  IndexList l = IndexList::array(idx.data(), n, true);
  dev.launch(dev.library_stream(), n,
             UnpackFn<double, OpSum<double>, 1, Indexed, Atomic>{Indexed(l), buf.data(), data.data(), Block<1>(1)});
  dev.stream_synchronize(dev.library_stream());
  return data[0];
}

TEST(EmuDevice, AtomicUnpackOnDuplicatesIsExact) {
  auto dev = make_emu_device();
  for (int trial = 0; trial < 5; ++trial) EXPECT_EQ(unpack_onto_one_slot<true>(*dev, 1 << 20), 1 << 20);
}

// The data race the atomics prevent is real on emu: the plain functor loses
// updates. Whether threads overlap on their own depends on the scheduler
// (2 cores, other tests running), so the device is made with
// STF_EMU_PREEMPT=1: its workers are interrupted mid-kernel, which cuts
// read-modify-writes in two on every run. ThreadSanitizer would (rightly)
// report the race, so it is not run there.
TEST(EmuDevice, PlainUnpackOnDuplicatesLosesUpdates) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "deliberate data race; not run under ThreadSanitizer";
#else
  setenv("STF_EMU_PREEMPT", "1", 1);
  auto dev = make_emu_device();
  unsetenv("STF_EMU_PREEMPT");
  const stf_int n = 1 << 20;
  for (int trial = 0; trial < 5; ++trial) EXPECT_LT(unpack_onto_one_slot<false>(*dev, n), n);
  // The same device with atomics loses nothing.
  EXPECT_EQ(unpack_onto_one_slot<true>(*dev, n), n);
#endif
}

// REPLACE onto one target from many leaves with units of three doubles: the
// result must be one whole leaf unit, the last one as on the host, never a
// mix of elements from different leaves (workers interrupted mid-kernel).
TEST(EmuDevice, ReplaceOntoDuplicatesKeepsWholeUnits) {
  setenv("STF_EMU_PREEMPT", "1", 1);
  auto dev = make_emu_device();
  unsetenv("STF_EMU_PREEMPT");
  MPI_Datatype three;
  MPI_Type_contiguous(3, MPI_DOUBLE, &three);
  MPI_Type_commit(&three);
  const Unit *u = nullptr;
  ASSERT_EQ(decode_unit(three, &u), STF_SUCCESS);
  const DeviceKernels *k = nullptr;
  ASSERT_EQ(get_device_kernels(*dev, *u, MPI_REPLACE, &k), STF_SUCCESS);
  const stf_int n = 1 << 16;
  std::vector<double> buf(3 * static_cast<std::size_t>(n));
  for (stf_int i = 0; i < n; ++i) buf[3 * i] = buf[3 * i + 1] = buf[3 * i + 2] = i;
  std::vector<stf_int> zeros(n, 0);
  double target[3] = {-1, -1, -1};
  k->unpack(*dev, dev->library_stream(), *u, IndexList::array(zeros.data(), n, true), buf.data(), target, true);
  dev->stream_synchronize(dev->library_stream());
  EXPECT_EQ(target[0], n - 1);
  EXPECT_EQ(target[1], n - 1);
  EXPECT_EQ(target[2], n - 1);
  MPI_Type_free(&three);
}

TEST(HostDevice, EverythingImmediate) {
  auto dev = make_host_device();
  int local = 0;
  EXPECT_EQ(dev->memtype(&local), STF_MEMTYPE_HOST);
  std::vector<int> v(10, 0);
  dev->launch(dev->library_stream(), 10, [p = v.data()](stf_int i) { p[i] = i + 1; });
  EXPECT_EQ(v[9], 10);  // no synchronisation needed
}

}  // namespace
}  // namespace stf
