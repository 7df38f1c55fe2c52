// starforest.SF: creation, graph, set-up, options, view, statistics.
#include "sf.h"

#include "arrays.h"
#include "buffer.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

namespace stfpy {
using namespace nb::literals;

namespace {
bool debug_default = debug_in(nullptr, false);

}  // namespace

// The library's rule (stf_set_options): a bare -stf_debug, or one followed
// by another option, is a yes.
bool debug_in(const char *options, bool current) {
  if (!options) {
    const char *env = std::getenv("STF_DEBUG");
    if (env && *env) current = debug_in((std::string("-stf_debug ") + env).c_str(), current);
    const char *all = std::getenv("STF_OPTIONS");
    return all ? debug_in(all, current) : current;
  }
  std::istringstream in(options);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  for (std::size_t i = 0; i < words.size(); i++) {
    if (words[i] != "-stf_debug") continue;
    const bool bare = i + 1 == words.size() ||
                      (words[i + 1].size() >= 2 && words[i + 1][0] == '-' && !std::isdigit((unsigned char)words[i + 1][1]));
    const std::string v = bare ? "1" : words[++i];
    current = v == "1" || v == "true" || v == "yes";
  }
  return current;
}

bool default_debug() { return debug_default; }

// Python drops an object when its last reference goes, which the cyclic
// garbage collector makes happen at different points on different ranks. The
// library frees a communicator's shared duplicate with its last SF and
// duplicates it again for the next one: collective steps that would then not
// match across ranks. One SF without a graph, kept on each communicator from
// its first Python object on (cached as an attribute, so a communicator
// freed and made again gets a new one), keeps the duplicate alive: dropping
// SFs then does no collective work (except MPI_Win_free for the window
// transport: destroy those explicitly).
void keep_comm(MPI_Comm comm) {
  static int keyval = MPI_KEYVAL_INVALID;
  if (keyval == MPI_KEYVAL_INVALID &&
      MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &keyval, nullptr) != MPI_SUCCESS)
    fail(STF_ERR_MPI, "MPI_Comm_create_keyval failed");
  void *value = nullptr;
  int found = 0;
  MPI_Comm_get_attr(comm, keyval, &value, &found);
  if (found) return;
  stf_sf keeper = nullptr;
  {
    nb::gil_scoped_release unlocked;
    check(stf_create(comm, &keeper));
  }
  MPI_Comm_set_attr(comm, keyval, keeper);
}

SF::~SF() {
  if (multi) multi->sf = nullptr, multi->multi_of = nullptr;
  if (multi_of) multi_of->multi = nullptr;
  if (sf && owned && !mpi_finalized()) stf_destroy(&sf);
}

stf_sf SF::handle() const {
  if (!sf) fail(STF_ERR_NULL, "the SF was destroyed (or its owner was)");
  return sf;
}

void SF::refresh() {
  stf_int n = 0, lo = 0, hi = -1;
  if (stf_get_graph(handle(), &n, nullptr, nullptr, nullptr) != STF_SUCCESS) {
    nroots = -1, leafspan = 0, nmulti = -1;
    return;
  }
  check(stf_get_leaf_range(sf, &lo, &hi));
  nroots = n, leafspan = hi + 1, nmulti = -1;
}

void SF::agree_on(const char *call, std::exception_ptr err) const {
  MPI_Comm c;
  check(stf_get_comm(handle(), &c));
  int rank = 0, mine = 0, worst = 0;
  MPI_Comm_rank(c, &rank);
  if (err) mine = rank + 1;
  {
    nb::gil_scoped_release unlocked;
    MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, c);
  }
  if (err) std::rethrow_exception(err);
  if (worst)
    throw nb::value_error(
        (std::string(call) + ": rank " + std::to_string(worst - 1) + " passed bad arguments (see its error)").c_str());
}

