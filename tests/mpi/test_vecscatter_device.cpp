// Vector scatter with the vectors in emulated-device memory, against the
// serial result: random owned sizes and random needed indices (repeats
// included); forward INSERT and ADD, reverse ADD; double and a 2-double
// unit; owned and ghost vectors on the device, or one of them on the host.
#include <memory>
#include <string>
#include <vector>

#include "check.h"
#include "device_matrices.h"
#include "scatter_case.h"

using namespace stft;

namespace {

struct Placement {
  const char *name;
  bool owned_on_device, ghost_on_device;
};
const Placement kPlacements[] = {
    {"both on device", true, true}, {"owned on device", true, false}, {"ghost on device", false, true}};

// A host vector, or its copy in device memory; data() is where the scatter works.
class Vec {
 public:
  Vec(Checker &ck, const std::vector<double> &v, bool device) : host_(v) {
    if (device) dev_.reset(new DeviceVec(ck, v));
    stf_memtype t;
    stf_get_memtype(data(), &t);
    ck.check(t == (device ? STF_MEMTYPE_DEVICE : STF_MEMTYPE_HOST), "vector placed wrongly (memtype %d)", t);
  }
  double *data() { return dev_ ? dev_->data() : host_.data(); }
  std::vector<double> values(Checker &ck) { return dev_ ? dev_->fetch(ck) : host_; }

 private:
  std::vector<double> host_;
  std::unique_ptr<DeviceVec> dev_;
};

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Checker ck("test_vecscatter_device", argc, argv, 11);
  const std::uint64_t seed = ck.seed();
  ck.code(stf_device_select("emu"), STF_SUCCESS, "stf_device_select(emu)");
  MPI_Datatype pair;
  MPI_Type_contiguous(2, MPI_DOUBLE, &pair);
  MPI_Type_commit(&pair);

  for (int trial = 0; trial < 12; trial++) {
    const Placement &pl = kPlacements[trial % 3];
    ck.context("trial " + std::to_string(trial) + " " + pl.name);
    const ScatterCase sc(seed, trial, me, size, 40, 60);
    const std::vector<stf_int> &owned = sc.owned, &first = sc.first;
    const std::vector<stf_gint> &need = sc.need;
    const stf_int bs = (trial / 3) % 2 ? 2 : 1;
    MPI_Datatype unit = bs == 2 ? pair : MPI_DOUBLE;
    stf_vecscatter vs = nullptr;
    if (!ck.code(stf_vecscatter_create(MPI_COMM_WORLD, owned[me], static_cast<stf_int>(need.size()), need.data(), &vs),
                 STF_SUCCESS, "create"))
      continue;
    auto xval = [](stf_gint g, stf_int c) { return 10.0 * static_cast<double>(g) + c; };
    std::vector<double> xh(owned[me] * bs + 1, 0.0);
    for (stf_int i = 0; i < owned[me]; i++)
      for (stf_int c = 0; c < bs; c++) xh[i * bs + c] = xval(first[me] + i, c);
    Vec x(ck, xh, pl.owned_on_device), ghost(ck, std::vector<double>(need.size() * bs + 1, 0.5), pl.ghost_on_device);
    // INSERT then ADD: the ghosts end at 2x the owned values.
    for (stf_insert_mode mode : {STF_INSERT_VALUES, STF_ADD_VALUES}) {
      stf_request req = nullptr;
      ck.code(stf_vecscatter_forward_begin(vs, unit, x.data(), ghost.data(), mode, &req), STF_SUCCESS, "forward");
      ck.code(stf_vecscatter_forward_end(vs, &req), STF_SUCCESS, "forward_end");
      const std::vector<double> got = ghost.values(ck);  // a copy on the library stream: after the unpack
      for (std::size_t i = 0; i < need.size(); i++)
        for (stf_int c = 0; c < bs; c++) {
          const double want = mode == STF_INSERT_VALUES ? xval(need[i], c) : 2 * xval(need[i], c);
          ck.check(got[i * bs + c] == want, "ghost %zu: expected %g got %g", i, want, got[i * bs + c]);
        }
    }
    // Reverse ADD of the ghosts (2 x owned values) into ones: owned entry g
    // ends at 1 + 2 * value(g) * (number of requests of g anywhere).
    const std::vector<stf_int> counts = sc.request_counts(MPI_COMM_WORLD);
    Vec acc(ck, std::vector<double>(owned[me] * bs + 1, 1.0), pl.owned_on_device);
    stf_request req = nullptr;
    ck.code(stf_vecscatter_reverse_begin(vs, unit, ghost.data(), acc.data(), STF_ADD_VALUES, &req), STF_SUCCESS,
            "reverse");
    ck.code(stf_vecscatter_reverse_end(vs, &req), STF_SUCCESS, "reverse_end");
    const std::vector<double> got = acc.values(ck);
    for (stf_int i = 0; i < owned[me]; i++)
      for (stf_int c = 0; c < bs; c++) {
        const stf_int g = first[me] + i;
        const double want = 1.0 + 2.0 * xval(g, c) * counts[g];
        ck.check(got[i * bs + c] == want, "owned %d: expected %g got %g", g, want, got[i * bs + c]);
      }
    ck.code(stf_vecscatter_destroy(&vs), STF_SUCCESS, "destroy");
  }
  MPI_Type_free(&pair);
  int rc = ck.finish();
  MPI_Finalize();
  return rc;
}
