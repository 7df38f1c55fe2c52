/* The PetscSF type "starforest": set-up, reset, options, view and rank
 * queries. The PetscSF keeps its graph, which PETSc's generic code reads
 * (multi-SF, embedded and local SFs, compose, VecScatter); set-up hands it
 * to a starforest SF, which then moves every operation (operations.c). */
#include "sf_starforest.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>

PetscErrorCode StfPetscErrorCode(int code)
{
  switch (code) {
  case STF_ERR_NULL:
    return PETSC_ERR_ARG_NULL;
  case STF_ERR_RANK:
  case STF_ERR_OFFSET:
    return PETSC_ERR_ARG_OUTOFRANGE;
  case STF_ERR_STATE:
  case STF_ERR_REQUEST:
    return PETSC_ERR_ARG_WRONGSTATE;
  case STF_ERR_TYPE:
  case STF_ERR_OP:
  case STF_ERR_UNSUPPORTED:
    return PETSC_ERR_SUP;
  case STF_ERR_MPI:
    return PETSC_ERR_MPI;
  case STF_ERR_MEMORY:
    return PETSC_ERR_MEM;
  case STF_ERR_INTERNAL:
    return PETSC_ERR_PLIB;
  case STF_ERR_DEVICE:
  case STF_ERR_TIMEOUT:
    return PETSC_ERR_LIB;
  default: /* STF_ERR_ARG, STF_ERR_DUPLICATE, STF_ERR_OPTION */
    return PETSC_ERR_ARG_WRONG;
  }
}

/* Each leaf's layer: how many times its slot was named before it. NULL
 * (one layer) where every slot is named once, as nearly always. */
static int LeafLayers(PetscSF sf, int **layer_of, int *nlayers)
{
  PetscInt n = sf->maxleaf - sf->minleaf + 1;
  int     *seen;

  *layer_of = NULL;
  *nlayers  = 1;
  if (!sf->mine || sf->nleaves < 2) return STF_SUCCESS;
  seen = (int *)calloc((size_t)n, sizeof(int));
  if (!seen) return stf_set_error(STF_ERR_MEMORY, "counting the leaves' slots");
  for (PetscInt i = 0; i < sf->nleaves && *nlayers == 1; i++) {
    if (seen[sf->mine[i] - sf->minleaf]++) *nlayers = 2;
  }
  if (*nlayers > 1) {
    *layer_of = (int *)malloc(sizeof(int) * (size_t)sf->nleaves);
    if (!*layer_of) {
      free(seen);
      return stf_set_error(STF_ERR_MEMORY, "counting the leaves' slots");
    }
    memset(seen, 0, sizeof(int) * (size_t)n);
    for (PetscInt i = 0; i < sf->nleaves; i++) {
      (*layer_of)[i] = seen[sf->mine[i] - sf->minleaf]++;
      if ((*layer_of)[i] + 1 > *nlayers) *nlayers = (*layer_of)[i] + 1;
    }
  }
  free(seen);
  return STF_SUCCESS;
}

/* One layer's leaves as arrays starforest owns (malloc'ed), every id checked
 * to fit starforest's int (PETSc's may be 64-bit). */
static int LayerGraph(PetscSF sf, const int *layer_of, int layer, stf_sf out)
{
  stf_int   n = 0;
  stf_int  *ilocal;
  stf_node *iremote;
  int       err = STF_SUCCESS;

  if (sf->nroots > INT_MAX || sf->nleaves > INT_MAX)
    return stf_set_error(STF_ERR_ARG, "this rank has %lld roots and %lld leaves: starforest counts them in int", (long long)sf->nroots, (long long)sf->nleaves);
  ilocal  = (stf_int *)malloc(sizeof(stf_int) * (size_t)(sf->nleaves + 1));
  iremote = (stf_node *)malloc(sizeof(stf_node) * (size_t)(sf->nleaves + 1));
  if (!ilocal || !iremote) err = stf_set_error(STF_ERR_MEMORY, "copying the graph");
  for (PetscInt i = 0; !err && i < sf->nleaves; i++) {
    PetscInt slot = sf->mine ? sf->mine[i] : i;
    if ((layer_of ? layer_of[i] : 0) != layer) continue;
    if (slot > INT_MAX || sf->remote[i].index > INT_MAX) {
      err = stf_set_error(STF_ERR_OFFSET, "leaf %lld: an offset above INT_MAX, which starforest's int cannot hold", (long long)i);
      break;
    }
    ilocal[n]          = (stf_int)slot;
    iremote[n].rank    = (int)sf->remote[i].rank;
    iremote[n++].index = (stf_int)sf->remote[i].index;
  }
  /* starforest takes the arrays only once it accepts the graph. */
  if (!err) err = stf_set_graph(out, (stf_int)sf->nroots, n, ilocal, STF_OWN_POINTER, iremote, STF_OWN_POINTER);
  if (err) {
    free(ilocal);
    free(iremote);
  }
  return err;
}

