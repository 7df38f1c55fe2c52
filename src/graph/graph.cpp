// Public graph calls: create, destroy, set/get graph, reset, duplicate.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "core/error.h"
#include "graph/sf.h"
#include "plan/plan.h"
#include "transport/transport.h"

namespace stf {

int check_sf(stf_sf sf) {
  if (!sf) return set_error(STF_ERR_NULL, "the SF handle is NULL");
  return STF_SUCCESS;
}

int check_graph(stf_sf sf) {
  STF_CHECK(check_sf(sf));
  if (!sf->has_graph) return set_error(STF_ERR_STATE, "no graph set on this SF (call stf_set_graph first)");
  return STF_SUCCESS;
}

namespace {

// Local validation of a graph given by the user; never reads past the arrays.
int validate_graph(stf_sf sf, stf_int nroots, stf_int nleaves, const stf_int *ilocal,
                   const stf_node *iremote) {
  if (nroots < 0) return set_error(STF_ERR_ARG, "nroots = %d is negative", nroots);
  if (nleaves < 0) return set_error(STF_ERR_ARG, "nleaves = %d is negative", nleaves);
  if (nleaves > 0 && !iremote) return set_error(STF_ERR_NULL, "iremote is NULL but nleaves = %d", nleaves);
  for (stf_int i = 0; i < nleaves; i++) {
    if (iremote[i].rank < 0 || iremote[i].rank >= sf->size)
      return set_error(STF_ERR_RANK, "leaf %d points to rank %d, outside the communicator of size %d", i,
                       iremote[i].rank, sf->size);
    if (iremote[i].index < 0)
      return set_error(STF_ERR_OFFSET, "leaf %d points to negative root offset %d", i, iremote[i].index);
  }
  if (!ilocal) return STF_SUCCESS;
  for (stf_int i = 0; i < nleaves; i++)
    if (ilocal[i] < 0) return set_error(STF_ERR_OFFSET, "ilocal[%d] = %d is negative", i, ilocal[i]);
  std::vector<stf_int> sorted(ilocal, ilocal + nleaves);
  std::sort(sorted.begin(), sorted.end());
  auto dup = std::adjacent_find(sorted.begin(), sorted.end());
  if (dup != sorted.end()) return set_error(STF_ERR_DUPLICATE, "leaf slot %d is listed twice in ilocal", *dup);
  return STF_SUCCESS;
}

template <typename T>
int take_array(const T *user, stf_int n, stf_copy_mode mode, const T **out, bool *owned) {
  *owned = false;
  *out = user;
  if (!user) return STF_SUCCESS;
  if (mode == STF_OWN_POINTER) *owned = true;
  if (mode != STF_COPY_VALUES) return STF_SUCCESS;
  T *copy = static_cast<T *>(std::malloc(sizeof(T) * (n > 0 ? n : 1)));
  if (!copy) return set_error(STF_ERR_MEMORY, "cannot allocate %d graph entries", n);
  std::memcpy(copy, user, sizeof(T) * n);
  *out = copy;
  *owned = true;
  return STF_SUCCESS;
}

bool valid_mode(stf_copy_mode m) {
  return m == STF_COPY_VALUES || m == STF_OWN_POINTER || m == STF_USE_POINTER;
}

// Drop graph, plan and everything derived from them.
void clear(stf_sf sf) {
  if (sf->multi) stf_destroy(&sf->multi);
  free_requests(sf);
  sf->transport.reset();
  sf->plan.reset();
  sf->degree.clear();
  sf->degree_known = false;
  if (sf->free_ilocal) std::free(const_cast<stf_int *>(sf->ilocal));
  if (sf->free_iremote) std::free(const_cast<stf_node *>(sf->iremote));
  sf->ilocal = nullptr;
  sf->iremote = nullptr;
  sf->free_ilocal = sf->free_iremote = false;
  sf->has_graph = false;
  sf->nroots = sf->nleaves = 0;
  sf->minleaf = 0;
  sf->maxleaf = -1;
}

int check_idle(stf_sf sf, const char *what) {
  if (sf->pending)
    return set_error(STF_ERR_STATE, "%s: %d operation(s) still in flight on this SF; end them first", what,
                     sf->pending);
  return STF_SUCCESS;
}

}  // namespace
}  // namespace stf

using namespace stf;

extern "C" int stf_create(MPI_Comm comm, stf_sf *out) {
  if (!out) return set_error(STF_ERR_NULL, "output pointer for the SF is NULL");
  *out = nullptr;
  if (comm == MPI_COMM_NULL) return set_error(STF_ERR_ARG, "communicator is MPI_COMM_NULL");
  Options opts;
  STF_CHECK(default_options(&opts));
  stf_sf sf = new (std::nothrow) stf_sf_s;
  if (!sf) return set_error(STF_ERR_MEMORY, "cannot allocate an SF");
  sf->opts = opts;
  int rc = MPI_Comm_dup(comm, &sf->comm);
  if (rc != MPI_SUCCESS) {
    delete sf;
    return mpi_error(rc, "MPI_Comm_dup");
  }
  MPI_Comm_set_errhandler(sf->comm, MPI_ERRORS_RETURN);  // MPI failures become error codes
  MPI_Comm_rank(sf->comm, &sf->rank);
  MPI_Comm_size(sf->comm, &sf->size);
  *out = sf;
  return STF_SUCCESS;
}

