// The graph algebra: new SFs from old ones or from a description. All
// collective; errors are reported by the library on every rank.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <vector>

#include "arrays.h"
#include "sf.h"

namespace stfpy {
using namespace nb::literals;

namespace {

nb::object empty_ints(nb::object shape) { return numpy().attr("zeros")(shape, "dtype"_a = "intc"); }

// A new SF made by call(&out) from SF a: same communicator and validation.
template <class F>
nb::object derived(const SF &a, F &&call) {
  stf_sf out = nullptr;
  run([&] { return call(&out); });
  return wrap_sf(out, a.comm, a.agree);
}

template <class F>
nb::object from_comm_call(nb::handle comm, F &&call) {
  MPI_Comm c = to_comm(comm);
  keep_comm(c);
  stf_sf out = nullptr;
  run([&] { return call(c, &out); });
  return wrap_sf(out, comm, default_debug());
}

stf_pattern pattern_of(const std::string &name) {
  if (name == "allgather") return STF_PATTERN_ALLGATHER;
  if (name == "gather") return STF_PATTERN_GATHER;
  if (name == "alltoall") return STF_PATTERN_ALLTOALL;
  throw nb::value_error("pattern must be 'allgather', 'gather' or 'alltoall'");
}

stf_concat_roots roots_of(const std::string &name) {
  if (name == "local") return STF_CONCAT_ROOTS_LOCAL;
  if (name == "shared") return STF_CONCAT_ROOTS_SHARED;
  if (name == "global") return STF_CONCAT_ROOTS_GLOBAL;
  throw nb::value_error("roots must be 'local', 'shared' or 'global'");
}

}  // namespace

void bind_algebra(nb::module_ &m, nb::class_<SF> &cls) {
  cls.def("compose", [](const SF &a, const SF &b) {
        return derived(a, [&](stf_sf *out) { return stf_compose(a.handle(), b.handle(), out); });
      }, "b"_a, "bcast through the result == bcast through self, then b (self's leaf slots are b's roots).")
      .def("compose_inverse", [](const SF &a, const SF &b) {
        return derived(a, [&](stf_sf *out) { return stf_compose_inverse(a.handle(), b.handle(), out); });
      }, "b"_a, "self's roots to b's roots through the leaves they share (b: at most one leaf per root).")
      .def("inverse", [](const SF &a) {
        return derived(a, [&](stf_sf *out) { return stf_create_inverse(a.handle(), out); });
      }, "Roots <-> leaves of an SF whose roots have at most one leaf.")
      .def("merge", [](const SF &a, const SF &b) {
        return derived(a, [&](stf_sf *out) { return stf_merge(a.handle(), b.handle(), out); });
      }, "b"_a, "Union on the same roots; where both have a leaf slot, b's edge wins.")
      .def("embed_roots", [](const SF &a, nb::handle selected) {
        IntArray sel = ints(selected, "selected");
        return derived(a, [&](stf_sf *out) { return stf_create_embedded_roots(a.handle(), sel.size, sel.data, out); });
      }, "selected"_a, "Only the edges of the selected roots (numbering unchanged).")
      .def("embed_leaves", [](const SF &a, nb::handle selected) {
        IntArray sel = ints(selected, "selected");
        return derived(a, [&](stf_sf *out) { return stf_create_embedded_leaves(a.handle(), sel.size, sel.data, out); });
      }, "selected"_a, "Only the edges of the selected leaf slots (numbering unchanged).")
      .def("strided", [](const SF &a, stf_int bs, stf_int ldr, stf_int ldl) {
        return derived(a, [&](stf_sf *out) { return stf_create_strided(a.handle(), bs, ldr, ldl, out); });
      }, "bs"_a, "ldr"_a = -1, "ldl"_a = -1, "bs copies for data stored as bs columns (leading dimensions ldr, ldl).")
      .def("distribute_section", [](const SF &a, nb::handle count, nb::handle offset) {
        IntArray c = ints(count, "root_count"), o = ints(offset, "root_offset");
        if (c.size < a.nroots || o.size < a.nroots)
          throw nb::value_error("root_count and root_offset need one entry per root");
        nb::object leaf_count = empty_ints(nb::int_(a.leafspan)), leaf_offset = empty_ints(nb::int_(a.leafspan));
        stf_int nleafdata = 0, *lc = data_of<stf_int>(leaf_count), *lo = data_of<stf_int>(leaf_offset);
        stf_sf h = a.handle();
        nb::object datasf = derived(a, [&](stf_sf *out) {
          return stf_distribute_section(h, c.data, o.data, lc, lo, &nleafdata, out);
        });
        return nb::make_tuple(leaf_count, leaf_offset, datasf);
      }, "root_count"_a, "root_offset"_a,
      "Per-point (count, offset) to the leaves: (leaf_count, leaf_offset, data_sf); data_sf moves the entries.")
      .def_static("from_pattern", [](nb::handle comm, const std::string &pattern, stf_int nroots) {
        stf_pattern p = pattern_of(pattern);
        return from_comm_call(comm, [&](MPI_Comm c, stf_sf *out) { return stf_create_from_pattern(c, p, nroots, out); });
      }, "comm"_a, "pattern"_a, "nroots"_a, "'allgather', 'gather' or 'alltoall' (nroots = block size).")
      .def_static("from_global_indices", [](nb::handle comm, stf_int nowned, nb::handle global) {
        GlobalArray g = global_ids(global, "global");
        return from_comm_call(comm, [&](MPI_Comm c, stf_sf *out) {
          return stf_create_from_global_indices(c, nowned, g.size, g.data, out);
        });
      }, "comm"_a, "nowned"_a, "global"_a, "Roots: my nowned entries of a contiguous layout; leaf i reads global[i].")
      .def_static("migration", [](nb::handle comm, nb::handle target) {
        IntArray t = ints(target, "target");
        stf_int nnew = 0;
        nb::object sf = from_comm_call(comm, [&](MPI_Comm c, stf_sf *out) {
          return stf_create_migration(c, t.size, t.data, out, &nnew);
        });
        return nb::make_tuple(sf, nnew);
      }, "comm"_a, "target"_a, "(sf, nnew): point i moves to rank target[i]; bcast over sf moves point data.");

  m.def("concatenate", [](nb::handle sfs, nb::handle leaf_offsets, const std::string &roots) {
        std::vector<SF *> list = nb::cast<std::vector<SF *>>(sfs);
        if (list.empty()) throw nb::value_error("concatenate needs at least one SF");
        std::vector<stf_sf> handles;
        for (SF *s : list) handles.push_back(s->handle());
        IntArray off;
        if (!leaf_offsets.is_none()) {
          off = ints(leaf_offsets, "leaf_offsets");
          if (off.size != stf_int(list.size())) throw nb::value_error("leaf_offsets needs one entry per SF");
        }
        stf_concat_roots mode = roots_of(roots);
        return derived(*list[0], [&](stf_sf *out) {
          return stf_concatenate(int(handles.size()), handles.data(), off.data, mode, out);
        });
      }, "sfs"_a, "leaf_offsets"_a = nb::none(), "roots"_a = "local",
      "One SF whose leaf space stacks those of sfs; roots 'local', 'shared' or 'global'.");
  m.def("layout_find_owners", [](nb::handle comm, stf_int nowned, nb::handle global) {
        GlobalArray g = global_ids(global, "global");
        MPI_Comm c = to_comm(comm);
        keep_comm(c);
        nb::object owners = empty_ints(nb::make_tuple(g.size, 2));
        auto *out = reinterpret_cast<stf_node *>(data_of<stf_int>(owners));
        run([&] { return stf_layout_find_owners(c, nowned, g.size, g.data, out); });
        return owners;
      }, "comm"_a, "nowned"_a, "global"_a, "(rank, local offset) of each global index, shape (n, 2) (collective).");
}

}  // namespace stfpy
