/* The PetscSF type "starforest" judged by PETSc's own basic type: on the
 * same random graphs (unsorted, sparse leaves, several leaves per root,
 * leaf slots named twice or more),
 * every bcast, reduce and fetch-and-op with several units and ops, and
 * several operations in flight ended out of order, leaf ranks, under each starforest
 * transport; a (unit, op) starforest refuses must fail on every rank as a
 * PETSc error and leave the SF usable; VecScatter, gather through PETSc's
 * multi-SF and an embedded SF run on top of it. Exit 1 on any difference. */
#include <petsc/private/sfimpl.h> /* allow_multi_leaves, as VecScatterCreate sets it */
#include <petscvec.h>
#include <starforest.h>
#include <starforest_petsc.h>

static PetscMPIInt rank, size;
static int         failures;

#define EXPECT(cond, ...) \
  do { \
    if (!(cond)) { \
      failures++; \
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "[%d] FAIL line %d: ", rank, __LINE__)); \
      PetscCall(PetscPrintf(PETSC_COMM_SELF, __VA_ARGS__)); \
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "\n")); \
    } \
  } while (0)

static unsigned long long seed_state;
static PetscInt           Next(PetscInt n)
{
  seed_state = seed_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (PetscInt)((seed_state >> 33) % (unsigned long long)n);
}

typedef struct {
  PetscInt     nroots, nleaves, nslots; /* nslots: leaf buffer length */
  PetscInt    *ilocal;
  PetscSFNode *iremote;
} Graph;

static PetscInt RootsOf(PetscMPIInt r, int trial) { return 2 + (r * 5 + trial) % 6; }

/* Leaves at a random subset of 2n+1 slots, in random order; roots anywhere. */
static PetscErrorCode RandomGraph(int trial, Graph *g)
{
  PetscInt *slots;

  PetscFunctionBegin;
  seed_state = 1000003ULL * (unsigned long long)(rank + 1) + (unsigned long long)trial;
  g->nroots  = RootsOf(rank, trial);
  g->nleaves = trial % 5 == 4 && rank == 0 ? 0 : Next(12);
  g->nslots  = 2 * g->nleaves + 1;
  PetscCall(PetscMalloc1(g->nslots, &slots));
  PetscCall(PetscMalloc1(g->nleaves, &g->ilocal));
  PetscCall(PetscMalloc1(g->nleaves, &g->iremote));
  for (PetscInt i = 0; i < g->nslots; i++) slots[i] = i;
  for (PetscInt i = g->nslots - 1; i > 0; i--) {
    PetscInt j = Next(i + 1), t = slots[i];
    slots[i] = slots[j];
    slots[j] = t;
  }
  for (PetscInt i = 0; i < g->nleaves; i++) {
    PetscMPIInt owner   = (PetscMPIInt)Next(size);
    /* Trial 3 names some slots twice or more, as PETSc allows. */
    g->ilocal[i]        = trial == 3 ? slots[Next(1 + g->nleaves / 2)] : slots[i];
    g->iremote[i].rank  = owner;
    g->iremote[i].index = Next(RootsOf(owner, trial));
  }
  PetscCall(PetscFree(slots));
  PetscFunctionReturn(0);
}

static PetscErrorCode FreeGraph(Graph *g)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(g->ilocal));
  PetscCall(PetscFree(g->iremote));
  PetscFunctionReturn(0);
}

static PetscErrorCode MakeSF(const char *type, const Graph *g, PetscSF *sf)
{
  PetscFunctionBegin;
  PetscCall(PetscSFCreate(PETSC_COMM_WORLD, sf));
  PetscCall(PetscSFSetType(*sf, type));
  PetscCall(PetscSFSetFromOptions(*sf)); /* -sf_starforest_type, set by main */
  (*sf)->allow_multi_leaves = PETSC_TRUE;
  PetscCall(PetscSFSetGraph(*sf, g->nroots, g->nleaves, g->ilocal, PETSC_COPY_VALUES, g->iremote, PETSC_COPY_VALUES));
  PetscCall(PetscSFSetUp(*sf));
  PetscFunctionReturn(0);
}

/* A unit: an MPI datatype of `count` ints or doubles. */
typedef struct {
  const char  *name;
  MPI_Datatype type;
  int          count, is_double;
  MPI_Op       ops[5];
} Unit;