void SF::destroy() {
  if (!owned) fail(STF_ERR_STATE, "this SF belongs to another object (a multi-SF or an app's SF): destroy its owner");
  if (!sf) return;
  {
    nb::gil_scoped_release unlocked;
    check(stf_destroy(&sf));
  }
  if (multi) multi->sf = nullptr, multi->multi_of = nullptr, multi = nullptr;
  nroots = -1;
}

nb::object wrap_sf(stf_sf h, nb::handle comm, bool agree, bool owned, nb::handle owner) {
  auto *w = new SF;
  w->sf = h;
  w->comm = nb::borrow(comm);
  w->agree = agree;
  w->owned = owned;
  w->owner = nb::borrow(owner);
  nb::object obj = nb::cast(w, nb::rv_policy::take_ownership);
  w->refresh();
  return obj;
}

namespace {

void set_graph(SF &s, stf_int nroots, nb::handle iremote, nb::handle ilocal) {
  nb::object remote = contiguous(iremote, "intc");
  size_t n = nb::cast<size_t>(remote.attr("size"));
  if (n == 0) remote = remote.attr("reshape")(0, 2);
  nb::tuple shape = nb::cast<nb::tuple>(remote.attr("shape"));
  if (shape.size() != 2 || nb::cast<size_t>(shape[1]) != 2)
    throw nb::value_error("iremote: expected (rank, index) pairs, an array of shape (nleaves, 2)");
  stf_int nleaves = nb::cast<stf_int>(shape[0]);
  nb::object local;
  const stf_int *local_ptr = nullptr;
  if (!ilocal.is_none()) {
    local = contiguous(ilocal, "intc");
    if (nb::cast<size_t>(local.attr("ndim")) != 1 || nb::cast<stf_int>(local.attr("size")) != nleaves)
      throw nb::value_error("ilocal: expected one leaf slot per entry of iremote (a 1-D array of nleaves ints)");
    local_ptr = data_of<const stf_int>(local);
  }
  auto remote_ptr = data_of<const stf_node>(remote);
  check(stf_set_graph(s.handle(), nroots, nleaves, local_ptr, STF_COPY_VALUES, remote_ptr, STF_COPY_VALUES));
  s.refresh();
}

nb::object get_graph(const SF &s) {
  stf_int nroots = 0, nleaves = 0;
  const stf_int *ilocal = nullptr;
  const stf_node *iremote = nullptr;
  check(stf_get_graph(s.handle(), &nroots, &nleaves, &ilocal, &iremote));
  nb::object remote = numpy().attr("empty")(nb::make_tuple(nleaves, 2), "dtype"_a = "intc");
  std::memcpy(data_of<void>(remote), iremote,
              sizeof(stf_node) * nleaves);
  nb::object local = nb::none();
  if (ilocal) {
    local = numpy().attr("empty")(nleaves, "dtype"_a = "intc");
    std::memcpy(data_of<void>(local), ilocal,
                sizeof(stf_int) * nleaves);
  }
  return nb::make_tuple(nroots, remote, local);
}

// What print(out) writes, as a string (collective calls: the GIL is released).
template <class Print>
std::string printed(Print &&print) {
  char *text = nullptr;
  size_t size = 0;
  FILE *out = open_memstream(&text, &size);
  if (!out) fail(STF_ERR_MEMORY, "open_memstream failed");
  int rc;
  {
    nb::gil_scoped_release unlocked;
    rc = print(out);
  }
  std::fclose(out);
  std::string result(text ? text : "", size);
  std::free(text);
  check(rc);
  return result;
}

std::string view(const SF &s) {
  return printed([&](FILE *out) { return stf_view(s.handle(), out); });
}

std::string explain(const SF &s, nb::handle dtype) {
  nb::object d = nb::module_::import_("numpy").attr("dtype")(dtype);
  const std::string kind = nb::cast<std::string>(d.attr("kind"));
  const MPI_Datatype unit = mpi_type_of(kind.empty() ? '?' : kind[0], nb::cast<int64_t>(d.attr("itemsize")));
  if (unit == MPI_DATATYPE_NULL)
    throw nb::value_error(("explain: MPI has no type for dtype " + nb::cast<std::string>(nb::str(d))).c_str());
  return printed([&](FILE *out) { return stf_explain(s.handle(), unit, out); });
}

nb::dict stats(const SF &s) {
  stf_stats st = stf_stats_init();
  check(stf_get_stats(s.handle(), &st));
  nb::dict d;
#define STFPY_STAT(field) d[#field] = st.field;
  STFPY_STAT(pack_calls) STFPY_STAT(unpack_calls) STFPY_STAT(scatter_calls) STFPY_STAT(bytes_packed)
  STFPY_STAT(bytes_unpacked) STFPY_STAT(messages_sent) STFPY_STAT(messages_received)
  STFPY_STAT(device_kernel_launches) STFPY_STAT(device_stream_syncs) STFPY_STAT(device_syncs)
  STFPY_STAT(device_copies_h2d) STFPY_STAT(device_copies_d2h) STFPY_STAT(device_event_syncs)
  STFPY_STAT(mpi_buffers_checked) STFPY_STAT(device_buffers_to_mpi)
  STFPY_STAT(messages_sent_in_node) STFPY_STAT(messages_sent_off_node) STFPY_STAT(bytes_sent_in_node)
  STFPY_STAT(bytes_sent_off_node) STFPY_STAT(repeated_begins) STFPY_STAT(express_operations)
#undef STFPY_STAT
  // Timings: one entry per operation kind (bcast, reduce, fetch_and_op, gather, scatter).
  nb::list ops, begin, end, wait;
  for (int k = 0; k < STF_OP_KINDS; k++) {
    ops.append(st.operations[k]);
    begin.append(st.begin_seconds[k]);
    end.append(st.end_seconds[k]);
    wait.append(st.wait_seconds[k]);
  }
  d["operations"] = ops;
  d["begin_seconds"] = begin;
  d["end_seconds"] = end;
  d["wait_seconds"] = wait;
  return d;
}

}  // namespace

