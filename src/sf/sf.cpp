// Public calls on the SF object: create, destroy, options and type, graph,
// reset, duplicate.

#include "core/error.h"
#include "ops/request.h"
#include "sf/lifetime.h"
#include "sf/sf.h"
#include "sf/methods.h"

namespace stf {

int check_sf(stf_sf sf) {
  if (!sf) return set_error(STF_ERR_NULL, "the SF handle is NULL");
  if (!sf_object_alive(sf)) return set_error(STF_ERR_STATE, "the SF handle names an SF already destroyed");
  return STF_SUCCESS;
}

int check_graph(stf_sf sf) {
  STF_CHECK(check_sf(sf));
  if (!sf->has_graph) return set_error(STF_ERR_STATE, "no graph set on this SF (call stf_set_graph first)");
  return STF_SUCCESS;
}

namespace {

bool valid_mode(stf_copy_mode m) {
  return m == STF_COPY_VALUES || m == STF_OWN_POINTER || m == STF_USE_POINTER;
}

void destroy_object(stf_sf sf);

// Drop graph, plan and everything derived from them.
void clear(stf_sf sf) {
  clear_setup(sf);
  sf->degree.clear();
  sf->degree_known = false;
  sf->root_peers = PeerLists();
  sf->leaf_peers = PeerLists();
  clear_graph(sf);
}

int check_idle(stf_sf sf, const char *what) {
  if (sf->engine.pending)
    return set_error(STF_ERR_STATE,
                     "%s: %d request(s) still in flight or prepared on this SF; end them (and free prepared ones) "
                     "first", what, sf->engine.pending);
  return STF_SUCCESS;
}

// Everything stf_destroy does once the checks passed.
void destroy_object(stf_sf sf) {
  if (sf->opts.log_view) log_view(sf);
  clear(sf);
  comm_release(sf);
  unmake_sf_object(sf);
}

}  // namespace

void clear_setup(stf_sf sf) {
  if (sf->multi) destroy_object(sf->multi);
  sf->multi = nullptr;
  engine_set_plan(&sf->engine, nullptr, nullptr, nullptr);
  sf->strategy.reset();
  sf->transport.reset();
  sf->plan.reset();
  sf->topology = nullptr;
  if (!sf->choice.empty()) sf->opts.type = "auto";  // choose again at the next set-up
  sf->choice.clear();
  if (sf->auto_set_option) sf->opts.extra.erase(sf->auto_set_option);
  sf->auto_set_option = nullptr;
}

}  // namespace stf

using namespace stf;

extern "C" int stf_create(MPI_Comm comm, stf_sf *out) try {
  if (!out) return set_error(STF_ERR_NULL, "output pointer for the SF is NULL");
  *out = nullptr;
  if (comm == MPI_COMM_NULL) return set_error(STF_ERR_ARG, "communicator is MPI_COMM_NULL");
  // The tags first: every rank takes the same block, also where what
  // follows fails on one rank (out of memory), so later SFs still match.
  Comm acquired;
  STF_CHECK(comm_acquire(comm, &acquired));
  stf_sf sf = nullptr;
  int rc = STF_SUCCESS;
  try {
    Options opts;
    rc = default_options(all_option_specs(), &opts);
    if (!rc) sf = make_sf_object();
    if (!rc && !sf) rc = set_error(STF_ERR_MEMORY, "cannot allocate an SF");
    if (!rc) {
      sf->opts = std::move(opts);
      static_cast<Comm &>(*sf) = acquired;
      rc = deferred_sends_of(sf->comm, &sf->engine.deferred);
    }
  } catch (...) {
    rc = exception_error();
  }
  if (rc) {
    comm_release(&acquired);
    if (sf) unmake_sf_object(sf);
    return rc;
  }
  sf->engine.graph = sf;
  sf->engine.opts = &sf->opts;
  *out = sf;
  return STF_SUCCESS;
} STF_API_CATCH

extern "C" int stf_destroy(stf_sf *psf) try {
  if (!psf) return set_error(STF_ERR_NULL, "pointer to the SF handle is NULL");
  if (!*psf) return STF_SUCCESS;
  stf_sf sf = *psf;
  STF_CHECK(check_sf(sf));
  if (sf->owned_by_parent)
    return set_error(STF_ERR_ARG, "stf_destroy: this is the multi-SF of another SF, which owns it (do not destroy it)");
  STF_CHECK(check_idle(sf, "stf_destroy"));
  destroy_object(sf);
  *psf = nullptr;
  return STF_SUCCESS;
} STF_API_CATCH

extern "C" int stf_set_sf_options(stf_sf sf, const char *options) try {
  STF_CHECK(check_sf(sf));
  if (sf->plan) return set_error(STF_ERR_STATE, "options must be set before stf_setup (or after stf_reset)");
  return parse_options(all_option_specs(), options, &sf->opts);
} STF_API_CATCH