static size_t UnitBytes(const Unit *u) { return (size_t)u->count * (u->is_double ? sizeof(double) : sizeof(int)); }

/* Small positive integers (also as doubles): sums, products and maxima are
 * exact, whatever the order of the contributions. */
static void Fill(const Unit *u, void *buf, PetscInt n, int salt)
{
  for (PetscInt i = 0; i < n * u->count; i++) {
    int v = 1 + (int)((rank * 31 + i * 7 + salt * 13) % 3);
    if (u->is_double) ((double *)buf)[i] = v;
    else ((int *)buf)[i] = v;
  }
}

static const char *OpName(MPI_Op op)
{
  if (op == MPI_REPLACE) return "REPLACE";
  if (op == MPI_SUM) return "SUM";
  if (op == MPI_MAX) return "MAX";
  if (op == MPI_MIN) return "MIN";
  if (op == MPI_PROD) return "PROD";
  if (op == MPI_BOR) return "BOR";
  if (op == MPI_MAXLOC) return "MAXLOC";
  return "?";
}

typedef enum { BCAST, REDUCE, FETCH } Kind;

/* One operation on sf with fresh buffers; the result bytes in *out
 * (root or leaf side as the kind has it; fetch: roots then, over each
 * root's leaves, the sum and maximum of the fetched values). */
static PetscErrorCode RunOne(PetscSF sf, PetscSF oracle, const Graph *g, const Unit *u, MPI_Op op, Kind kind, char **out, size_t *bytes)
{
  size_t ub = UnitBytes(u);
  char  *root, *leaf, *update;

  PetscFunctionBegin;
  PetscCall(PetscCalloc1(ub * (size_t)(g->nroots + 1), &root));
  PetscCall(PetscCalloc1(ub * (size_t)g->nslots, &leaf));
  PetscCall(PetscCalloc1(ub * (size_t)g->nslots, &update));
  Fill(u, root, g->nroots, 1);
  Fill(u, leaf, g->nslots, 2);
  if (kind == BCAST) {
    PetscCall(PetscSFBcastBegin(sf, u->type, root, leaf, op));
    PetscCall(PetscSFBcastEnd(sf, u->type, root, leaf, op));
    *out   = leaf;
    *bytes = ub * (size_t)g->nslots;
    PetscCall(PetscFree(root));
  } else if (kind == REDUCE) {
    PetscCall(PetscSFReduceBegin(sf, u->type, leaf, root, op));
    PetscCall(PetscSFReduceEnd(sf, u->type, leaf, root, op));
    *out   = root;
    *bytes = ub * (size_t)g->nroots;
    PetscCall(PetscFree(leaf));
  } else {
    /* Contributions of 1: the values fetched at one root's leaves are then
     * init, init+1, ..., whatever the order; their sum and maximum (reduced
     * to the roots by the oracle) do not depend on it. */
    int *ones, *sum, *max;
    PetscCall(PetscMalloc1(g->nslots, &ones));
    for (PetscInt i = 0; i < g->nslots; i++) ones[i] = 1;
    PetscCall(PetscSFFetchAndOpBegin(sf, MPI_INT, root, ones, update, op));
    PetscCall(PetscSFFetchAndOpEnd(sf, MPI_INT, root, ones, update, op));
    PetscCall(PetscCalloc2(g->nroots + 1, &sum, g->nroots + 1, &max));
    PetscCall(PetscSFReduceBegin(oracle, MPI_INT, update, sum, MPI_SUM));
    PetscCall(PetscSFReduceEnd(oracle, MPI_INT, update, sum, MPI_SUM));
    PetscCall(PetscSFReduceBegin(oracle, MPI_INT, update, max, MPI_MAX));
    PetscCall(PetscSFReduceEnd(oracle, MPI_INT, update, max, MPI_MAX));
    *bytes = 3 * sizeof(int) * (size_t)g->nroots;
    PetscCall(PetscMalloc1(*bytes + 1, out));
    PetscCall(PetscMemcpy(*out, root, sizeof(int) * (size_t)g->nroots));
    PetscCall(PetscMemcpy(*out + sizeof(int) * (size_t)g->nroots, sum, sizeof(int) * (size_t)g->nroots));
    PetscCall(PetscMemcpy(*out + 2 * sizeof(int) * (size_t)g->nroots, max, sizeof(int) * (size_t)g->nroots));
    PetscCall(PetscFree2(sum, max));
    PetscCall(PetscFree(ones));
    PetscCall(PetscFree(root));
    PetscCall(PetscFree(leaf));
  }
  PetscCall(PetscFree(update));
  PetscFunctionReturn(0);
}