void bind_sf_ops(nb::module_ &m, nb::class_<SF> &cls);
void bind_algebra(nb::module_ &m, nb::class_<SF> &cls);

void bind_sf(nb::module_ &m) {
  m.def("set_options", [](const std::string &options) {
        check(stf_set_options(options.c_str()));
        debug_default = debug_in(options.c_str(), debug_default);
      }, "options"_a, "Defaults for SFs created afterwards, e.g. '-stf_type neighbor -stf_validate 1'.");
  m.def("set_options_from_args", [](const std::vector<std::string> &args) {
        std::vector<char *> argv;
        std::string joined;
        for (const std::string &a : args) {
          argv.push_back(const_cast<char *>(a.c_str()));
          joined += " " + a;
        }
        check(stf_set_options_from_args(static_cast<int>(argv.size()), argv.data()));
        debug_default = debug_in(joined.c_str(), debug_default);
      }, "argv"_a, "The -stf_ options of a command line (argv[0] is the program), as stf_set_options_from_args.");
  m.def("options_help", &stf_options_help, "Every option, its environment variable and its default.");

  nb::class_<SF> cls(m, "SF", "A star forest on an mpi4py communicator (see the starforest package docs).");
  cls.def("__init__", [](SF *self, nb::handle comm) {
        MPI_Comm c = to_comm(comm);
        keep_comm(c);
        new (self) SF;
        self->comm = nb::borrow(comm);
        self->agree = debug_default;
        nb::gil_scoped_release unlocked;
        check(stf_create(c, &self->sf));
      }, "comm"_a, "A new SF without a graph on comm (collective).")
      .def("destroy", &SF::destroy, "Free the SF now (collective); also done when the object goes.")
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](SF &s, nb::args) { s.destroy(); })
      .def_prop_ro("comm", [](const SF &s) { return s.comm; }, "The communicator the SF was created on.")
      .def("set_graph", &set_graph, "nroots"_a, "iremote"_a, "ilocal"_a = nb::none(),
           "Leaves' roots as (rank, index) pairs (array of shape (nleaves, 2) or a list of pairs); ilocal: "
           "leaf slots (None: 0..nleaves-1). Copied.")
      .def("get_graph", &get_graph, "(nroots, iremote (nleaves, 2), ilocal or None), copies.")
      .def_prop_ro("nroots", [](const SF &s) { s.handle(); return s.nroots; }, "Roots on this rank (-1: no graph).")
      .def_prop_ro("nleaves", [](const SF &s) {
        stf_int n = 0;
        check(stf_get_graph(s.handle(), nullptr, &n, nullptr, nullptr));
        return n;
      }, "Leaves on this rank.")
      .def_prop_ro("leaf_range", [](const SF &s) {
        stf_int lo = 0, hi = -1;
        check(stf_get_leaf_range(s.handle(), &lo, &hi));
        return nb::make_tuple(lo, hi);
      }, "(minleaf, maxleaf); (0, -1) without leaves. Leaf arrays need maxleaf + 1 entries.")
      .def("setup", [](SF &s) { run([&] { return stf_setup(s.handle()); }); }, "Build the plan (collective).")
      .def("reset", [](SF &s) {
        run([&] { return stf_reset(s.handle()); });
        s.refresh();
      }, "Drop graph and plan, keep options (collective).")
      .def("duplicate", [](SF &s, bool graph) {
        stf_sf out = nullptr;
        run([&] { return stf_duplicate(s.handle(), graph ? STF_DUPLICATE_GRAPH : STF_DUPLICATE_CONFIG, &out); });
        return wrap_sf(out, s.comm, s.agree);
      }, "graph"_a = true, "A new SF with the options (and the graph) of this one (collective).")
      .def("view", &view, "The description of every rank's graph and plan (collective): the text on rank 0, '' elsewhere.")
      .def("explain", &explain, "dtype"_a = "float64",
           "What the performance model says of this SF for entries of dtype (stf_explain; collective): traffic, "
           "the predicted time of one bcast per transport, and once it ran, the measured times; the text on rank "
           "0, '' elsewhere.")
      .def("set_options", [](SF &s, const std::string &options) {
        check(stf_set_sf_options(s.handle(), options.c_str()));
        s.agree = debug_in(options.c_str(), s.agree);
      }, "options"_a, "Options of this SF, before setup.")
      .def("set_type", [](SF &s, const std::string &type) { check(stf_set_type(s.handle(), type.c_str())); },
           "type"_a, "Transport: 'basic', 'neighbor', 'window', 'collective', ... (before setup).")
      .def_prop_ro("type", [](const SF &s) {
        const char *t = nullptr;
        check(stf_get_type(s.handle(), &t));
        return std::string(t);
      }, "The transport chosen.")
      .def_prop_rw("stream_model", [](const SF &s) {
        stf_stream_model mdl;
        check(stf_get_stream_model(s.handle(), &mdl));
        return std::string(1, "ABC"[mdl]);
      }, [](SF &s, const std::string &mdl) {
        if (mdl != "A" && mdl != "B" && mdl != "C") throw nb::value_error("stream model must be 'A', 'B' or 'C'");
        check(stf_set_stream_model(s.handle(), static_cast<stf_stream_model>(mdl[0] - 'A')));
      }, "How operations on device data synchronise: 'A', 'B' (default) or 'C'.")
      .def("stats", &stats, "This rank's counters (dict).")
      .def("reset_stats", [](SF &s) { check(stf_reset_stats(s.handle())); });
  bind_sf_ops(m, cls);
  bind_algebra(m, cls);
}

}  // namespace stfpy
