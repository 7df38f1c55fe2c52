// The C baseline of the Python-overhead benchmark (bench/pyoverhead.py):
// the same stf_bcast on the same SF and arrays, looped in C.
#include "buffer.h"
#include "sf.h"

namespace stfpy {
using namespace nb::literals;

void bind_bench(nb::module_ &m) {
  m.def("_bench_c_bcast", [](const SF &s, nb::handle root, nb::handle leaf, int iterations) {
    Buffer r = get_buffer(root, "rootdata", false), l = get_buffer(leaf, "leafdata", true);
    MPI_Datatype unit = common_unit(r, "rootdata", l, "leafdata");
    stf_sf sf = s.handle();
    int rc = STF_SUCCESS;
    double t;
    {
      nb::gil_scoped_release unlocked;
      t = MPI_Wtime();
      for (int i = 0; i < iterations && rc == STF_SUCCESS; ++i) rc = stf_bcast(sf, unit, r.data, l.data, MPI_REPLACE);
      t = MPI_Wtime() - t;
    }
    check(rc);
    return t;
  }, "sf"_a, "rootdata"_a, "leafdata"_a, "iterations"_a,
  "Seconds for `iterations` blocking bcasts (MPI_REPLACE) called from C (no argument checks).");
}

}  // namespace stfpy
