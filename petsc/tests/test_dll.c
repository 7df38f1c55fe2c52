/* An unmodified PETSc program: it knows nothing of starforest. Run with
 * -dll_append <libstarforest_petsc.so> -sf_type starforest, PETSc loads the
 * plug-in and the scatter below runs on it: the program checks its result,
 * that the type PETSc chose is the one the options name, and that a
 * -sf_starforest_type given was read. */
#include <petscvec.h>

int main(int argc, char **argv)
{
  Vec         x, y;
  IS          from;
  VecScatter  scatter;
  PetscMPIInt rank, size;
  PetscInt    idx[3], lo, bad = 0, badall;
  PetscScalar *a;
  char        type[64] = "", want[64] = "";
  const char *have;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(VecCreateMPI(PETSC_COMM_WORLD, 4, PETSC_DETERMINE, &x));
  PetscCall(VecGetOwnershipRange(x, &lo, NULL));
  PetscCall(VecGetArray(x, &a));
  for (PetscInt i = 0; i < 4; i++) a[i] = lo + i;
  PetscCall(VecRestoreArray(x, &a));
  /* The next rank's first entry, this rank's last, and the previous rank's second. */
  idx[0] = (lo + 4) % (4 * size);
  idx[1] = lo + 3;
  idx[2] = (lo + 4 * size - 3) % (4 * size);
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, 3, idx, PETSC_COPY_VALUES, &from));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 3, &y));
  PetscCall(VecScatterCreate(x, from, y, NULL, &scatter));
  PetscCall(VecScatterBegin(scatter, x, y, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(scatter, x, y, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecGetArray(y, &a));
  for (PetscInt i = 0; i < 3; i++) bad += a[i] != (PetscScalar)idx[i];
  PetscCall(VecRestoreArray(y, &a));
  PetscCall(PetscObjectGetType((PetscObject)scatter, &have));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-sf_type", want, sizeof(want), NULL));
  PetscCall(PetscStrncpy(type, have ? have : "(none)", sizeof(type)));
  if (want[0] && strcmp(type, want)) bad++;
  {
    /* A starforest transport named on the command line was read. */
    PetscBool given, used;
    /* Asked first: PetscOptionsHasName counts as a use. The name as stored, without its dash. */
    PetscCall(PetscOptionsUsed(NULL, "sf_starforest_type", &used));
    PetscCall(PetscOptionsHasName(NULL, NULL, "-sf_starforest_type", &given));
    if (given && !used) bad++;
  }
  PetscCallMPI(MPI_Allreduce(&bad, &badall, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "test_dll: scatter on type %s: %s\n", type, badall ? "WRONG" : "right"));
  PetscCall(VecScatterDestroy(&scatter));
  PetscCall(ISDestroy(&from));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(PetscFinalize());
  return badall != 0;
}
