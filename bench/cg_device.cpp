// cg_device: time per CG iteration on device vectors, the CG study of Zhang
// et al., "The PetscSF Scalable Communication Layer", IEEE TPDS 33(4), 2022:
//   sync   stf_cg_solve_device: the host reads each dot product (a stream
//          wait) and sums it with a blocking MPI_Allreduce;
//   async  stf_cg_solve_async (CGAsync): dot products, their global sums and
//          the scalar updates are work on the library stream;
// per ghost SF type (--types) and SpMV variant (--variants), on the active
// device (--device emu|cuda), against the host CG (stf_cg_solve on host
// vectors, impl "host") in the same run. Every solve runs exactly
// --iterations iterations from x = 0 (rtol 0). Before timing, each device
// solution must match the host CG's (relative 1e-6). The implementations
// take turns in --rounds rounds; the table shows the median round's time per
// iteration on the slowest rank with [min..max] and the ratio to host.
// Matrices: --stencil lap3d7_N (the 7-point Laplacian on N^3 points) or
// --matrix FILE (Matrix Market, SPD).
#include <starforest.h>
#include <stf_apps.h>

#include "bench_common.h"
#include "check.h"
#include "stencils.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

struct Options {
  std::string device = "emu";
  std::string stencil = "lap3d7_32", matrix;
  std::vector<std::string> types{"basic"}, variants{"event"};
  int iterations = 50, rounds = 5;
  std::string json;
};

const char *const kVariantNames[] = {"split", "event", "two-streams"};

