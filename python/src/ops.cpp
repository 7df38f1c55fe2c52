// The operations of starforest.SF on arrays: blocking and split phase
// (begin returns a Request, end completes it), and prepared (init returns a
// PreparedRequest, started many times). The arrays are checked
// against the graph before the library sees them; the GIL is released while
// the library runs.
#include "arrays.h"
#include "prepared.h"
#include "request.h"
#include "sf.h"

namespace stfpy {
using namespace nb::literals;

namespace {

void need_graph(const SF &s) {
  s.handle();
  if (s.nroots < 0) fail(STF_ERR_STATE, "the SF has no graph: call set_graph first");
}

// The arguments of one operation, checked: up to three arrays and an op.
struct Args {
  Buffer buf[3];
  MPI_Datatype unit = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
};

Args bcast_args(const SF &s, nb::handle root, nb::handle leaf, nb::handle op, MPI_Op dflt, bool to_leaves) {
  Args a;
  s.checked(to_leaves ? "bcast" : "reduce", [&] {
    need_graph(s);
    Buffer &r = a.buf[0], &l = a.buf[1];
    r = get_buffer(root, "rootdata", !to_leaves);
    l = get_buffer(leaf, "leafdata", to_leaves);
    a.unit = common_unit(r, "rootdata", l, "leafdata");
    check_length(r, "rootdata", s.nroots, "nroots");
    check_length(l, "leafdata", s.leafspan, "maxleaf + 1");
    a.op = to_op(op, dflt);
  });
  return a;
}

Args fetch_args(const SF &s, nb::handle root, nb::handle leaf, nb::handle update, nb::handle op) {
  Args a;
  s.checked("fetch_and_op", [&] {
    need_graph(s);
    a.buf[0] = get_buffer(root, "rootdata", true);
    a.buf[1] = get_buffer(leaf, "leafdata", false);
    a.buf[2] = get_buffer(update, "leafupdate", true);
    a.unit = common_unit(a.buf[0], "rootdata", a.buf[1], "leafdata");
    common_unit(a.buf[1], "leafdata", a.buf[2], "leafupdate");
    check_length(a.buf[0], "rootdata", s.nroots, "nroots");
    check_length(a.buf[1], "leafdata", s.leafspan, "maxleaf + 1");
    check_length(a.buf[2], "leafupdate", s.leafspan, "maxleaf + 1");
    a.op = to_op(op, MPI_SUM);
  });
  return a;
}

// Multi-roots of s (sum of degrees): collective the first time.
int64_t multiroots(SF &s) {
  need_graph(s);
  if (s.nmulti < 0) {
    stf_sf multi = nullptr;
    stf_int n = 0;
    run([&] { return stf_get_multi_sf(s.sf, &multi); });
    check(stf_get_graph(multi, &n, nullptr, nullptr, nullptr));
    s.nmulti = n;
  }
  return s.nmulti;
}

// gather: leaves -> multi-roots; scatter: multi-roots -> leaves.
Args multi_args(SF &s, nb::handle multiroot, nb::handle leaf, bool to_roots) {
  int64_t nmulti = multiroots(s);
  Args a;
  s.checked(to_roots ? "gather" : "scatter", [&] {
    a.buf[0] = get_buffer(multiroot, "multirootdata", to_roots);
    a.buf[1] = get_buffer(leaf, "leafdata", !to_roots);
    a.unit = common_unit(a.buf[0], "multirootdata", a.buf[1], "leafdata");
    check_length(a.buf[0], "multirootdata", nmulti, "sum of the roots' degrees");
    check_length(a.buf[1], "leafdata", s.leafspan, "maxleaf + 1");
  });
  return a;
}

// Library end functions on a stf_sf handle.
template <int (*End)(stf_sf, stf_request *)>
int end_on_sf(void *sf, stf_request *req) {
  return End(static_cast<stf_sf>(sf), req);
}

int test_on_sf(void *sf, stf_request *req, int *done) { return stf_test(static_cast<stf_sf>(sf), req, done); }

template <int (*End)(stf_sf, stf_request *), class Start>
nb::object begin(nb::handle self, Args &a, std::initializer_list<nb::handle> arrays, Start &&start) {
  SF &s = nb::cast<SF &>(self);
  nb::object r = begin_request(self, s.sf, end_on_sf<End>, a.buf, arrays, start);
  nb::cast<Request &>(r).test_fn = test_on_sf;
  return r;
}

}  // namespace

void bind_sf_ops(nb::module_ &m, nb::class_<SF> &cls) {
  bind_request(m);
  bind_prepared(m);
  cls.def("bcast", [](SF &s, nb::handle root, nb::handle leaf, nb::handle op) {
        Args a = bcast_args(s, root, leaf, op, MPI_REPLACE, true);
        run([&] { return stf_bcast(s.sf, a.unit, a.buf[0].data, a.buf[1].data, a.op); });
      }, "rootdata"_a, "leafdata"_a, "op"_a = nb::none(),
      "leafdata[l] = rootdata[root(l)] op leafdata[l] (MPI_Reduce_local's order; op: MPI.Op or name, default replace).")
      .def("bcast_begin", [](nb::handle self, nb::handle root, nb::handle leaf, nb::handle op) {
        SF &s = nb::cast<SF &>(self);
        Args a = bcast_args(s, root, leaf, op, MPI_REPLACE, true);
        return begin<stf_bcast_end>(self, a, {root, leaf}, [&](stf_request *r) {
          return stf_bcast_begin(s.sf, a.unit, a.buf[0].data, a.buf[1].data, a.op, r);
        });
      }, "rootdata"_a, "leafdata"_a, "op"_a = nb::none(), "Split-phase bcast: returns a Request.")
      .def("reduce", [](SF &s, nb::handle leaf, nb::handle root, nb::handle op) {
        Args a = bcast_args(s, root, leaf, op, MPI_SUM, false);
        run([&] { return stf_reduce(s.sf, a.unit, a.buf[1].data, a.buf[0].data, a.op); });
      }, "leafdata"_a, "rootdata"_a, "op"_a = nb::none(),
      "rootdata[r] = leafdata[l] op rootdata[r] for every leaf l of r (default sum).")
      .def("reduce_begin", [](nb::handle self, nb::handle leaf, nb::handle root, nb::handle op) {
        SF &s = nb::cast<SF &>(self);
        Args a = bcast_args(s, root, leaf, op, MPI_SUM, false);
        return begin<stf_reduce_end>(self, a, {root, leaf}, [&](stf_request *r) {
          return stf_reduce_begin(s.sf, a.unit, a.buf[1].data, a.buf[0].data, a.op, r);
        });
      }, "leafdata"_a, "rootdata"_a, "op"_a = nb::none(), "Split-phase reduce: returns a Request.")
      .def("bcast_init", [](nb::handle self, nb::handle root, nb::handle leaf, nb::handle op) {
        SF &s = nb::cast<SF &>(self);
        Args a = bcast_args(s, root, leaf, op, MPI_REPLACE, true);
        return prepare_request(self, s.sf, stf_bcast_end, a.buf, {root, leaf}, [&](stf_request *r) {
          return stf_bcast_init(s.sf, a.unit, a.buf[0].data, a.buf[1].data, a.op, r);
        });
      }, "rootdata"_a, "leafdata"_a, "op"_a = nb::none(),
      "A bcast on these arrays, made once: returns a PreparedRequest, whose start() begins it each time.")
      .def("reduce_init", [](nb::handle self, nb::handle leaf, nb::handle root, nb::handle op) {
        SF &s = nb::cast<SF &>(self);
        Args a = bcast_args(s, root, leaf, op, MPI_SUM, false);
        return prepare_request(self, s.sf, stf_reduce_end, a.buf, {root, leaf}, [&](stf_request *r) {
          return stf_reduce_init(s.sf, a.unit, a.buf[1].data, a.buf[0].data, a.op, r);
        });
      }, "leafdata"_a, "rootdata"_a, "op"_a = nb::none(), "A reduce on these arrays, made once: a PreparedRequest.")
      .def("fetch_and_op", [](SF &s, nb::handle root, nb::handle leaf, nb::handle update, nb::handle op) {
        Args a = fetch_args(s, root, leaf, update, op);
        run([&] { return stf_fetch_and_op(s.sf, a.unit, a.buf[0].data, a.buf[1].data, a.buf[2].data, a.op); });
      }, "rootdata"_a, "leafdata"_a, "leafupdate"_a, "op"_a = nb::none(),
      "leafupdate[l] = root value before leafdata[l] is combined into it (default sum).")
      .def("fetch_and_op_begin", [](nb::handle self, nb::handle root, nb::handle leaf, nb::handle update,
                                    nb::handle op) {
        SF &s = nb::cast<SF &>(self);
        Args a = fetch_args(s, root, leaf, update, op);
        return begin<stf_fetch_and_op_end>(self, a, {root, leaf, update}, [&](stf_request *r) {
          return stf_fetch_and_op_begin(s.sf, a.unit, a.buf[0].data, a.buf[1].data, a.buf[2].data, a.op, r);
        });
      }, "rootdata"_a, "leafdata"_a, "leafupdate"_a, "op"_a = nb::none(), "Split-phase fetch-and-op.")
      .def("gather", [](SF &s, nb::handle leaf, nb::handle multiroot) {
        Args a = multi_args(s, multiroot, leaf, true);
        run([&] { return stf_gather(s.sf, a.unit, a.buf[1].data, a.buf[0].data); });
      }, "leafdata"_a, "multirootdata"_a, "Each leaf's entry to its own multi-root slot (collective).")
      .def("gather_begin", [](nb::handle self, nb::handle leaf, nb::handle multiroot) {
        SF &s = nb::cast<SF &>(self);
        Args a = multi_args(s, multiroot, leaf, true);
        return begin<stf_gather_end>(self, a, {multiroot, leaf}, [&](stf_request *r) {
          return stf_gather_begin(s.sf, a.unit, a.buf[1].data, a.buf[0].data, r);
        });
      }, "leafdata"_a, "multirootdata"_a)
      .def("scatter", [](SF &s, nb::handle multiroot, nb::handle leaf) {
        Args a = multi_args(s, multiroot, leaf, false);
        run([&] { return stf_scatter(s.sf, a.unit, a.buf[0].data, a.buf[1].data); });
      }, "multirootdata"_a, "leafdata"_a, "Each leaf receives its own multi-root slot (collective).")
      .def("scatter_begin", [](nb::handle self, nb::handle multiroot, nb::handle leaf) {
        SF &s = nb::cast<SF &>(self);
        Args a = multi_args(s, multiroot, leaf, false);
        return begin<stf_scatter_end>(self, a, {multiroot, leaf}, [&](stf_request *r) {
          return stf_scatter_begin(s.sf, a.unit, a.buf[0].data, a.buf[1].data, r);
        });
      }, "multirootdata"_a, "leafdata"_a)
      .def_prop_ro("multiroots", [](SF &s) { return multiroots(s); },
                   "Entries of a multi-root array: the sum of the roots' degrees (collective the first time).")
      .def("degree", [](SF &s) {
        need_graph(s);
        const stf_int *deg = nullptr;
        run([&] { return stf_compute_degree(s.sf, &deg); });
        return numpy().attr("array")(nb::ndarray<nb::numpy, const stf_int>(deg, {size_t(s.nroots)}), "copy"_a = true);
      }, "Number of leaves of each root (collective; a copy).")
      .def("multi_sf", [](nb::handle self) {
        SF &s = nb::cast<SF &>(self);
        if (s.multi) return nb::cast(s.multi, nb::rv_policy::reference);
        need_graph(s);
        stf_sf multi = nullptr;
        run([&] { return stf_get_multi_sf(s.sf, &multi); });
        nb::object w = wrap_sf(multi, s.comm, s.agree, false, self);
        s.multi = &nb::cast<SF &>(w);
        s.multi->multi_of = &s;
        return w;
      }, "The multi-SF (owned by this SF): one root per leaf, ordered by (leaf rank, leaf slot).");
}

}  // namespace stfpy