/* A layer's starforest SF with its graph. PETSc's own arrays where the
 * index types agree and there is one layer (PetscSFReset drops both
 * together), else copies. */
static int MakeLayer(PetscSF sf, SF_Starforest *s, const int *layer_of, int layer)
{
  int err = stf_create(PetscObjectComm((PetscObject)sf), &s->layers[layer]);
  if (!err && s->type[0]) err = stf_set_type(s->layers[layer], s->type);
  if (err) return err;
  if (!STF_PETSC_COPY_INDICES && s->nlayers == 1)
    return stf_set_graph(s->layers[0], (stf_int)sf->nroots, (stf_int)sf->nleaves, (const stf_int *)sf->mine, STF_USE_POINTER, (const stf_node *)sf->remote, STF_USE_POINTER);
  return LayerGraph(sf, layer_of, layer, s->layers[layer]);
}

static PetscErrorCode DestroyLayers(SF_Starforest *s)
{
  PetscFunctionBegin;
  for (int k = 0; k < s->nlayers; k++) {
    if (s->layers[k]) PetscCallStf(stf_destroy(&s->layers[k]));
  }
  free(s->layers);
  s->layers  = NULL;
  s->nlayers = 0;
  PetscFunctionReturn(0);
}

static PetscErrorCode PetscSFSetUp_Starforest(PetscSF sf)
{
  SF_Starforest *s    = (SF_Starforest *)sf->data;
  MPI_Comm       comm = PetscObjectComm((PetscObject)sf);
  MPI_Group      self;
  int           *layer_of = NULL, mine[2], all[2], err;

  PetscFunctionBegin;
  /* A set-up that failed is run again by PETSc: drop what it left. */
  PetscCall(DestroyLayers(s));
  PetscCall(PetscFree4(sf->ranks, sf->roffset, sf->rmine, sf->rremote));
  /* PETSc's generic root-rank query and view read sf->ranks and the like. */
  PetscCallMPI(MPI_Comm_group(PETSC_COMM_SELF, &self));
  PetscCall(PetscSFSetUpRanks(sf, self));
  PetscCallMPI(MPI_Group_free(&self));
  /* One allreduce agrees on the number of layers and on the local steps'
   * errors (a failed copy is one rank's), so that no rank is left waiting
   * in starforest's collective set-up. */
  mine[0] = LeafLayers(sf, &layer_of, &mine[1]);
  PetscCallMPI(MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, comm));
  err = mine[0];
  if (!all[0]) {
    s->layers = (stf_sf *)calloc((size_t)all[1], sizeof(stf_sf));
    if (s->layers) s->nlayers = all[1];
    else err = stf_set_error(STF_ERR_MEMORY, "the layers' SFs");
    for (int k = 0; !err && k < s->nlayers; k++) err = MakeLayer(sf, s, layer_of, k);
    PetscCallMPI(MPI_Allreduce(&err, &all[0], 1, MPI_INT, MPI_MAX, comm));
  }
  free(layer_of);
  if (all[0]) {
    if (!err) err = stf_set_error(all[0], "another rank could not prepare its starforest SF");
    PetscCallStf(err);
  }
  for (int k = 0; k < s->nlayers; k++) PetscCallStf(stf_setup(s->layers[k]));
  PetscFunctionReturn(0);
}

static PetscErrorCode PetscSFReset_Starforest(PetscSF sf)
{
  SF_Starforest *s = (SF_Starforest *)sf->data;

  PetscFunctionBegin;
  PetscCall(StfPetscFreeOperations(sf));
  PetscCall(DestroyLayers(s));
  PetscCall(PetscFree2(s->leaf_offset, s->leaf_roots));
  PetscFunctionReturn(0);
}

static PetscErrorCode PetscSFDestroy_Starforest(PetscSF sf)
{
  PetscFunctionBegin;
  /* PetscSFSetType destroys a set-up SF without resetting it. */
  PetscCall(PetscSFReset_Starforest(sf));
  PetscCall(PetscFree(sf->data));
  PetscFunctionReturn(0);
}

