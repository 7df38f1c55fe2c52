/* The PetscSF type "starforest": bcast, reduce and fetch-and-op, begun on
 * the starforest SF and ended by PETSc's keys (kind, unit, buffers). */
#include "sf_starforest.h"
#include <string.h>

/* PETSc's memory type as starforest's: host memory everywhere, CUDA memory
 * where starforest's active device is "cuda"; anything else is refused. */
static PetscErrorCode MemType(PetscMemType m, stf_memtype *out)
{
  const char *device = "host";

  PetscFunctionBegin;
  if (PetscMemTypeHost(m)) {
    *out = STF_MEMTYPE_HOST;
    PetscFunctionReturn(0);
  }
  PetscCallStf(stf_device_get_name(&device));
  PetscCheck((m == PETSC_MEMTYPE_CUDA || m == PETSC_MEMTYPE_NVSHMEM) && !strcmp(device, "cuda"), PETSC_COMM_SELF, PETSC_ERR_SUP,
             "starforest: data in %s memory, but starforest's active device is \"%s\" (CUDA memory needs -stf_device cuda)",
             PetscMemTypeToString(m), device);
  *out = STF_MEMTYPE_DEVICE;
  PetscFunctionReturn(0);
}

/* A record for a new operation: a spare one, so that steady state allocates nothing. */
static PetscErrorCode NewRecord(SF_Starforest *s, StfPetscKind kind, MPI_Datatype unit, const void *root, const void *leaf, const void *update, StfPetscOp **out)
{
  StfPetscOp *op = s->spare;

  PetscFunctionBegin;
  if (op) s->spare = op->next;
  else PetscCall(PetscNew(&op));
  op->kind   = kind;
  op->unit   = unit;
  op->root   = root;
  op->leaf   = leaf;
  op->update = update;
  op->req    = NULL;
  op->next   = NULL;
  *out       = op;
  PetscFunctionReturn(0);
}

static void Recycle(SF_Starforest *s, StfPetscOp *op)
{
  op->next = s->spare;
  s->spare = op;
}

/* Begun: in flight, after those begun before it. */
static void Enqueue(SF_Starforest *s, StfPetscOp *op)
{
  StfPetscOp **tail = &s->inflight;
  while (*tail) tail = &(*tail)->next;
  *tail = op;
}

static PetscBool SameUnit(MPI_Datatype a, MPI_Datatype b)
{
  PetscBool same = (PetscBool)(a == b);
  if (!same && MPIPetsc_Type_compare(a, b, &same)) same = PETSC_FALSE;
  return same;
}

/* Takes the oldest operation in flight with these keys out of the queue. */
static PetscErrorCode Dequeue(PetscSF sf, StfPetscKind kind, MPI_Datatype unit, const void *root, const void *leaf, const void *update, StfPetscOp **out)
{
  static const char *const names[] = {"bcast", "reduce", "fetch-and-op"};
  SF_Starforest           *s       = (SF_Starforest *)sf->data;

  PetscFunctionBegin;
  for (StfPetscOp **p = &s->inflight; *p; p = &(*p)->next) {
    StfPetscOp *op = *p;
    if (op->kind == kind && op->root == root && op->leaf == leaf && op->update == update && SameUnit(op->unit, unit)) {
      *p   = op->next;
      *out = op;
      PetscFunctionReturn(0);
    }
  }
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "starforest: no %s in flight on this PetscSF with this unit and these buffers (end without its begin?)", names[kind]);
}

static int EndOn(stf_sf stf, StfPetscKind kind, stf_request *req)
{
  if (kind == STF_PETSC_BCAST) return stf_bcast_end(stf, req);
  if (kind == STF_PETSC_REDUCE) return stf_reduce_end(stf, req);
  return stf_fetch_and_op_end(stf, req);
}

/* Ends an operation: its record is recycled whether the end succeeds or not
 * (a failed end still ends the request). */
static PetscErrorCode End(PetscSF sf, StfPetscKind kind, MPI_Datatype unit, const void *root, const void *leaf, const void *update)
{
  SF_Starforest *s = (SF_Starforest *)sf->data;
  StfPetscOp    *op;
  int            err;

  PetscFunctionBegin;
  PetscCall(Dequeue(sf, kind, unit, root, leaf, update, &op));
  err = EndOn(op->stf, kind, &op->req);
  Recycle(s, op);
  PetscCallStf(err);
  PetscFunctionReturn(0);
}

/* Begins an operation on every layer: the layers before the last run to
 * their end here (one layer, as nearly always: nothing waits). */
static int BeginLayers(SF_Starforest *s, StfPetscOp *op, MPI_Op mop, stf_memtype rm, stf_memtype lm)
{
  int err = STF_SUCCESS;
  for (int k = 0; !err && k < s->nlayers; k++) {
    op->stf = s->layers[k];
    if (op->kind == STF_PETSC_BCAST) err = stf_bcast_begin_mem(op->stf, op->unit, rm, op->root, lm, (void *)op->leaf, mop, &op->req);
    else if (op->kind == STF_PETSC_REDUCE) err = stf_reduce_begin_mem(op->stf, op->unit, lm, op->leaf, rm, (void *)op->root, mop, &op->req);
    else err = stf_fetch_and_op_begin(op->stf, op->unit, (void *)op->root, op->leaf, (void *)op->update, mop, &op->req);
    if (!err && k + 1 < s->nlayers) err = EndOn(op->stf, op->kind, &op->req);
  }
  return err;
}

