// Distributed CSR SpMV on the emulated device (or $STF_DEVICE: the GPU
// checks run it on cuda): the three variants
// (split phase, event-based with stream model C, two streams) against the
// simple row loop, on a generated Laplacian, on generated matrices aimed at
// every way the row-grouped layout stores rows (test_csr_matrices.h) and on
// every shared matrix (exit 77 after the generated cases when those are
// absent), and the host waits per
// multiply that each variant's design implies:
//   split, two streams: begin waits for the library stream (at least once
//     when this rank sends, at most twice: the previous unpack and the
//     stream), end does not wait;
//   event: begin does not wait at all (stream model C), end at most twice.
// The same products once more on the "host" device, where every call
// completes at once and the exchange sees host memory (no waits).
// STF_TEST_MODEL_C_PENDING=1: the library does not implement model C yet
// (it runs C as B), so the event variant is held to the split variant's
// counts instead, and a note says so.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "check.h"
#include "device_matrices.h"
#include "test_csr_matrices.h"

using namespace stft;

namespace {

const char *kVariantName[] = {"split", "event", "two-streams"};
const stf_csr_mult_variant kVariants[] = {STF_CSR_MULT_SPLIT, STF_CSR_MULT_EVENT, STF_CSR_MULT_TWO_STREAMS};

double x_of(int64_t i) { return 1.0 + static_cast<double>((i * 7919) % 101) / 64.0; }

bool model_c_pending() {
  const char *v = std::getenv("STF_TEST_MODEL_C_PENDING");
  return v && std::atoi(v) == 1;
}

// Host waits per multiply, maximum over ranks (for the summary table).
struct Waits {
  long long mults = 0, begin = 0, end = 0;
};

void check_variant(Checker &ck, stf_csr A, const stf_coo &g, stf_csr_mult_variant variant, bool emu, Waits *table) {
  int64_t first;
  stf_int nlocal;
  stf_csr_get_info(A, nullptr, &nlocal, &first, nullptr, nullptr);
  stf_sf sf = nullptr;
  stf_csr_get_ghost_sf(A, &sf);
  std::vector<double> xg(g.nrows), expect, scale;
  for (int64_t i = 0; i < g.nrows; i++) xg[i] = x_of(i);
  row_loop(g, xg, false, &expect, &scale);
  DeviceVec x(ck, std::vector<double>(xg.begin() + first, xg.begin() + first + nlocal)), y(ck, nlocal);
  const bool strict_c = variant == STF_CSR_MULT_EVENT && !model_c_pending();
  // Several multiplies in a row: later ones meet the previous one's work
  // still queued (unpack, off-diagonal product).
  for (int rep = 0; rep < 3; rep++) {
    stf_csr_sync_counts c0, c1;
    stf_stats s0 = stf_stats_init(), s1 = stf_stats_init();
    stf_csr_get_sync_counts(A, &c0);
    stf_get_stats(sf, &s0);
    if (!ck.code(stf_csr_mult_device(A, x.data(), y.data(), variant), STF_SUCCESS, "stf_csr_mult_device")) return;
    stf_csr_get_sync_counts(A, &c1);
    stf_get_stats(sf, &s1);
    const long long begin = c1.waits_in_begin - c0.waits_in_begin, end = c1.waits_in_end - c0.waits_in_end;
    const bool sends = s1.messages_sent > s0.messages_sent, moves = sends || s1.messages_received > s0.messages_received;
    ck.check(c1.mults == c0.mults + 1, "mults went from %lld to %lld", c0.mults, c1.mults);
    if (!emu) {
      ck.check(begin == 0 && end == 0, "host device: %lld + %lld host waits", begin, end);
    } else if (strict_c) {
      ck.check(begin == 0, "event variant: %lld host waits in begin, want 0 (stream model C)", begin);
      ck.check(end <= 2, "event variant: %lld host waits in end, want <= 2", end);
    } else {
      ck.check(!sends || begin >= 1, "%lld host waits in begin although this rank sends device data", begin);
      ck.check(begin <= 2, "%lld host waits in begin, want <= 2", begin);
      ck.check(end == 0, "%lld host waits in end, want 0 (stream model B)", end);
    }
    if (!moves) ck.check(begin == 0 && end == 0, "%lld + %lld host waits with nothing to move", begin, end);
    table->mults++;
    table->begin += begin;
    table->end += end;
    const std::vector<double> yh = y.fetch(ck);
    for (stf_int i = 0; i < nlocal; i++) {
      const double e = expect[first + i];
      if (!ck.check(std::fabs(yh[i] - e) <= 1e-13 * (scale[first + i] + 1e-300),
                    "row %lld: expected %.17g got %.17g", static_cast<long long>(first + i), e, yh[i]))
        break;
    }
  }
}

void check_matrix(Checker &ck, const stf_coo &g, const std::string &name, stf_partition how, bool emu,
                  Waits table[3]) {
  ck.context(name + (how == STF_PARTITION_ROWS ? " rows" : " nnz"));
  stf_csr A = nullptr;
  if (!ck.code(stf_csr_create(MPI_COMM_WORLD, &g, how, &A), STF_SUCCESS, "stf_csr_create")) return;
  stf_int nlocal;
  stf_csr_get_info(A, nullptr, &nlocal, nullptr, nullptr, nullptr);
  {
    DeviceVec x(ck, nlocal + 1), y(ck, nlocal + 1);
    ck.code(stf_csr_mult_device(A, x.data(), y.data(), STF_CSR_MULT_SPLIT), STF_ERR_STATE, "mult before to_device");
    ck.code(stf_csr_to_device(A), STF_SUCCESS, "stf_csr_to_device");
    ck.code(stf_csr_to_device(A), STF_ERR_STATE, "stf_csr_to_device twice");
    std::vector<double> hx(nlocal + 1), hy(nlocal + 1);
    if (emu)
      ck.code(stf_csr_mult_device(A, hx.data(), hy.data(), STF_CSR_MULT_SPLIT), STF_ERR_ARG, "host vectors on emu");
    ck.code(stf_csr_mult_device(A, x.data(), y.data(), static_cast<stf_csr_mult_variant>(7)), STF_ERR_ARG,
            "unknown variant");
  }
  for (int v = 0; v < 3; v++) {
    ck.context(name + (how == STF_PARTITION_ROWS ? " rows " : " nnz ") + kVariantName[v]);
    check_variant(ck, A, g, kVariants[v], emu, &table[v]);
  }
  // The host product still works next to the device copy.
  ck.context(name + " host mult");
  int64_t first;
  stf_csr_get_info(A, nullptr, nullptr, &first, nullptr, nullptr);
  std::vector<double> xg(g.nrows), y(nlocal + 1), expect, scale;
  for (int64_t i = 0; i < g.nrows; i++) xg[i] = x_of(i);
  ck.code(stf_csr_mult(A, xg.data() + first, y.data()), STF_SUCCESS, "stf_csr_mult");
  row_loop(g, xg, false, &expect, &scale);
  for (stf_int i = 0; i < nlocal; i++)
    if (!ck.check(std::fabs(y[i] - expect[first + i]) <= 1e-13 * (scale[first + i] + 1e-300),
                  "host row %d differs", i))
      break;
  ck.code(stf_csr_destroy(&A), STF_SUCCESS, "stf_csr_destroy");
}

void print_table(Checker &ck, const std::string &name, Waits table[3]) {
  for (int v = 0; v < 3; v++) {
    long long in[2] = {table[v].begin, table[v].end}, out[2];
    MPI_Reduce(in, out, 2, MPI_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    if (ck.rank() == 0 && table[v].mults)
      std::printf("%s %-11s: host waits per multiply (max over ranks) begin %.2f end %.2f\n", name.c_str(),
                  kVariantName[v], static_cast<double>(out[0]) / table[v].mults,
                  static_cast<double>(out[1]) / table[v].mults);
  }
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  Checker ck("test_csr_device", argc, argv, 0);
  ck.code(stf_device_select(test_device()), STF_SUCCESS, test_device());
  if (ck.rank() == 0 && model_c_pending())
    std::printf("test_csr_device: STF_TEST_MODEL_C_PENDING=1: event variant held to stream model B's counts\n");
  {
    stf_coo g = laplacian_2d(23);
    Waits table[3];
    check_matrix(ck, g, "laplacian", STF_PARTITION_ROWS, true, table);
    check_matrix(ck, g, "laplacian", STF_PARTITION_NNZ, true, table);
    print_table(ck, "laplacian", table);
    stf_coo_free(&g);
  }
  for (TestMatrix &m : csr_test_matrices(1200, static_cast<unsigned>(ck.seed()))) {
    Waits table[3];
    check_matrix(ck, m.coo, m.name, STF_PARTITION_NNZ, true, table);
    stf_coo_free(&m.coo);
  }
  const bool shared = shared_matrices_present();
  for (const std::string &name : shared ? matrix_names(matrix_dir().c_str()) : std::vector<std::string>{}) {
    stf_coo g{};
    if (!read_shared_matrix(ck, name.c_str(), &g)) continue;
    Waits table[3];
    check_matrix(ck, g, name, STF_PARTITION_NNZ, true, table);
    if (name == "Pd" || name == "1138_bus") print_table(ck, name, table);
    stf_coo_free(&g);
  }
  // Everything on emu is freed (matrices and their SFs destroyed): switch.
  if (ck.code(stf_device_select("host"), STF_SUCCESS, "stf_device_select(host)")) {
    stf_coo g = laplacian_2d(17);
    Waits table[3];
    check_matrix(ck, g, "laplacian on host", STF_PARTITION_ROWS, false, table);
    stf_coo_free(&g);
  }
  int rc = ck.finish();
  if (rc == 0 && !shared) {
    if (ck.rank() == 0) std::printf("test_csr_device: shared matrices SKIPPED (none at %s)\n", matrix_dir().c_str());
    rc = 77;
  }
  MPI_Finalize();
  return rc;
}
