// The cuda backend. Without a GPU (or in a build without CUDA) choosing it
// fails cleanly with STF_ERR_UNSUPPORTED and leaves the active device as it
// was; with a GPU its kernels (the functors compiled by nvcc) pack, unpack
// atomically onto duplicate targets (1-, 4- and 8-byte elements: both
// compare-and-swap widths) and scatter, through device copies of the index
// arrays.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "device/device_indices.h"
#include "device/device_kernels.h"
#ifdef STF_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace stf {
namespace {

bool gpu_present() {
#ifdef STF_HAVE_CUDA
  int n = 0;
  const bool yes = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
  cudaGetLastError();
  return yes;
#else
  return false;
#endif
}

// Why "cuda" is refused here, as its error message says.
const char *expected_reason() {
#ifdef STF_HAVE_CUDA
  return "no CUDA device";
#else
  return "no CUDA support";
#endif
}

TEST(CudaDevice, RefusedCleanlyWithoutGpu) {
  if (gpu_present()) GTEST_SKIP() << "a GPU is present (CudaDevice.KernelsOnGpu)";
  std::unique_ptr<Device> d;
  EXPECT_EQ(make_cuda_device(&d), STF_ERR_UNSUPPORTED);
  EXPECT_FALSE(d);
  EXPECT_NE(std::string(stf_last_error_message()).find(expected_reason()), std::string::npos)
      << stf_last_error_message();

  ASSERT_EQ(stf_device_select("emu"), STF_SUCCESS);
  EXPECT_EQ(stf_device_select("cuda"), STF_ERR_UNSUPPORTED);
  const char *name = nullptr;
  ASSERT_EQ(stf_device_get_name(&name), STF_SUCCESS);
  EXPECT_STREQ(name, "emu");
  ASSERT_EQ(stf_device_select("host"), STF_SUCCESS);  // the default, for the other tests
}

// Run alone with STF_DEVICE=cuda (tests/CMakeLists.txt): without a GPU,
// every device call reports plainly that there is no CUDA device, and
// operations on host memory still work.
TEST(CudaDevice, FromEnvironment) {
  const char *env = std::getenv("STF_DEVICE");
  if (!env || std::strcmp(env, "cuda") != 0) GTEST_SKIP() << "needs STF_DEVICE=cuda";
  const char *name = nullptr;
  if (gpu_present()) {
    ASSERT_EQ(stf_device_get_name(&name), STF_SUCCESS);
    EXPECT_STREQ(name, "cuda");
    return;
  }
  EXPECT_EQ(stf_device_get_name(&name), STF_ERR_UNSUPPORTED);
  const std::string why = stf_last_error_message();
  EXPECT_NE(why.find(expected_reason()), std::string::npos) << why;
  EXPECT_EQ(why.find("driver version"), std::string::npos) << why;
  void *p = nullptr;
  EXPECT_EQ(stf_device_malloc(16, &p), STF_ERR_UNSUPPORTED);
  EXPECT_EQ(stf_device_synchronize(), STF_ERR_UNSUPPORTED);
  EXPECT_EQ(std::string(stf_last_error_message()), why);  // the same error every time

  // Host memory still moves: a bcast and a reduce on this process's ranks.
  stf_sf sf = nullptr;
  ASSERT_EQ(stf_create(MPI_COMM_SELF, &sf), STF_SUCCESS) << stf_last_error_message();
  const stf_node remote[3] = {{0, 2}, {0, 0}, {0, 1}};
  ASSERT_EQ(stf_set_graph(sf, 3, 3, nullptr, STF_COPY_VALUES, remote, STF_COPY_VALUES), STF_SUCCESS);
  double roots[3] = {1, 2, 3}, leaves[3] = {0, 0, 0};
  ASSERT_EQ(stf_bcast(sf, MPI_DOUBLE, roots, leaves, MPI_REPLACE), STF_SUCCESS) << stf_last_error_message();
  EXPECT_EQ(leaves[0], 3);
  EXPECT_EQ(leaves[1], 1);
  EXPECT_EQ(leaves[2], 2);
  ASSERT_EQ(stf_reduce(sf, MPI_DOUBLE, leaves, roots, MPI_SUM), STF_SUCCESS) << stf_last_error_message();
  EXPECT_EQ(roots[0], 2);
  EXPECT_EQ(roots[2], 6);
  EXPECT_EQ(stf_destroy(&sf), STF_SUCCESS);
}

// values on the device at the positions of idx, packed, then unpacked with
// SUM onto a zeroed array through idx (which repeats unit 0): every target
// gets the sum of what was packed for it.
template <class T>
void pack_unpack_sum(Device &dev, MPI_Datatype type) {
  const Unit *u = nullptr;
  ASSERT_EQ(decode_unit(type, &u), STF_SUCCESS);
  const DeviceKernels *copy = nullptr, *sum = nullptr;
  ASSERT_EQ(get_device_kernels(dev, *u, MPI_REPLACE, &copy), STF_SUCCESS);
  ASSERT_EQ(get_device_kernels(dev, *u, MPI_SUM, &sum), STF_SUCCESS);
  const int n = 4096, m = 16;
  std::vector<stf_int> idx(n);
  for (int i = 0; i < n; ++i) idx[i] = i % 3 == 0 ? 0 : i % m;
  std::vector<T> values(m);
  for (int i = 0; i < m; ++i) values[i] = static_cast<T>(i % 2 ? 1 : 0);
  values[0] = 1;
  std::vector<T> want(m, 0);
  for (int i = 0; i < n; ++i) want[idx[i]] = static_cast<T>(want[idx[i]] + values[idx[i]]);

  T *d_values = nullptr, *d_buf = nullptr, *d_out = nullptr;
  ASSERT_EQ(dev.alloc(m * sizeof(T), reinterpret_cast<void **>(&d_values)), STF_SUCCESS);
  ASSERT_EQ(dev.alloc(n * sizeof(T), reinterpret_cast<void **>(&d_buf)), STF_SUCCESS);
  ASSERT_EQ(dev.alloc(m * sizeof(T), reinterpret_cast<void **>(&d_out)), STF_SUCCESS);
  const Stream s = dev.library_stream();
  std::vector<T> zeros(m, 0), got(m);
  dev.memcpy_async(d_values, values.data(), m * sizeof(T), CopyKind::h2d, s);
  dev.memcpy_async(d_out, zeros.data(), m * sizeof(T), CopyKind::h2d, s);
  {
    DeviceIndexCache cache;
    IndexList list;
    ASSERT_EQ(cache.get(dev, IndexList::array(idx.data(), n, true), &list), STF_SUCCESS);
    copy->pack(dev, s, *u, list, d_values, d_buf);
    sum->unpack(dev, s, *u, list, d_buf, d_out, true);
    dev.memcpy_async(got.data(), d_out, m * sizeof(T), CopyKind::d2h, s);
    dev.stream_synchronize(s);
  }
  for (int i = 0; i < m; ++i) EXPECT_EQ(got[i], want[i]) << "unit " << i;
  dev.free(d_values);
  dev.free(d_buf);
  dev.free(d_out);
}

TEST(CudaDevice, KernelsOnGpu) {
  if (!gpu_present()) GTEST_SKIP() << "no GPU";
  std::unique_ptr<Device> dev;
  ASSERT_EQ(make_cuda_device(&dev), STF_SUCCESS);
  EXPECT_STREQ(dev->name(), "cuda");
  void *p = nullptr;
  ASSERT_EQ(dev->alloc(64, &p), STF_SUCCESS);
  EXPECT_EQ(dev->memtype(static_cast<char *>(p) + 63), STF_MEMTYPE_DEVICE);
  EXPECT_EQ(dev->counters.memtype_queries, 0);  // our own block: no driver query
  int local = 0;
  EXPECT_EQ(dev->memtype(&local), STF_MEMTYPE_HOST);
  EXPECT_EQ(dev->counters.memtype_queries, 1);
  EXPECT_EQ(dev->live_allocations(), 1);
  dev->free(p);
  EXPECT_EQ(dev->live_allocations(), 0);
  pack_unpack_sum<signed char>(*dev, MPI_SIGNED_CHAR);
  pack_unpack_sum<int>(*dev, MPI_INT);
  pack_unpack_sum<double>(*dev, MPI_DOUBLE);
  EXPECT_EQ(dev->live_allocations(), 0);
}

}  // namespace
}  // namespace stf
