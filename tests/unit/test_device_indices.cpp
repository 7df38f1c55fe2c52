// The per-plan cache of device index arrays, on the emulated device: an
// indexed list gets a copy in device memory with the same contents, a list
// inside an array copied before reuses it, lists without an array are left
// alone, and the copies die with the cache.
#include <gtest/gtest.h>

#include <vector>

#include "device/device_indices.h"

namespace stf {
namespace {

TEST(DeviceIndexCache, CopiesIndexedListsOnce) {
  auto dev = make_emu_device();
  std::vector<stf_int> idx = {7, 3, 3, 9, 0, 5};
  {
    DeviceIndexCache cache;
    IndexList all = IndexList::array(idx.data(), 6, true), on_dev;
    ASSERT_EQ(cache.get(*dev, all, &on_dev), STF_SUCCESS);
    EXPECT_NE(on_dev.idx, idx.data());
    EXPECT_EQ(dev->memtype(on_dev.idx), STF_MEMTYPE_DEVICE);
    EXPECT_EQ(on_dev.n, 6);
    EXPECT_TRUE(on_dev.has_duplicates);
    std::vector<stf_int> back(6, -1);
    dev->memcpy_async(back.data(), on_dev.idx, 6 * sizeof(stf_int), CopyKind::d2h, dev->library_stream());
    dev->stream_synchronize(dev->library_stream());
    EXPECT_EQ(back, idx);

    // One message of the list: a slice of the same copy.
    IndexList part = IndexList::array(idx.data() + 2, 3, false), part_dev;
    ASSERT_EQ(cache.get(*dev, part, &part_dev), STF_SUCCESS);
    EXPECT_EQ(part_dev.idx, on_dev.idx + 2);
    // Asked again: the same copy.
    IndexList again;
    ASSERT_EQ(cache.get(*dev, all, &again), STF_SUCCESS);
    EXPECT_EQ(again.idx, on_dev.idx);
    EXPECT_EQ(cache.copies(), 1);

    // No array, nothing to copy.
    IndexList range = IndexList::range(4, 10), range_dev;
    ASSERT_EQ(cache.get(*dev, range, &range_dev), STF_SUCCESS);
    EXPECT_EQ(range_dev.kind, IndexKind::contiguous);
    EXPECT_EQ(range_dev.start, 4);
    EXPECT_EQ(cache.copies(), 1);
    EXPECT_EQ(dev->live_allocations(), 1);
  }
  EXPECT_EQ(dev->live_allocations(), 0);
}

}  // namespace
}  // namespace stf