static PetscErrorCode CompareOperations(PetscSF sf, PetscSF basic, const Graph *g, const Unit *units, int nunits, PetscBool repeats, const char *stftype)
{
  static const char *const kinds[] = {"bcast", "reduce", "fetch-and-op"};

  PetscFunctionBegin;
  for (int k = 0; k < nunits; k++) {
    const Unit *u = &units[k];
    for (int o = 0; o < 5 && u->ops[o] != MPI_OP_NULL; o++) {
      for (Kind kind = BCAST; kind <= FETCH; kind++) {
        char  *got, *want;
        size_t gotn, wantn;
        if (kind == FETCH && (u->type != MPI_INT || (u->ops[o] != MPI_SUM))) continue;
        /* Which of a root's leaves a reduce with REPLACE keeps is unspecified,
         * and which root a bcast with REPLACE leaves in a repeated slot. */
        if (u->ops[o] == MPI_REPLACE && (kind == REDUCE || repeats)) continue;
        PetscCall(RunOne(sf, basic, g, u, u->ops[o], kind, &got, &gotn));
        PetscCall(RunOne(basic, basic, g, u, u->ops[o], kind, &want, &wantn));
        /* With repeated slots, which fetched value a slot keeps is open: the roots only. */
        if (kind == FETCH && repeats) gotn = wantn = sizeof(int) * (size_t)g->nroots;
        EXPECT(gotn == wantn && !memcmp(got, want, gotn), "%s: %s of %s with %s differs from PETSc's basic", stftype, kinds[kind], u->name, OpName(u->ops[o]));
        PetscCall(PetscFree(got));
        PetscCall(PetscFree(want));
      }
    }
  }
  PetscFunctionReturn(0);
}

/* Three operations in flight on one SF (two bcasts on different buffers and
 * a reduce), ended in reverse order, against the same sequence on basic.
 * SUM everywhere, so that slots named twice have one right answer. */
static PetscErrorCode CompareInFlight(PetscSF sf, PetscSF basic, const Graph *g, const char *stftype)
{
  int *r1, *r2, *l1, *l2, *r3, *l3, *w[6];

  PetscFunctionBegin;
  for (int pass = 0; pass < 2; pass++) {
    PetscSF s = pass ? basic : sf;
    PetscCall(PetscCalloc6(g->nroots, &r1, g->nroots, &r2, g->nslots, &l1, g->nslots, &l2, g->nroots, &r3, g->nslots, &l3));
    for (PetscInt i = 0; i < g->nroots; i++) r1[i] = 10 * rank + (int)i, r2[i] = -r1[i], r3[i] = 1;
    for (PetscInt i = 0; i < g->nslots; i++) l3[i] = (int)i + rank;
    PetscCall(PetscSFBcastBegin(s, MPI_INT, r1, l1, MPI_SUM));
    PetscCall(PetscSFBcastBegin(s, MPI_INT, r2, l2, MPI_SUM));
    PetscCall(PetscSFReduceBegin(s, MPI_INT, l3, r3, MPI_SUM));
    PetscCall(PetscSFReduceEnd(s, MPI_INT, l3, r3, MPI_SUM));
    PetscCall(PetscSFBcastEnd(s, MPI_INT, r2, l2, MPI_SUM));
    PetscCall(PetscSFBcastEnd(s, MPI_INT, r1, l1, MPI_SUM));
    if (!pass) {
      w[0] = r1, w[1] = r2, w[2] = l1, w[3] = l2, w[4] = r3, w[5] = l3;
    } else {
      EXPECT(!memcmp(w[2], l1, sizeof(int) * (size_t)g->nslots) && !memcmp(w[3], l2, sizeof(int) * (size_t)g->nslots) && !memcmp(w[4], r3, sizeof(int) * (size_t)g->nroots),
             "%s: operations in flight together differ from PETSc's basic", stftype);
      PetscCall(PetscFree6(w[0], w[1], w[2], w[3], w[4], w[5]));
      PetscCall(PetscFree6(r1, r2, l1, l2, r3, l3));
    }
  }
  PetscFunctionReturn(0);
}

