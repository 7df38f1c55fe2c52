// nvshmem_steps: what each step of the nvshmem transport costs on a GPU,
// and the bare protocol's ping-pong, the floor for -stf_type nvshmem.
// Two ranks (PEs), NVSHMEM started over MPI_COMM_WORLD; run under CUDA MPS
// when both share one GPU. Rank 0 times, per step, (a) one step then a
// stream synchronisation (latency as the host sees it) and (b) 100 steps
// then one synchronisation (what the stream pays per step when they queue),
// against a synchronisation alone. Then both ranks run the bare protocol:
// put with signal on the stream, the peer's stream waits for the signal,
// puts back; the host synchronises once per round trip, as a ping-pong
// through the SF does. Host API only, as the transport's plug-in.
// usage: mpiexec -n 2 nvshmem_steps [--bytes B] [--iters N]
#include <cuda_runtime.h>
#include <mpi.h>
#include <nvshmem_host.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>

namespace {

__global__ void empty_kernel() {}

#define CK(call)                                                                              \
  do {                                                                                        \
    cudaError_t e_ = (call);                                                                  \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "nvshmem_steps: %s: %s\n", #call, cudaGetErrorString(e_));          \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                           \
    }                                                                                         \
  } while (0)

double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Microseconds per call of step, (a) each followed by a synchronisation,
// (b) queued 100 at a time.
void time_step(const char *name, cudaStream_t st, int iters, const std::function<void()> &step) {
  for (int i = 0; i < 10; i++) step();
  CK(cudaStreamSynchronize(st));
  double t = now_us();
  for (int i = 0; i < iters; i++) {
    step();
    CK(cudaStreamSynchronize(st));
  }
  const double each = (now_us() - t) / iters;
  t = now_us();
  const int rounds = iters / 100 > 0 ? iters / 100 : 1;
  for (int r = 0; r < rounds; r++) {
    for (int i = 0; i < 100; i++) step();
    CK(cudaStreamSynchronize(st));
  }
  const double queued = (now_us() - t) / (rounds * 100.0);
  std::printf("  %-50s %9.2f %9.2f\n", name, each, queued);
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::size_t bytes = 8;
  int iters = 2000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--bytes")) bytes = std::strtoull(argv[i + 1], nullptr, 10);
    if (!std::strcmp(argv[i], "--iters")) iters = std::atoi(argv[i + 1]);
  }
  if (size != 2) {
    if (!me) std::fprintf(stderr, "nvshmem_steps: run on 2 ranks\n");
    MPI_Finalize();
    return 2;
  }
  // The runtime's primary context first: NVSHMEM then allocates in it.
  CK(cudaSetDevice(0));
  CK(cudaFree(nullptr));
  MPI_Comm comm = MPI_COMM_WORLD;
  nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
  if (nvshmemx_set_attr_mpi_comm_args(&comm, &attr) || nvshmemx_hostlib_init_attr(NVSHMEMX_INIT_WITH_MPI_COMM, &attr)) {
    std::fprintf(stderr, "nvshmem_steps: NVSHMEM did not start\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int peer = 1 - me;
  // Symmetric: a region and a signal word (own line); local: a user buffer.
  char *region = static_cast<char *>(nvshmem_malloc(bytes + 128));
  if (!region) {
    std::fprintf(stderr, "nvshmem_steps: nvshmem_malloc failed\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  auto *signal = reinterpret_cast<std::uint64_t *>(region + ((bytes + 63) / 64) * 64);
  void *user = nullptr;
  CK(cudaMalloc(&user, bytes));
  CK(cudaMemset(region, 0, bytes + 128));
  CK(cudaMemset(user, 1, bytes));
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  CK(cudaDeviceSynchronize());
  nvshmem_barrier_all();
  void *direct = nvshmem_ptr(region, peer);  // the peer's region, where P2P reaches it

  if (me == 0) {
    std::printf("# nvshmem_steps: %zu B, %d iterations; direct pointer to the peer: %s\n", bytes, iters,
                direct ? "yes" : "no");
    std::printf("  %-50s %9s %9s\n", "step (us)", "+sync", "queued");
    std::uint64_t n = 0;
    time_step("stream synchronisation alone", st, iters, [] {});
    time_step("empty kernel", st, iters, [&] { empty_kernel<<<1, 1, 0, st>>>(); });
    time_step("cudaMemcpyAsync device to device (local)", st, iters,
              [&] { cudaMemcpyAsync(region, user, bytes, cudaMemcpyDeviceToDevice, st); });
    if (direct)
      time_step("cudaMemcpyAsync to the peer (nvshmem_ptr)", st, iters,
                [&] { cudaMemcpyAsync(direct, user, bytes, cudaMemcpyDeviceToDevice, st); });
    time_step("putmem_signal_nbi_on_stream (symmetric source)", st, iters, [&] {
      nvshmemx_putmem_signal_nbi_on_stream(region, region, bytes, signal, 0, NVSHMEM_SIGNAL_SET, peer, st);
    });
    time_step("putmem_signal_nbi_on_stream (user source)", st, iters, [&] {
      nvshmemx_putmem_signal_nbi_on_stream(region, user, bytes, signal, 0, NVSHMEM_SIGNAL_SET, peer, st);
    });
    time_step("putmem_signal_on_stream (blocking, user source)", st, iters, [&] {
      nvshmemx_putmem_signal_on_stream(region, user, bytes, signal, 0, NVSHMEM_SIGNAL_SET, peer, st);
    });
    time_step("signal_op_on_stream", st, iters,
              [&] { nvshmemx_signal_op_on_stream(signal, 0, NVSHMEM_SIGNAL_SET, peer, st); });
    time_step("signal_wait_until_on_stream (already true)", st, iters,
              [&] { nvshmemx_signal_wait_until_on_stream(signal, NVSHMEM_CMP_GE, 0, st); });
    time_step("cudaPointerGetAttributes (host only)", st, iters, [&] {
      cudaPointerAttributes a;
      cudaPointerGetAttributes(&a, user);
      n++;
    });
  }
  CK(cudaStreamSynchronize(st));
  CK(cudaMemset(signal, 0, 8));
  CK(cudaDeviceSynchronize());
  nvshmem_barrier_all();

  // The bare protocol: round trip k puts with signal k + 1 each way; the
  // receiving stream waits for it and puts back; the host of rank 0
  // synchronises once per round trip.
  const int rounds = iters;
  double t = 0;
  for (int k = 0; k < rounds + 10; k++) {
    if (k == 10) t = now_us();
    const std::uint64_t want = k + 1;
    if (me == 0) {
      nvshmemx_putmem_signal_nbi_on_stream(region, region, bytes, signal, want, NVSHMEM_SIGNAL_SET, peer, st);
      nvshmemx_signal_wait_until_on_stream(signal, NVSHMEM_CMP_EQ, want, st);
    } else {
      nvshmemx_signal_wait_until_on_stream(signal, NVSHMEM_CMP_EQ, want, st);
      nvshmemx_putmem_signal_nbi_on_stream(region, region, bytes, signal, want, NVSHMEM_SIGNAL_SET, peer, st);
    }
    CK(cudaStreamSynchronize(st));
  }
  const double one_way = (now_us() - t) / rounds / 2;
  if (me == 0) std::printf("  %-50s %9.2f\n", "bare protocol ping-pong, one way", one_way);
  nvshmem_barrier_all();
  nvshmem_free(region);
  cudaFree(user);
  nvshmemx_hostlib_finalize();
  MPI_Finalize();
  return 0;
}