static PetscErrorCode PetscSFSetFromOptions_Starforest(PetscSF sf, PetscOptionItems *PetscOptionsObject)
{
  SF_Starforest *s = (SF_Starforest *)sf->data;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "PetscSF starforest options");
  PetscCall(PetscOptionsString("-sf_starforest_type", "starforest's transport or strategy (basic, neighbor, putsignal, 3step, auto, ...)", "PetscSFSetType", s->type, s->type, sizeof(s->type), NULL));
  PetscOptionsHeadEnd();
  PetscFunctionReturn(0);
}

static PetscErrorCode PetscSFView_Starforest(PetscSF sf, PetscViewer viewer)
{
  SF_Starforest    *s    = (SF_Starforest *)sf->data;
  const char       *type = s->type[0] ? s->type : "starforest's default";
  PetscBool         ascii;
  PetscViewerFormat format;
  FILE             *out;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  if (!ascii) PetscFunctionReturn(0);
  if (s->nlayers) PetscCallStf(stf_get_type(s->layers[0], &type));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  starforest type: %s\n", type));
  if (s->nlayers > 1) PetscCall(PetscViewerASCIIPrintf(viewer, "  starforest layers: %d (a leaf slot named %d times)\n", s->nlayers, s->nlayers));
  PetscCall(PetscViewerGetFormat(viewer, &format));
  if (s->nlayers && format == PETSC_VIEWER_ASCII_INFO_DETAIL) {
    /* starforest's own summary of every rank's plan, written by rank 0. */
    PetscCall(PetscViewerFlush(viewer));
    PetscCall(PetscViewerASCIIGetPointer(viewer, &out));
    for (int k = 0; k < s->nlayers; k++) PetscCallStf(stf_view(s->layers[k], out));
    fflush(out);
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode PetscSFDuplicate_Starforest(PetscSF sf, PetscSFDuplicateOption opt, PetscSF newsf)
{
  SF_Starforest *s = (SF_Starforest *)sf->data, *n = (SF_Starforest *)newsf->data;

  PetscFunctionBegin;
  (void)opt;
  PetscCall(PetscStrncpy(n->type, s->type, sizeof(n->type)));
  PetscFunctionReturn(0);
}

/* The ranks whose leaves read this rank's roots, from starforest's plan. */
static PetscErrorCode PetscSFGetLeafRanks_Starforest(PetscSF sf, PetscInt *niranks, const PetscMPIInt **iranks, const PetscInt **ioffset, const PetscInt **irootloc)
{
  SF_Starforest *s = (SF_Starforest *)sf->data;
  int            n;
  const int     *ranks;
  const stf_int *offset, *roots;

  PetscFunctionBegin;
  PetscCheck(s->nlayers == 1, PETSC_COMM_SELF, PETSC_ERR_SUP, "starforest: leaf ranks of a graph that names a leaf slot several times are not supported");
  PetscCallStf(stf_get_leaf_ranks(s->layers[0], &n, &ranks, &offset, &roots));
  if (niranks) *niranks = n;
  if (iranks) *iranks = ranks;
#if STF_PETSC_COPY_INDICES
  if (!s->leaf_offset) {
    PetscCall(PetscMalloc2(n + 1, &s->leaf_offset, offset[n], &s->leaf_roots));
    for (int k = 0; k <= n; k++) s->leaf_offset[k] = offset[k];
    for (stf_int i = 0; i < offset[n]; i++) s->leaf_roots[i] = roots[i];
  }
  if (ioffset) *ioffset = s->leaf_offset;
  if (irootloc) *irootloc = s->leaf_roots;
#else
  if (ioffset) *ioffset = offset;
  if (irootloc) *irootloc = roots;
#endif
  PetscFunctionReturn(0);
}

PetscErrorCode PetscSFCreate_Starforest(PetscSF sf)
{
  SF_Starforest *s;

  PetscFunctionBegin;
  PetscCall(PetscNew(&s));
  sf->data                 = s;
  sf->ops->SetUp           = PetscSFSetUp_Starforest;
  sf->ops->Reset           = PetscSFReset_Starforest;
  sf->ops->Destroy         = PetscSFDestroy_Starforest;
  sf->ops->SetFromOptions  = PetscSFSetFromOptions_Starforest;
  sf->ops->View            = PetscSFView_Starforest;
  sf->ops->Duplicate       = PetscSFDuplicate_Starforest;
  sf->ops->GetLeafRanks    = PetscSFGetLeafRanks_Starforest;
  StfPetscSetOperations(sf);
  PetscFunctionReturn(0);
}