/* The leaf ranks (who reads this rank's roots, and which roots) against
 * basic's, as sets of (rank, root) pairs: the order is the type's own. */
static PetscErrorCode CompareLeafRanks(PetscSF sf, PetscSF basic, const char *stftype)
{
  PetscInt           n[2], *pairs[2];
  const PetscMPIInt *ranks;
  const PetscInt    *offset, *roots;

  PetscFunctionBegin;
  for (int p = 0; p < 2; p++) {
    PetscCall(PetscSFGetLeafRanks(p ? basic : sf, &n[p], &ranks, &offset, &roots));
    PetscCall(PetscMalloc1(offset[n[p]] + 1, &pairs[p]));
    for (PetscInt k = 0; k < n[p]; k++)
      for (PetscInt i = offset[k]; i < offset[k + 1]; i++) pairs[p][i] = ranks[k] * 1000 + roots[i];
    PetscCall(PetscSortInt(offset[n[p]], pairs[p]));
    n[p] = offset[n[p]];
  }
  EXPECT(n[0] == n[1] && !memcmp(pairs[0], pairs[1], sizeof(PetscInt) * (size_t)n[0]), "%s: leaf ranks differ from PETSc's basic", stftype);
  PetscCall(PetscFree(pairs[0]));
  PetscCall(PetscFree(pairs[1]));
  PetscFunctionReturn(0);
}

/* MPI_BAND is not defined for doubles: starforest refuses it before any
 * message, on every rank, and the SF then works. */
static PetscErrorCode CheckRefusal(PetscSF sf, const Graph *g, const char *stftype)
{
  double        *root, *leaf;
  PetscErrorCode err;
  int            failed, everywhere;
  const char    *text;
  char          *specific;

  PetscFunctionBegin;
  PetscCall(PetscCalloc2(g->nroots, &root, g->nslots, &leaf));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  err = PetscSFBcastBegin(sf, MPI_DOUBLE, root, leaf, MPI_BAND);
  PetscCall(PetscPopErrorHandler());
  failed = err != 0;
  PetscCallMPI(MPI_Allreduce(&failed, &everywhere, 1, MPI_INT, MPI_MIN, PETSC_COMM_WORLD));
  EXPECT(everywhere, "%s: MPI_BAND on doubles did not fail on every rank", stftype);
  if (failed) {
    PetscCall(PetscErrorMessage(err, &text, &specific));
    EXPECT(err == PETSC_ERR_SUP && specific && strstr(specific, "starforest"), "%s: error %d (%s) does not carry starforest's message", stftype, (int)err, specific ? specific : "");
  }
  for (PetscInt i = 0; i < g->nroots; i++) root[i] = rank + 0.5;
  PetscCall(PetscSFBcastBegin(sf, MPI_DOUBLE, root, leaf, MPI_REPLACE));
  PetscCall(PetscSFBcastEnd(sf, MPI_DOUBLE, root, leaf, MPI_REPLACE));
  for (PetscInt i = 0; i < g->nleaves; i++) EXPECT(leaf[g->ilocal[i]] == g->iremote[i].rank + 0.5, "%s: bcast after a refused one is wrong", stftype);
  PetscCall(PetscFree2(root, leaf));
  PetscFunctionReturn(0);
}

/* PETSc's generic gather (through its multi-SF) and embedded root SF, built
 * on starforest's operations, against the same on basic. */