int variant_of(const std::string &name) {
  for (int v = 0; v < 3; v++)
    if (name == kVariantNames[v]) return v;
  std::fprintf(stderr, "cg_device: unknown variant '%s' (split, event, two-streams)\n", name.c_str());
  MPI_Abort(MPI_COMM_WORLD, 2);
  return 0;
}

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    const char *next = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--quick") {
      o.stencil = "lap3d7_8";
      o.iterations = 5;
      o.rounds = 1;
      o.variants = {"split", "event", "two-streams"};
    } else if (a == "--device" && next) o.device = argv[++i];
    else if (a == "--stencil" && next) o.stencil = argv[++i];
    else if (a == "--matrix" && next) o.matrix = argv[++i];
    else if (a == "--types" && next) o.types = bench::split_list(argv[++i]);
    else if (a == "--variants" && next) o.variants = bench::split_list(argv[++i]);
    else if (a == "--iterations" && next) o.iterations = std::atoi(argv[++i]);
    else if (a == "--rounds" && next) o.rounds = std::atoi(argv[++i]);
    else if (a == "--json" && next) o.json = argv[++i];
    else {
      std::fprintf(stderr,
                   "usage: cg_device [--quick] [--device emu|cuda] [--stencil lap3d7_N | --matrix FILE] "
                   "[--types basic,nvshmem] [--variants split,event,two-streams] [--iterations K] [--rounds R] "
                   "[--json FILE]\n");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  if (o.iterations < 1 || o.rounds < 1) {
    std::fprintf(stderr, "cg_device: --iterations and --rounds must be positive\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return o;
}

// One matrix on the device for one ghost SF type, with b and x there.
struct DeviceCase {
  std::string type;
  stf_csr A = nullptr;
  double *b = nullptr, *x = nullptr;
};

void reset(double *x, const std::vector<double> &zero) {
  if (!zero.empty()) CHECK_STF(stf_device_memcpy(x, zero.data(), zero.size() * sizeof(double)));
}

double max_relative_difference(const std::vector<double> &a, const std::vector<double> &b) {
  double d = 0, norm = 0;
  for (std::size_t i = 0; i < a.size(); i++) {
    d = std::max(d, std::fabs(a[i] - b[i]));
    norm = std::max(norm, std::fabs(b[i]));
  }
  d = bench::max_over_ranks(d, MPI_COMM_WORLD);
  norm = bench::max_over_ranks(norm, MPI_COMM_WORLD);
  return norm > 0 ? d / norm : d;
}

}  // namespace

int main(int argc, char **argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const Options o = parse(argc, argv);
  if (provided < MPI_THREAD_MULTIPLE) {
    if (rank == 0) std::fprintf(stderr, "cg_device: CGAsync needs MPI_THREAD_MULTIPLE\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  stf_coo g{};
  std::string name = o.stencil;
  if (!o.matrix.empty()) {
    CHECK_STF(stf_mm_read(o.matrix.c_str(), &g));
    name = o.matrix.substr(o.matrix.find_last_of('/') + 1);
  } else if (!bench::stencil_matrix(o.stencil, &g)) {
    if (rank == 0) std::fprintf(stderr, "cg_device: unknown stencil '%s' (lap3d7_N)\n", o.stencil.c_str());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  // The host CG: the baseline and the reference solution.
  stf_csr H = nullptr;
  CHECK_STF(stf_csr_create(MPI_COMM_WORLD, &g, STF_PARTITION_NNZ, &H));
  int64_t first = 0;
  stf_int n = 0;
  CHECK_STF(stf_csr_get_info(H, nullptr, &n, &first, nullptr, nullptr));
  std::vector<double> b(n), xh(n), zero(n, 0.0), xd(n);
  for (stf_int i = 0; i < n; i++) b[i] = 1.0 + 0.001 * static_cast<double>((first + i) % 97);
  stf_cg_result r{};
  auto host_solve = [&] {
    std::fill(xh.begin(), xh.end(), 0.0);
    CHECK_STF(stf_cg_solve(H, b.data(), xh.data(), 0.0, o.iterations, &r));
  };
  host_solve();
  const std::vector<double> reference = xh;

  CHECK_STF(stf_device_select(o.device.c_str()));
  for (const std::string &t : o.types)
    if (t == "nvshmem") CHECK_STF(stf_nvshmem_init(MPI_COMM_WORLD));
  std::vector<DeviceCase> cases;
  for (const std::string &t : o.types) {
    DeviceCase c{t};
    CHECK_STF(stf_set_options(("-stf_type " + t).c_str()));
    CHECK_STF(stf_csr_create(MPI_COMM_WORLD, &g, STF_PARTITION_NNZ, &c.A));
    CHECK_STF(stf_csr_to_device(c.A));
    CHECK_STF(stf_device_malloc(n * sizeof(double), reinterpret_cast<void **>(&c.b)));
    CHECK_STF(stf_device_malloc(n * sizeof(double), reinterpret_cast<void **>(&c.x)));
    if (n) CHECK_STF(stf_device_memcpy(c.b, b.data(), n * sizeof(double)));
    cases.push_back(c);
  }
  CHECK_STF(stf_set_options("-stf_type basic"));

  std::vector<std::string> labels{"host"};
  std::vector<std::function<void()>> impls{host_solve};
  for (const std::string &vname : o.variants) {
    const auto variant = static_cast<stf_csr_mult_variant>(variant_of(vname));
    for (const DeviceCase &c : cases) {
      auto sync = [&o, &zero, c, variant, &r] {
        reset(c.x, zero);
        CHECK_STF(stf_cg_solve_device(c.A, c.b, c.x, 0.0, o.iterations, variant, nullptr, &r));
      };
      auto async = [&o, &zero, c, variant, &r] {
        reset(c.x, zero);
        CHECK_STF(stf_cg_solve_async(c.A, c.b, c.x, 0.0, o.iterations, variant, nullptr, &r));
      };
      for (int k = 0; k < 2; k++) {
        if (k)
          async();
        else
          sync();
        if (n) CHECK_STF(stf_device_memcpy(xd.data(), c.x, n * sizeof(double)));
        const double d = max_relative_difference(xd, reference);
        if (!(d <= 1e-6)) {
          if (rank == 0)
            std::fprintf(stderr, "cg_device: %s %s %s: x differs from the host CG's by %g (relative)\n",
                         k ? "async" : "sync", c.type.c_str(), vname.c_str(), d);
          MPI_Abort(MPI_COMM_WORLD, 1);
        }
        labels.push_back(std::string(k ? "async " : "sync ") + c.type + " " + vname);
        impls.push_back(k ? std::function<void()>(async) : std::function<void()>(sync));
      }
    }
  }

  const std::vector<bench::Stats> st = bench::time_rotating(MPI_COMM_WORLD, o.rounds, 1, impls);
  bench::JsonLog log;
  if (rank == 0) {
    std::printf("# cg_device: %s, %lld rows, %d ranks, device %s, %d iterations per solve, us per iteration\n",
                name.c_str(), static_cast<long long>(g.nrows), size, o.device.c_str(), o.iterations);
    std::printf("%-28s %28s %9s\n", "impl", "us/iter [min..max]", "vs host");
  }
  for (std::size_t k = 0; k < impls.size(); k++) {
    bench::Stats s = st[k];
    s.us /= o.iterations;
    s.min_us /= o.iterations;
    s.max_us /= o.iterations;
    if (rank == 0)
      std::printf("%-28s %28s %8.2fx\n", labels[k].c_str(), bench::range_text(s).c_str(),
                  st[k].us / st[0].us);
    log.add(bench::Record().timing("cg_device", labels[k], g.nrows, size, s).str("matrix", name).str(
        "device", o.device).integer("cg_iterations", o.iterations));
  }
  if (rank == 0 && !o.json.empty() && !log.write(o.json)) MPI_Abort(MPI_COMM_WORLD, 1);

  for (DeviceCase &c : cases) {
    CHECK_STF(stf_device_free(c.b));
    CHECK_STF(stf_device_free(c.x));
    CHECK_STF(stf_csr_destroy(&c.A));
  }
  CHECK_STF(stf_csr_destroy(&H));
  stf_coo_free(&g);
  MPI_Finalize();
  return 0;
}