extern "C" int stf_destroy(stf_sf *psf) {
  if (!psf) return set_error(STF_ERR_NULL, "pointer to the SF handle is NULL");
  if (!*psf) return STF_SUCCESS;
  stf_sf sf = *psf;
  STF_CHECK(check_idle(sf, "stf_destroy"));
  clear(sf);
  MPI_Comm_free(&sf->comm);
  delete sf;
  *psf = nullptr;
  return STF_SUCCESS;
}

extern "C" int stf_set_sf_options(stf_sf sf, const char *options) {
  STF_CHECK(check_sf(sf));
  if (sf->plan) return set_error(STF_ERR_STATE, "options must be set before stf_setup (or after stf_reset)");
  return parse_options(options, &sf->opts);
}

extern "C" int stf_set_type(stf_sf sf, const char *type) {
  STF_CHECK(check_sf(sf));
  if (sf->plan) return set_error(STF_ERR_STATE, "the transport must be set before stf_setup (or after stf_reset)");
  return set_type(type, &sf->opts);
}

extern "C" int stf_get_type(stf_sf sf, const char **type) {
  STF_CHECK(check_sf(sf));
  if (!type) return set_error(STF_ERR_NULL, "output pointer for the type is NULL");
  *type = sf->opts.type.c_str();
  return STF_SUCCESS;
}

extern "C" int stf_set_stream_model(stf_sf sf, stf_stream_model model) {
  STF_CHECK(check_sf(sf));
  if (model != STF_STREAM_MODEL_A && model != STF_STREAM_MODEL_B && model != STF_STREAM_MODEL_C)
    return set_error(STF_ERR_ARG, "stream model %d unknown (STF_STREAM_MODEL_A, _B or _C)", (int)model);
  STF_CHECK(check_idle(sf, "stf_set_stream_model"));
  sf->opts.stream_model = model;
  return STF_SUCCESS;
}

extern "C" int stf_get_stream_model(stf_sf sf, stf_stream_model *model) {
  STF_CHECK(check_sf(sf));
  if (!model) return set_error(STF_ERR_NULL, "output pointer for the stream model is NULL");
  *model = sf->opts.stream_model;
  return STF_SUCCESS;
}

extern "C" int stf_set_graph(stf_sf sf, stf_int nroots, stf_int nleaves, const stf_int *ilocal,
                             stf_copy_mode local_mode, const stf_node *iremote, stf_copy_mode remote_mode) {
  STF_CHECK(check_sf(sf));
  STF_CHECK(check_idle(sf, "stf_set_graph"));
  if (!valid_mode(local_mode) || !valid_mode(remote_mode))
    return set_error(STF_ERR_ARG, "copy mode must be STF_COPY_VALUES, STF_OWN_POINTER or STF_USE_POINTER");
  STF_CHECK(validate_graph(sf, nroots, nleaves, ilocal, iremote));
  clear(sf);
  STF_CHECK(take_array(ilocal, nleaves, local_mode, &sf->ilocal, &sf->free_ilocal));
  int rc = take_array(iremote, nleaves, remote_mode, &sf->iremote, &sf->free_iremote);
  if (rc) {
    clear(sf);
    return rc;
  }
  sf->nroots = nroots;
  sf->nleaves = nleaves;
  sf->has_graph = true;
  if (nleaves > 0) {
    sf->minleaf = sf->maxleaf = sf->leaf_at(0);
    for (stf_int i = 1; i < nleaves; i++) {
      sf->minleaf = std::min(sf->minleaf, sf->leaf_at(i));
      sf->maxleaf = std::max(sf->maxleaf, sf->leaf_at(i));
    }
  }
  return STF_SUCCESS;
}

extern "C" int stf_get_graph(stf_sf sf, stf_int *nroots, stf_int *nleaves, const stf_int **ilocal,
                             const stf_node **iremote) {
  STF_CHECK(check_graph(sf));
  if (nroots) *nroots = sf->nroots;
  if (nleaves) *nleaves = sf->nleaves;
  if (ilocal) *ilocal = sf->ilocal;
  if (iremote) *iremote = sf->iremote;
  return STF_SUCCESS;
}

extern "C" int stf_get_comm(stf_sf sf, MPI_Comm *comm) {
  STF_CHECK(check_sf(sf));
  if (!comm) return set_error(STF_ERR_NULL, "output communicator pointer is NULL");
  *comm = sf->comm;
  return STF_SUCCESS;
}

extern "C" int stf_get_leaf_range(stf_sf sf, stf_int *minleaf, stf_int *maxleaf) {
  STF_CHECK(check_graph(sf));
  if (minleaf) *minleaf = sf->minleaf;
  if (maxleaf) *maxleaf = sf->maxleaf;
  return STF_SUCCESS;
}

extern "C" int stf_reset(stf_sf sf) {
  STF_CHECK(check_sf(sf));
  STF_CHECK(check_idle(sf, "stf_reset"));
  clear(sf);
  return STF_SUCCESS;
}

extern "C" int stf_duplicate(stf_sf sf, stf_duplicate_mode mode, stf_sf *newsf) {
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
}