static PetscErrorCode CompareGeneric(PetscSF sf, PetscSF basic, const Graph *g, const char *stftype)
{
  const PetscInt *degree[2];
  PetscInt        nmulti = 0, selected[8], nselected = 0;
  int            *leaf, *multi[2];
  PetscSF         esf[2];

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(g->nslots, &leaf));
  for (PetscInt i = 0; i < g->nslots; i++) leaf[i] = 1000 * rank + (int)i;
  for (int pass = 0; pass < 2; pass++) {
    PetscSF s = pass ? basic : sf;
    PetscCall(PetscSFComputeDegreeBegin(s, &degree[pass]));
    PetscCall(PetscSFComputeDegreeEnd(s, &degree[pass]));
    nmulti = 0;
    for (PetscInt r = 0; r < g->nroots; r++) nmulti += degree[pass][r];
    PetscCall(PetscCalloc1(nmulti + 1, &multi[pass]));
    PetscCall(PetscSFGatherBegin(s, MPI_INT, leaf, multi[pass]));
    PetscCall(PetscSFGatherEnd(s, MPI_INT, leaf, multi[pass]));
  }
  EXPECT(!memcmp(degree[0], degree[1], sizeof(PetscInt) * (size_t)g->nroots), "%s: degrees differ from PETSc's basic", stftype);
  /* The order of one root's multi-roots among leaves of one rank is the
   * order in which a fetch-and-op applies them, which PETSc leaves open:
   * compare each root's values as a set. */
  for (PetscInt r = 0, at = 0; r < g->nroots; at += degree[0][r], r++) {
    PetscCall(PetscSortMPIInt((PetscInt)degree[0][r], multi[0] + at));
    PetscCall(PetscSortMPIInt((PetscInt)degree[0][r], multi[1] + at));
  }
  EXPECT(!memcmp(multi[0], multi[1], sizeof(int) * (size_t)nmulti), "%s: gather differs from PETSc's basic", stftype);
  PetscCall(PetscFree(multi[0]));
  PetscCall(PetscFree(multi[1]));
  PetscCall(PetscFree(leaf));

  for (PetscInt r = 0; r < g->nroots && nselected < 8; r += 2) selected[nselected++] = r;
  PetscCall(PetscSFCreateEmbeddedRootSF(sf, nselected, selected, &esf[0]));
  PetscCall(PetscSFCreateEmbeddedRootSF(basic, nselected, selected, &esf[1]));
  {
    PetscInt           n[2], nl[2];
    const PetscInt    *il[2];
    const PetscSFNode *ir[2];
    PetscBool          same = PETSC_TRUE;
    for (int p = 0; p < 2; p++) PetscCall(PetscSFGetGraph(esf[p], &n[p], &nl[p], &il[p], &ir[p]));
    same = (PetscBool)(n[0] == n[1] && nl[0] == nl[1]);
    for (PetscInt i = 0; same && i < nl[0]; i++) {
      same = (PetscBool)((il[0] ? il[0][i] : i) == (il[1] ? il[1][i] : i) && ir[0][i].rank == ir[1][i].rank && ir[0][i].index == ir[1][i].index);
    }
    EXPECT(same, "%s: embedded root SF differs from PETSc's basic", stftype);
  }
  PetscCall(PetscSFDestroy(&esf[0]));
  PetscCall(PetscSFDestroy(&esf[1]));
  PetscFunctionReturn(0);
}

/* A VecScatter made with -sf_type starforest in the options database: a
 * random subset of the global vector, in random order, into a local one;
 * then added back with the reverse scatter. */