/* A new operation: its record queued once every layer has begun, or
 * recycled when one failed. */
static PetscErrorCode Begin(PetscSF sf, StfPetscKind kind, MPI_Datatype unit, PetscMemType rootmtype, const void *root, PetscMemType leafmtype, const void *leaf, const void *update, MPI_Op mop)
{
  SF_Starforest *s  = (SF_Starforest *)sf->data;
  StfPetscOp    *op = NULL;
  stf_memtype    rm, lm;
  int            err;

  PetscFunctionBegin;
  PetscCheck(s->nlayers > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "starforest: the PetscSF is not set up as type starforest (its type changed after set-up?)");
  PetscCall(MemType(rootmtype, &rm));
  PetscCall(MemType(leafmtype, &lm));
  PetscCall(NewRecord(s, kind, unit, root, leaf, update, &op));
  err = BeginLayers(s, op, mop, rm, lm);
  if (err) Recycle(s, op);
  PetscCallStf(err);
  Enqueue(s, op);
  PetscFunctionReturn(0);
}

static PetscErrorCode PetscSFBcastBegin_Starforest(PetscSF sf, MPI_Datatype unit, PetscMemType rootmtype, const void *rootdata, PetscMemType leafmtype, void *leafdata, MPI_Op op)
{
  PetscFunctionBegin;
  PetscCall(Begin(sf, STF_PETSC_BCAST, unit, rootmtype, rootdata, leafmtype, leafdata, NULL, op));
  PetscFunctionReturn(0);
}

static PetscErrorCode PetscSFBcastEnd_Starforest(PetscSF sf, MPI_Datatype unit, const void *rootdata, void *leafdata, MPI_Op op)
{
  PetscFunctionBegin;
  (void)op;
  PetscCall(End(sf, STF_PETSC_BCAST, unit, rootdata, leafdata, NULL));
  PetscFunctionReturn(0);
}

static PetscErrorCode PetscSFReduceBegin_Starforest(PetscSF sf, MPI_Datatype unit, PetscMemType leafmtype, const void *leafdata, PetscMemType rootmtype, void *rootdata, MPI_Op op)
{
  PetscFunctionBegin;
  PetscCall(Begin(sf, STF_PETSC_REDUCE, unit, rootmtype, rootdata, leafmtype, leafdata, NULL, op));
  PetscFunctionReturn(0);
}

static PetscErrorCode PetscSFReduceEnd_Starforest(PetscSF sf, MPI_Datatype unit, const void *leafdata, void *rootdata, MPI_Op op)
{
  PetscFunctionBegin;
  (void)op;
  PetscCall(End(sf, STF_PETSC_REDUCE, unit, rootdata, leafdata, NULL));
  PetscFunctionReturn(0);
}

/* starforest finds the memory type of fetch-and-op data itself (device data
 * is staged through the host); the check refuses what it cannot serve. */
static PetscErrorCode PetscSFFetchAndOpBegin_Starforest(PetscSF sf, MPI_Datatype unit, PetscMemType rootmtype, void *rootdata, PetscMemType leafmtype, const void *leafdata, void *leafupdate, MPI_Op op)
{
  PetscFunctionBegin;
  PetscCall(Begin(sf, STF_PETSC_FETCH, unit, rootmtype, rootdata, leafmtype, leafdata, leafupdate, op));
  PetscFunctionReturn(0);
}

static PetscErrorCode PetscSFFetchAndOpEnd_Starforest(PetscSF sf, MPI_Datatype unit, void *rootdata, const void *leafdata, void *leafupdate, MPI_Op op)
{
  PetscFunctionBegin;
  (void)op;
  PetscCall(End(sf, STF_PETSC_FETCH, unit, rootdata, leafdata, leafupdate));
  PetscFunctionReturn(0);
}

void StfPetscSetOperations(PetscSF sf)
{
  sf->ops->BcastBegin      = PetscSFBcastBegin_Starforest;
  sf->ops->BcastEnd        = PetscSFBcastEnd_Starforest;
  sf->ops->ReduceBegin     = PetscSFReduceBegin_Starforest;
  sf->ops->ReduceEnd       = PetscSFReduceEnd_Starforest;
  sf->ops->FetchAndOpBegin = PetscSFFetchAndOpBegin_Starforest;
  sf->ops->FetchAndOpEnd   = PetscSFFetchAndOpEnd_Starforest;
}

PetscErrorCode StfPetscFreeOperations(PetscSF sf)
{
  SF_Starforest *s = (SF_Starforest *)sf->data;

  PetscFunctionBegin;
  PetscCheck(!s->inflight, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "starforest: the PetscSF is reset or destroyed with an operation still in flight: end it first");
  while (s->spare) {
    StfPetscOp *op = s->spare;
    s->spare       = op->next;
    PetscCall(PetscFree(op));
  }
  PetscFunctionReturn(0);
}