extern "C" int stf_set_type(stf_sf sf, const char *type) try {
  STF_CHECK(check_sf(sf));
  if (sf->plan) return set_error(STF_ERR_STATE, "the transport must be set before stf_setup (or after stf_reset)");
  if (!type) return set_error(STF_ERR_NULL, "transport type is NULL");
  return type_option().apply(type, &sf->opts);
} STF_API_CATCH

extern "C" int stf_get_type(stf_sf sf, const char **type) try {
  STF_CHECK(check_sf(sf));
  if (!type) return set_error(STF_ERR_NULL, "output pointer for the type is NULL");
  *type = sf->opts.type.c_str();
  return STF_SUCCESS;
} STF_API_CATCH

extern "C" int stf_set_stream_model(stf_sf sf, stf_stream_model model) try {
  STF_CHECK(check_sf(sf));
  if (model != STF_STREAM_MODEL_A && model != STF_STREAM_MODEL_B && model != STF_STREAM_MODEL_C)
    return set_error(STF_ERR_ARG, "stream model %d unknown (STF_STREAM_MODEL_A, _B or _C)", (int)model);
  STF_CHECK(check_idle(sf, "stf_set_stream_model"));
  sf->opts.stream_model = model;
  return STF_SUCCESS;
} STF_API_CATCH

extern "C" int stf_get_stream_model(stf_sf sf, stf_stream_model *model) try {
  STF_CHECK(check_sf(sf));
  if (!model) return set_error(STF_ERR_NULL, "output pointer for the stream model is NULL");
  *model = sf->opts.stream_model;
  return STF_SUCCESS;
} STF_API_CATCH

extern "C" int stf_set_graph(stf_sf sf, stf_int nroots, stf_int nleaves, const stf_int *ilocal,
                             stf_copy_mode local_mode, const stf_node *iremote, stf_copy_mode remote_mode) try {
  STF_CHECK(check_sf(sf));
  STF_CHECK(check_idle(sf, "stf_set_graph"));
  if (!valid_mode(local_mode) || !valid_mode(remote_mode))
    return set_error(STF_ERR_ARG, "copy mode must be STF_COPY_VALUES, STF_OWN_POINTER or STF_USE_POINTER");
  STF_CHECK(validate_graph(sf->size, nroots, nleaves, ilocal, iremote));
  clear(sf);
  return set_graph(sf, nroots, nleaves, ilocal, local_mode, iremote, remote_mode);
} STF_API_CATCH

extern "C" int stf_get_graph(stf_sf sf, stf_int *nroots, stf_int *nleaves, const stf_int **ilocal,
                             const stf_node **iremote) try {
  STF_CHECK(check_graph(sf));
  if (nroots) *nroots = sf->nroots;
  if (nleaves) *nleaves = sf->nleaves;
  if (ilocal) *ilocal = sf->ilocal;
  if (iremote) *iremote = sf->iremote;
  return STF_SUCCESS;
} STF_API_CATCH

extern "C" int stf_get_comm(stf_sf sf, MPI_Comm *comm) try {
  STF_CHECK(check_sf(sf));
  if (!comm) return set_error(STF_ERR_NULL, "output communicator pointer is NULL");
  *comm = sf->comm;
  return STF_SUCCESS;
} STF_API_CATCH

extern "C" int stf_get_leaf_range(stf_sf sf, stf_int *minleaf, stf_int *maxleaf) try {
  STF_CHECK(check_graph(sf));
  if (minleaf) *minleaf = sf->minleaf;
  if (maxleaf) *maxleaf = sf->maxleaf;
  return STF_SUCCESS;
} STF_API_CATCH

extern "C" int stf_reset(stf_sf sf) try {
  STF_CHECK(check_sf(sf));
  STF_CHECK(check_idle(sf, "stf_reset"));
  clear(sf);
  return STF_SUCCESS;
} STF_API_CATCH

extern "C" int stf_duplicate(stf_sf sf, stf_duplicate_mode mode, stf_sf *newsf) try {
  STF_CHECK(check_sf(sf));
  if (!newsf) return set_error(STF_ERR_NULL, "output pointer for the new SF is NULL");
  if (mode != STF_DUPLICATE_CONFIG && mode != STF_DUPLICATE_GRAPH)
    return set_error(STF_ERR_ARG, "unknown duplicate mode %d", static_cast<int>(mode));
  STF_CHECK(stf_create(sf->comm, newsf));
  (*newsf)->opts = sf->opts;
  if (mode == STF_DUPLICATE_GRAPH && sf->has_graph) {
    int rc = stf_set_graph(*newsf, sf->nroots, sf->nleaves, sf->ilocal, STF_COPY_VALUES, sf->iremote,
                           STF_COPY_VALUES);
    if (rc) {
      stf_destroy(newsf);
      return rc;
    }
  }
  return STF_SUCCESS;
} STF_API_CATCH
