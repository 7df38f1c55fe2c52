/* Registration of the PetscSF type "starforest": by PETSc when it loads the
 * library (-dll_append), or by the program (stf_petsc_register). */
#include "sf_starforest.h"
#include <starforest_petsc.h>
#include <string.h>

/* starforest's -stf_* options on PETSc's command line become its defaults,
 * and PETSc counts them as used (no "options you set that were not used"). */
static PetscErrorCode ReadCommandLine(void)
{
  int    argc;
  char **argv;

  PetscFunctionBegin;
  PetscCall(PetscGetArgs(&argc, &argv));
  PetscCallStf(stf_set_options_from_args(argc, argv));
  for (int i = 1; i < argc; i++) {
    PetscBool set;
    if (!strncmp(argv[i], "-stf_", 5)) PetscCall(PetscOptionsHasName(NULL, NULL, argv[i], &set));
  }
  PetscFunctionReturn(0);
}

static PetscBool registered = PETSC_FALSE;

/* PetscFinalize drops PETSc's list of SF types: a later PetscInitialize
 * registers the type again. */
static PetscErrorCode Unregistered(void)
{
  registered = PETSC_FALSE;
  return 0;
}

PetscErrorCode stf_petsc_register(void)
{
  PetscFunctionBegin;
  if (registered) PetscFunctionReturn(0);
  PetscCall(PetscSFRegister(PETSCSFSTARFOREST, PetscSFCreate_Starforest));
  PetscCall(ReadCommandLine());
  PetscCall(PetscRegisterFinalize(Unregistered));
  registered = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* The name PETSc looks for in a library it loads: PetscDLLibraryRegister_
 * followed by the file's name without "lib" and the suffix. */
PETSC_EXTERN PetscErrorCode PetscDLLibraryRegister_starforest_petsc(void)
{
  return stf_petsc_register();
}