static PetscErrorCode CheckVecScatter(const char *stftype)
{
  const PetscInt nlocal = 5, N = nlocal * size;
  Vec            x, y;
  IS             from;
  VecScatter     scatter;
  PetscInt      *idx, n, lo;
  PetscBool      is_stf;
  PetscScalar   *a;
  const PetscScalar *ya;

  PetscFunctionBegin;
  PetscCall(VecCreateMPI(PETSC_COMM_WORLD, nlocal, N, &x));
  PetscCall(VecGetOwnershipRange(x, &lo, NULL));
  PetscCall(VecGetArray(x, &a));
  for (PetscInt i = 0; i < nlocal; i++) a[i] = lo + i + 0.5;
  PetscCall(VecRestoreArray(x, &a));
  seed_state = 77ULL + (unsigned long long)rank;
  n          = 1 + Next(N);
  PetscCall(PetscMalloc1(n, &idx));
  for (PetscInt i = 0; i < n; i++) idx[i] = Next(N);
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, n, &y));
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, n, idx, PETSC_COPY_VALUES, &from));
  PetscCall(VecScatterCreate(x, from, y, NULL, &scatter));
  PetscCall(PetscObjectTypeCompare((PetscObject)scatter, PETSCSFSTARFOREST, &is_stf));
  EXPECT(is_stf, "%s: the VecScatter is not of type starforest", stftype);
  PetscCall(VecScatterBegin(scatter, x, y, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(scatter, x, y, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecGetArrayRead(y, &ya));
  for (PetscInt i = 0; i < n; i++) EXPECT(ya[i] == idx[i] + 0.5, "%s: VecScatter forward entry %d", stftype, (int)i);
  PetscCall(VecRestoreArrayRead(y, &ya));
  /* Reverse with ADD: each entry of x gains its value once per time it was
   * named, summed over ranks. */
  PetscCall(VecScatterBegin(scatter, y, x, ADD_VALUES, SCATTER_REVERSE));
  PetscCall(VecScatterEnd(scatter, y, x, ADD_VALUES, SCATTER_REVERSE));
  {
    PetscInt *count, *total;
    PetscCall(PetscCalloc2(N, &count, N, &total));
    for (PetscInt i = 0; i < n; i++) count[idx[i]]++;
    PetscCallMPI(MPI_Allreduce(count, total, (PetscMPIInt)N, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
    PetscCall(VecGetArray(x, &a));
    for (PetscInt i = 0; i < nlocal; i++) EXPECT(a[i] == (lo + i + 0.5) * (1 + total[lo + i]), "%s: VecScatter reverse ADD entry %d", stftype, (int)(lo + i));
    PetscCall(VecRestoreArray(x, &a));
    PetscCall(PetscFree2(count, total));
  }
  PetscCall(VecScatterDestroy(&scatter));
  PetscCall(ISDestroy(&from));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(PetscFree(idx));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  /* 3step needs nodes: emulated ones of 2 ranks. */
  const char *types[][2] = {
    {"basic", ""}, {"neighbor", ""}, {"putsignal", ""}, {"3step", "-stf_ranks_per_node 2"}, {"auto", ""},
  };
  MPI_Datatype triple;
  int          total;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(stf_petsc_register());
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCallMPI(MPI_Type_contiguous(3, MPI_DOUBLE, &triple));
  PetscCallMPI(MPI_Type_commit(&triple));
  {
    const Unit units[] = {
      {"int", MPI_INT, 1, 0, {MPI_REPLACE, MPI_SUM, MPI_MAX, MPI_MIN, MPI_BOR}},
      {"double", MPI_DOUBLE, 1, 1, {MPI_REPLACE, MPI_SUM, MPI_PROD, MPI_MAX, MPI_OP_NULL}},
      {"2int", MPI_2INT, 2, 0, {MPI_REPLACE, MPI_MAXLOC, MPI_OP_NULL}},
      {"3 doubles", triple, 3, 1, {MPI_REPLACE, MPI_SUM, MPI_OP_NULL}},
    };
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
      const char *stftype = types[t][0];
      PetscCall(PetscOptionsSetValue(NULL, "-sf_starforest_type", stftype));
      /* starforest's own options: the defaults of every SF made from now on. */
      if (stf_set_options(types[t][1][0] ? types[t][1] : "-stf_ranks_per_node 0")) SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "stf_set_options: %s", stf_last_error_message());
      for (int trial = 0; trial < 5; trial++) {
        Graph   g;
        PetscSF sf, basic;
        PetscCall(RandomGraph(trial, &g));
        PetscCall(MakeSF(PETSCSFSTARFOREST, &g, &sf));
        PetscCall(MakeSF(PETSCSFBASIC, &g, &basic));
        PetscCall(CompareOperations(sf, basic, &g, units, 4, (PetscBool)(trial == 3), stftype));
        PetscCall(CompareInFlight(sf, basic, &g, stftype));
        if (trial != 3) {
          PetscCall(CompareGeneric(sf, basic, &g, stftype));
          PetscCall(CompareLeafRanks(sf, basic, stftype));
        }
        if (trial == 0) PetscCall(CheckRefusal(sf, &g, stftype));
        PetscCall(PetscSFDestroy(&sf));
        PetscCall(PetscSFDestroy(&basic));
        PetscCall(FreeGraph(&g));
      }
      PetscCall(PetscOptionsSetValue(NULL, "-sf_type", PETSCSFSTARFOREST));
      PetscCall(CheckVecScatter(stftype));
      PetscCall(PetscOptionsClearValue(NULL, "-sf_type"));
    }
  }
  PetscCallMPI(MPI_Type_free(&triple));
  PetscCallMPI(MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, PETSC_COMM_WORLD));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "test_plugin: %d failures on %d ranks\n", total, size));
  PetscCall(PetscFinalize());
  return total != 0;
}
